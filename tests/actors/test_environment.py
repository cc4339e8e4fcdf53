"""The Environment actor, alone on a bus with a toy game: it asks each role in turn through the
feedback address, sends what the game says through the channels, chooses among candidates, and ends
the game with GameOver."""

import anyio
import pytest

from actors.base import GAME_TOPIC, ActorFailed
from actors.environment import FEEDBACK, Environment
from bus import Act, Bus, Candidates, Chat, Chosen, GameOver, TurnStart
from puzzles.referee import ProtocolError, Referee
from tests.helpers import Counter, drain


class Tally(Counter):
    """The referee tests' counting game for two roles, one turn, each view naming its role."""

    def __init__(self, roles=("a", "b"), max_turns=1, goal=100):
        super().__init__(roles, max_turns, goal)

    def view(self, role):
        return {"total": self.total, "me": role}


class Picking(Tally):
    """Asks ``b`` for three candidates and plays the one that adds the most."""

    def candidates_wanted(self, role):
        return 3 if role == "b" else 1

    def choose(self, role, candidates):
        return max(range(len(candidates)), key=lambda i: sum(candidates[i]))



async def run_environment(state, messages):
    """The Environment of game 5 with ``state``, run through ``messages``; returns it and what the
    feedback address and each role received."""
    bus = Bus()
    inboxes = {address: bus.register(address) for address in (FEEDBACK, *state.roles)}
    bus.subscribe(FEEDBACK, GAME_TOPIC)
    for sender in state.roles:
        for recipient in state.roles:
            if sender != recipient:
                bus.connect(sender, recipient)
    environment = Environment(bus, 5, Referee(state))
    for message in messages:
        await bus.send(environment.address, message)
    with anyio.fail_after(2):
        await environment.run()
    return environment, {address: drain(inbox) for address, inbox in inboxes.items()}


def act(role, *actions, turn=1):
    return Act(game_id=5, turn=turn, role=role, message="", actions=actions)


async def test_each_role_is_asked_in_turn_what_the_game_says_is_sent_and_the_game_ends():
    environment, got = await run_environment(Tally(), [act("a", 2), act("b", -1, 3)])
    assert got[FEEDBACK] == [
        TurnStart(game_id=5, turn=1, role="a", view={"total": 0, "me": "a"}, progress={"a": 0, "b": 0}),
        TurnStart(game_id=5, turn=1, role="b", view={"total": 2, "me": "b"}, progress={"a": 2, "b": 2}),
        GameOver(game_id=5, outcome="failure", turn=1),
    ]
    assert got["b"] == [Chat(game_id=5, turn=1, sender="a", recipient="b", text="a added 2")]
    assert got["a"] == [Chat(game_id=5, turn=1, sender="b", recipient="a", text="b added 3")]
    result = environment.result
    assert (result.outcome, result.turns, result.scores) == ("failure", 1, {"total": 5.0})
    assert [(t.role, t.applied, [r.reason for r in t.rejected]) for t in result.turn_log] == [
        ("a", 1, []), ("b", 1, ["must be positive"]),
    ]


async def test_what_went_wrong_is_told_at_the_role_s_next_turn_and_a_solved_game_stops_at_once():
    environment, got = await run_environment(
        Tally(max_turns=3, goal=4), [act("a", 0), act("b", 1), act("a", 5, turn=2)]
    )
    starts = [m for m in got[FEEDBACK] if isinstance(m, TurnStart)]
    assert [(s.turn, s.role, s.notices) for s in starts] == [
        (1, "a", ()), (1, "b", ()), (2, "a", ("Your action 0 was rejected: must be positive.",)),
    ]
    assert got[FEEDBACK][-1] == GameOver(game_id=5, outcome="success", turn=2)
    assert environment.result.solved_turn == 2


async def test_candidates_are_answered_with_the_one_the_game_chooses():
    sampled = Candidates(game_id=5, turn=1, role="b", actions=((1,), (7,), ()))
    environment, got = await run_environment(Picking(), [act("a", 1), sampled, act("b", 7)])
    assert [s.candidates for s in got[FEEDBACK] if isinstance(s, TurnStart)] == [1, 3]
    assert got["b"] == [
        Chat(game_id=5, turn=1, sender="a", recipient="b", text="a added 1"),
        Chosen(game_id=5, turn=1, index=1),
    ]
    assert (environment.result.turn_log[-1].candidates, environment.result.turn_log[-1].chosen) == (3, 1)


async def test_a_message_out_of_turn_fails_the_environment():
    with pytest.raises(ActorFailed) as failed:
        await run_environment(Tally(), [act("b", 1)])
    assert failed.value.address == "environment" and isinstance(failed.value.cause, ProtocolError)
    assert "expected a" in str(failed.value.cause)
