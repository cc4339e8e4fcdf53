"""Traveling Adventurers with a person in a seat: whole games through the policy 'human' in which
the "person" reads only what the seat shows (its coin table, the conversation) and acts only through
its forms; the one form (submit the round trip) writes the action text the game reads, and the
agents' bookkeeping actions are not offered; a wrong filling says why; the submitted trip is shown
back; what a seat shows never holds the partner's coins."""

from __future__ import annotations

import json
import re

import anyio
import msgspec
import pytest

from engine import PolicyFactory
from engine.play.game import play_game
from engine.policies.seat import ChosenAction, SeatAnswer, SeatTurn
from engine.plan.spec import GameSpec, Options
from puzzles import TurnContext, get_game
from puzzles.testing import check_seat
from puzzles.tsp.board import GHOST, LIGHT, Board
from puzzles.tsp.rules import TspAction, TspGame

GAME = get_game("tsp")
SEAT = GAME.faces.seat
FINAL = re.compile(r"final: ([A-Z](?: [A-Z])+)")


class Person:
    """Tells its coins as read off the seat's table, then submits the round trip the partner names
    as final (in state-tracking games it first visits the trip's rooms, through the visit form)."""

    kind = "terminal"
    participant = "P03"

    def __init__(self) -> None:
        self.turns: list[SeatTurn] = []

    async def play(self, turn: SeatTurn):
        self.turns.append(turn)
        prompt = turn.prompt
        said = [line.text for line in prompt.conversation if line.sender != prompt.role]
        final = next((m.group(1).split() for text in reversed(said) if (m := FINAL.search(text))), None)
        if final is None:
            return turn.reply(SeatAnswer(message="My coins: " + ", ".join(_coins(prompt))))
        forms = {form.kind for form in prompt.forms}
        actions = [ChosenAction("visit", {"room": room}) for room in final[1:] if "visit" in forms]
        actions.append(ChosenAction("end", {"rooms": final[1:-1]}))
        return turn.reply(SeatAnswer(message="Agreed: " + " ".join(final), actions=tuple(actions)))

    def timed_out(self, turn: SeatTurn) -> None:
        raise AssertionError("the person answered every turn")


def _coins(prompt) -> list[str]:
    """``A-B: w`` for every hallway, read off the coin table (rows and columns are rooms)."""
    table = next(section.board for section in prompt.sections if section.board is not None)
    rooms = table.columns[1:]
    out = []
    for row in table.rows:
        here = row[0].text
        for room, cell in zip(rooms, row[1:]):
            if cell.text and rooms.index(room) > rooms.index(here):
                out.append(f"{here}-{room}: {cell.text}")
    return out


class Seats:
    def __init__(self, person: Person) -> None:
        self.person = person

    def front(self, role: str, seed: int) -> Person:
        return self.person


def _play(params, seed: int = 5):
    person = Person()
    factory = PolicyFactory()
    factory.seats = Seats(person)
    spec = GameSpec(
        game_id=0, seed=seed, params=params, agents={LIGHT: "human", GHOST: GAME.default_policy},
        options=Options(feedback=GAME.rules.default_feedback, max_turns=15),
    )
    return anyio.run(lambda: play_game(spec, factory)), person


def test_a_person_and_the_scripted_partner_submit_the_identical_optimal_trip():
    record, person = _play(GAME.rules.Params())
    assert record.error is None and record.format_errors[LIGHT] == 0
    assert record.outcome == "success"
    assert record.scores["identical"] is True and record.scores["optimal"] is True
    assert record.scores["s90"] is True
    submitted = record.metrics["submitted"]
    assert submitted[LIGHT] == submitted[GHOST] and submitted[LIGHT][0] == submitted[LIGHT][-1] == "L"
    assert len(person.turns) == 2 and record.humans[LIGHT].turns == 2
    # The report's human-study columns name scores the game records.
    assert set(GAME.records.human_study) <= set(record.scores)


@pytest.mark.parametrize("variant", ["baseline", "grounding", "state_tracking", "problem_solving"])
def test_a_person_is_offered_only_the_submission_never_the_agents_bookkeeping(variant):
    record, person = _play(GAME.rules.Params(variant=variant), seed=8)
    assert record.outcome == "success" and record.format_errors[LIGHT] == 0
    for turn in person.turns:
        assert [form.kind for form in turn.prompt.forms] == ["end"]
        assert turn.prompt.max_actions == 1


def _context(params=None, role: str = LIGHT, state: TspGame | None = None) -> TurnContext:
    state = state or GAME.rules.new(params or GAME.rules.Params(), 1, (LIGHT, GHOST), 15)
    return TurnContext(
        game_id=0, role=role, turn=1, max_turns=15, view=state.view(role), feedback=None, conversation=(),
        partners=(GHOST if role == LIGHT else LIGHT,),
    )


def test_the_form_writes_the_action_text_the_game_reads():
    context = _context()
    turn = SeatTurn(context, SEAT, 10)
    chosen = ChosenAction("end", {"rooms": "E K B C A"})
    written = TspAction("end", '["L", "E", "K", "B", "C", "A", "L"]')
    assert turn.action(chosen) == written
    reply = GAME.faces.prompter.parse(GAME.faces.prompter.format(turn.reply(SeatAnswer("hi", actions=(chosen,)))), context)
    assert reply.actions == (written,) and reply.message == "hi" and not reply.rejected
    state = GAME.rules.new(GAME.rules.Params(), 1, (LIGHT, GHOST), 15)
    assert state.step(LIGHT, reply.actions).applied == 1


def test_describe_draws_a_path_with_arrows():
    assert SEAT.describe(TspAction("suggest", '["L", "Z", "K", "L"]')) == "suggest L → Z → K → L"
    assert SEAT.describe(TspAction("visit", '"E"')) == "visit E"
    assert SEAT.describe(TspAction("ask", '"coins?"')) == 'ask "coins?"'
    assert SEAT.describe(TspAction("end", '["L", "E", "L"]')) == "submit L → E → L"


@pytest.mark.parametrize(
    "kind, values, reason",
    [
        ("end", {"rooms": "E K B C"}, "give 5 to 5 items"),
        ("end", {"rooms": "E E K B C"}, "named twice"),
        ("end", {"rooms": "L E K B C"}, "not one of"),
        ("end", {"rooms": "E K B C Z"}, "'Z' is not one of"),
        ("suggest", {"path": "L E"}, "no action 'suggest'"),  # the agents' notes are not a person's
        ("inform", {"text": "my coins"}, "no action 'inform'"),
        ("visit", {"room": "E"}, "no action 'visit'"),
        ("fly", {}, "no action 'fly'"),
    ],
)
def test_a_wrong_filling_says_why(kind, values, reason):
    turn = SeatTurn(_context(), SEAT, 10)
    with pytest.raises(ValueError, match=re.escape(reason)):
        turn.action(ChosenAction(kind, values))


def _shown(context: TurnContext) -> str:
    return json.dumps(msgspec.to_builtins((SEAT.rules(context), SEAT.show(context), SEAT.forms(context))))


@pytest.mark.parametrize("role", [LIGHT, GHOST])
def test_the_seat_shows_its_own_coins_and_never_the_partners(role):
    state = GAME.rules.new(GAME.rules.Params(), 1, (LIGHT, GHOST), 15)
    partner = GHOST if role == LIGHT else LIGHT
    # The same game but for the partner's coins, every one changed: what the seat shows is the same.
    board = state.board
    changed = Board(board.rooms, {**board.weights, partner: tuple((a, b, w + 40) for a, b, w in board.weights[partner])}, board.source)
    other = TspGame(changed, state.params, state.max_turns)
    assert _shown(_context(role=role, state=state)) == _shown(_context(role=role, state=other))
    table = next(s.board for s in SEAT.show(_context(role=role, state=state)) if s.board is not None)
    rooms = table.columns[1:]
    for a, b, w in state.private(role):
        assert table.rows[rooms.index(a)][1 + rooms.index(b)].text == str(w)
    assert "ghost coins" in SEAT.rules(_context(role=role, state=state))


def test_the_seat_shows_the_trip_the_person_submitted():
    state = GAME.rules.new(GAME.rules.Params(), 1, (LIGHT, GHOST), 15)
    sections = {s.title: s for s in SEAT.show(_context(state=state))}
    assert sections["Your submitted round trip"].lines == ("Not submitted yet.",)
    state.step(LIGHT, (TspAction("end", '["L", "E", "K", "B", "C", "A", "L"]'),))
    lines = {s.title: s for s in SEAT.show(_context(state=state))}["Your submitted round trip"].lines
    coins = {frozenset((a, b)): w for a, b, w in state.private(LIGHT)}
    path = "L E K B C A L".split()
    assert lines[0] == "L → E → K → B → C → A → L"
    assert f"coins on it: {sum(coins[frozenset(p)] for p in zip(path, path[1:]))} " in lines[1]
    assert SEAT.forms(_context(state=state))[0].label == "Submit again the final round trip"
    partner = {s.title: s for s in SEAT.show(_context(role=GHOST, state=state))}["Your submitted round trip"]
    assert partner.lines == ("Not submitted yet.",)  # the partner's seat shows only its own submission


@pytest.mark.parametrize(
    "params",
    [
        {"variant": "grounding"}, {"variant": "state_tracking"}, {"variant": "problem_solving"}, {"board": "4"},
        {"board": "generated", "rooms": 3}, {"board": "generated", "rooms": 8},
    ],
)
def test_the_seat_passes_the_seat_conformance_check(params):
    check_seat(GAME, GAME.rules.Params(**params), seeds=range(4))
