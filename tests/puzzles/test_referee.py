"""The turn machine, driven synchronously with no bus: order, limits, notices, the end."""

import dataclasses

import msgspec
import pytest

from bus import ChannelSpec
from engine import PolicyFactory
from puzzles import GAMES, ProtocolError, Referee, Say, Step, Turn
from tests.helpers import Counter, play, spec


def test_round_robin_asks_each_role_in_order_and_stops_at_the_turn_limit():
    referee = Referee(Counter(max_turns=2))
    asked = list(referee.start())
    while asked:
        role = asked.pop(0)
        following = referee.play(Turn(turn=referee.turn, role=role, actions=(1,)))
        asked += following.ask
        if following.over:
            break
    assert [s[0] for s in referee.state.steps] == ["a", "b", "c", "a", "b", "c"]
    result = referee.result()
    assert (result.outcome, result.turns, result.solved_turn, result.scores) == ("failure", 2, None, {"total": 6.0})
    assert [(t.turn, t.role, t.applied, t.progress) for t in result.turn_log][:4] == [(1, "a", 1, 1), (1, "b", 1, 2), (1, "c", 1, 3), (2, "a", 1, 4)]


def test_the_game_ends_mid_round_as_soon_as_it_is_done():
    referee = Referee(Counter(goal=3))
    referee.start()
    assert referee.play(Turn(turn=1, role="a", actions=(2,))).ask == ("b",)
    following = referee.play(Turn(turn=1, role="b", actions=(1,)))
    assert following.over and following.say == (Say("b added 1"),)
    assert (referee.result().outcome, referee.result().solved_turn) == ("success", 1)
    with pytest.raises(ProtocolError):
        referee.play(Turn(turn=1, role="c"))


def test_simultaneous_rounds_apply_together_in_roster_order():
    referee = Referee(Counter(max_turns=5), turn_order="simultaneous")
    assert referee.start() == ("a", "b", "c")
    assert referee.play(Turn(turn=1, role="c", actions=(3,))).ask == ()
    assert referee.play(Turn(turn=1, role="a", actions=(1,))).ask == ()
    with pytest.raises(ProtocolError, match="second act"):
        referee.play(Turn(turn=1, role="a"))
    following = referee.play(Turn(turn=1, role="b", actions=(2,)))
    assert following.ask == ("a", "b", "c") and referee.turn == 2
    assert [s[0] for s in referee.state.steps] == ["a", "b", "c"]
    assert [s.text for s in following.say] == ["a added 1", "b added 2", "c added 3"]


def test_action_limit_format_errors_and_rejections_become_notices():
    referee = Referee(Counter(), max_actions=2)
    referee.start()
    referee.play(Turn(turn=1, role="a", actions=(1, -1, 5, 7)))
    log = referee.log[-1]
    assert log.applied == 1 and [r.reason for r in log.rejected] == ["over the limit of 2 actions per turn"] * 2 + ["must be positive"]
    referee.play(Turn(turn=1, role="b", format_error="no JSON object found", actions=(50,)))
    assert referee.state.total == 1  # nothing of an unreadable reply is applied
    assert referee.notices("a")[-1] == "Your action -1 was rejected: must be positive."
    assert referee.notices("b") == ("Your last reply could not be read (no JSON object found); nothing was applied.",)
    assert referee.notices("b") == ()  # told once
    with pytest.raises(ProtocolError, match="expected c"):
        referee.play(Turn(turn=1, role="a"))


def test_what_a_game_says_goes_through_the_channels():
    """A game whose step tells Bob what Alice wrote: Bob hears it as Alice, cut by the budget."""
    game = GAMES["asympuzl"]

    def new(params, seed, roles, max_turns):
        state = game.rules.new(params, seed, roles, max_turns)
        step = state.step

        def telling(role, actions):
            done = step(role, actions)
            return Step(done.applied, done.rejected, (Say(f"{role} wrote {done.applied} pieces"),))

        state.step = telling
        return state

    heard = []

    class Listening(PolicyFactory):
        def make(self, name, role, seed, game):
            inner = super().make(name, role, seed, game)

            class Policy:
                async def reply(self, context):
                    heard.append((role, [(l.sender, l.text) for l in context.conversation]))
                    return await inner.reply(context)

            return Policy()

    telling = {"asympuzl": dataclasses.replace(game, rules=dataclasses.replace(game.rules, new=new))}
    record = play(spec(0, alice="ignore", max_turns=2, channel=ChannelSpec(max_chars=12)), Listening(), games=telling)
    assert record.error is None
    bob_first = heard[1]
    assert bob_first[0] == "bob" and ("alice", "alice wrote ") in bob_first[1]
    assert any(d.sender == "alice" and d.fate == "truncated" and d.sent_chars == len("alice wrote 0 pieces") for d in record.channel_log)


def test_a_reply_that_could_not_be_read_is_stepped_with_no_actions():
    """A game that counts steps sees the lost turn (the actions of an unreadable reply never reach it)."""
    referee = Referee(Counter())
    referee.start()
    referee.play(Turn(turn=1, role="a", format_error="too long", actions=(5,)))
    assert referee.state.steps == [("a", ())] and referee.state.total == 0


class Picky(Counter):
    """Asks for three candidates and plays the first whose actions are all positive (else the last)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.asked = []

    def candidates_wanted(self, role):
        return 3 if role != "c" else 1

    def choose(self, role, candidates):
        self.asked.append((role, self.total, candidates))
        good = [i for i, c in enumerate(candidates) if c and all(a > 0 for a in c)]
        return good[0] if good else len(candidates) - 1


def test_best_of_n_the_game_chooses_on_the_state_the_turn_will_find_and_the_log_keeps_the_choice():
    referee = Referee(Picky())
    referee.start()
    assert [referee.candidates_wanted(r) for r in ("a", "b", "c")] == [3, 3, 1]
    assert referee.candidates_wanted("a") == 3 and Referee(Counter()).candidates_wanted("a") == 1
    with pytest.raises(ProtocolError, match="expected a"):
        referee.choose("b", 1, ((1,),))
    with pytest.raises(ProtocolError, match="turn 2"):
        referee.choose("a", 2, ((1,),))
    with pytest.raises(ProtocolError, match="no candidates"):
        referee.choose("a", 1, ())
    index = referee.choose("a", 1, ((-1,), (), (4, 2)))
    assert index == 2 and referee.state.asked == [("a", 0, ((-1,), (), (4, 2)))]
    referee.play(Turn(turn=1, role="a", actions=(4, 2)))
    referee.play(Turn(turn=1, role="b", actions=(1,)))  # b did not sample: nothing chosen
    first, second = referee.log
    assert (first.candidates, first.chosen) == (3, 2)
    assert second.candidates is msgspec.UNSET and second.chosen is msgspec.UNSET


def test_a_choice_out_of_range_is_a_protocol_error():
    class Wild(Picky):
        def choose(self, role, candidates):
            return len(candidates)

    referee = Referee(Wild())
    referee.start()
    with pytest.raises(ProtocolError, match="candidate 2 of 2"):
        referee.choose("a", 1, ((1,), (2,)))
