"""The Einstein game with a person in a seat: whole games through the policy 'human' in which the
"person" reasons only from what the seat shows (the table, its constraints, the history) and acts
only through its forms; each form writes an action the game reads back; a wrong filling says why;
what a seat shows never holds the partner's constraints; a turn the person lets time out passes."""

from __future__ import annotations

import json
import random
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
from puzzles.einstein.actions import Ask, Grounding, Move, Pass, Relation, Share, item_text, read_action
from puzzles.einstein.seat import plain

from .helpers import determined

GAME = get_game("einstein")
SEAT = GAME.faces.seat
ROLES = GAME.rules.rosters[0]
CORNERS = ("top_left_bin", "bottom_left_bin", "top_right_bin", "bottom_right_bin")
ASKED = re.compile(r"^Your partner has just asked about (block\d+)\.$")


def _sections(prompt) -> dict:
    return {section.title: section for section in prompt.sections}


def _goals(prompt) -> dict[str, str]:
    """Where the person can tell each block goes: its constraints and the blocks sitting in corners."""
    sections = _sections(prompt)
    groundings, relations = [], []
    for row in sections["The table"].board.rows:
        if row[0].text in CORNERS:
            groundings += [(int(block[5:]), row[0].text) for block in row[2].text.split()]
    for line in sections["Your knowledge"].lines:
        item = read_action("share " + line.split(": ", 1)[0]).item
        if isinstance(item, Grounding):
            groundings.append((item.block, item.bin))
        else:
            relations.append((item.a, item.b, item.kind))
    blocks = sum(len(row[2].text.split()) for row in sections["The table"].board.rows)
    return {f"block{b}": bin_ for b, bin_ in enumerate(determined(blocks, groundings, relations)) if bin_}


def decide(prompt) -> ChosenAction:
    """A person's step: answer an ask, move a block it can place, share, ask, or pass."""
    forms = {form.kind: form for form in prompt.forms}
    choices = {kind: {f.name: f.choices for f in form.fields} for kind, form in forms.items()}
    asked = next((m.group(1) for line in _sections(prompt)["History"].lines if (m := ASKED.match(line))), None)
    if asked and "share" in forms:
        answer = [c for c in choices["share"]["item"] if re.search(rf"\b{asked}\b", c)]
        if answer:
            return ChosenAction("share", {"item": answer[0]})
    goals = _goals(prompt)
    if "move" in forms:
        for block in choices["move"]["block"]:
            goal = goals.get(block)
            if goal in choices["move"]["target"]:
                return ChosenAction("move", {"block": block, "target": goal})
        in_common = set(_sections(prompt)["The table"].board.rows[3][2].text.split())
        for block in choices["move"]["block"]:
            if block in goals and block not in in_common:
                return ChosenAction("move", {"block": block, "target": "commonbin"})
    if "share" in forms:
        return ChosenAction("share", {"item": choices["share"]["item"][0]})
    if "ask" in forms:
        return ChosenAction("ask", {"block": choices["ask"]["block"][0]})
    return ChosenAction("pass")


class Person:
    kind = "browser"
    participant = "P11"

    def __init__(self, sleep_on: set[int] = frozenset()) -> None:
        self.turns: list[SeatTurn] = []
        self.sleep_on = sleep_on

    async def play(self, turn: SeatTurn):
        self.turns.append(turn)
        if len(self.turns) in self.sleep_on:
            await anyio.sleep_forever()
        return turn.reply(SeatAnswer(actions=(decide(turn.prompt),)))

    def timed_out(self, turn: SeatTurn) -> None:
        pass


class Seats:
    def __init__(self, person: Person) -> None:
        self.person = person

    def front(self, role: str, seed: int) -> Person:
        return self.person


def _play(role: str, seed: int, person: Person | None = None, seconds: float = 30.0, **params):
    person = person or Person()
    factory = PolicyFactory()
    factory.seats = Seats(person)
    factory.turn_seconds = seconds
    agents = {r: ("human" if r == role else GAME.default_policy) for r in ROLES}
    spec = GameSpec(
        game_id=0, seed=seed, params=GAME.rules.Params(**params), agents=agents,
        options=Options(feedback=GAME.rules.default_feedback, max_turns=15),
    )
    return anyio.run(lambda: play_game(spec, factory)), person


@pytest.mark.parametrize(
    "role, seed, params",
    [("player1", 1, {}), ("player2", 2, {}), ("player1", 3, {"blocks": 5, "actions": "ask"}), ("player2", 4, {"actions": "share"})],
)
def test_a_person_and_the_scripted_partner_solve_the_table(role, seed, params):
    record, person = _play(role, seed, **params)
    assert record.error is None
    assert record.outcome == "success" and record.scores["success"] is True
    assert record.format_errors[role] == 0
    # Every step the person took but a pass (waiting for the partner) was one the game found valid:
    # the forms offer only actions that make sense from what the person can see.
    mine = [t for t in record.turn_log if t.role == role]
    assert mine and all(t.applied == 1 or [r.action for r in t.rejected] == ["pass the turn"] for t in mine)
    assert sum(t.applied for t in mine) > 0
    assert set(GAME.records.human_study) <= set(record.scores)
    for turn in person.turns:
        assert turn.prompt.messages is False and turn.prompt.max_actions == 1


def test_a_turn_the_person_lets_time_out_is_a_pass():
    record, person = _play("player1", 1, Person(sleep_on={1}), seconds=0.2)
    first = next(t for t in record.turn_log if t.role == "player1")
    assert first.human.timed_out and first.applied == 0
    assert record.turn_log.index(first) == 0
    assert record.humans["player1"].timeouts == 1
    state = GAME.rules.new(GAME.rules.Params(), 1, ROLES, 15)
    state.step("player1", (Pass(),))
    assert person.turns[1].context.view.history[0] == state.view("player1").history[0]
    assert person.turns[1].context.view.history[0].text == "pass the turn"


def _context(state, role: str, max_turns: int = 15) -> TurnContext:
    return TurnContext(
        game_id=0, role=role, turn=len(state.history) // 2 + 1, max_turns=max_turns, view=state.view(role),
        feedback=None, conversation=(), partners=tuple(r for r in ROLES if r != role),
    )


def _state(seed: int = 1, **params):
    return GAME.rules.new(GAME.rules.Params(**params), seed, ROLES, 15)


def test_each_form_writes_an_action_the_game_reads_back():
    state = _state()
    context = _context(state, "player1")
    turn = SeatTurn(context, SEAT, 10)
    forms = {form.kind: form for form in turn.prompt.forms}
    assert set(forms) == {"move", "share", "ask", "pass"}
    block = forms["move"].fields[0].choices[0]
    chosen = [
        ChosenAction("move", {"block": block, "target": "commonbin"}),
        ChosenAction("share", {"item": forms["share"].fields[0].choices[-1]}),
        ChosenAction("ask", {"block": "1"}),  # a choice by its number
        ChosenAction("pass"),
    ]
    for one in chosen:
        action = turn.action(one)
        reply = GAME.faces.prompter.parse(GAME.faces.prompter.format(turn.reply(SeatAnswer(actions=(one,)))), context)
        assert reply.actions == (action,)
    n = int(block[5:])
    assert turn.action(chosen[0]) == Move(n, "player1_bin" if n in state.view("player1").bins[4] else "commonbin", "commonbin")
    assert turn.describe(chosen[0]) == f"move {block} from player1_bin to commonbin"
    assert turn.describe(chosen[3]) == "pass"
    assert isinstance(turn.action(chosen[2]), Ask)
    assert isinstance(turn.action(chosen[1]), Share)


@pytest.mark.parametrize(
    "actions, reason",
    [
        ({"actions": "none"}, "no action 'share'"),
        ({"actions": "share"}, "no action 'ask'"),
    ],
)
def test_the_forms_follow_the_action_mode(actions, reason):
    state = _state(**actions)
    turn = SeatTurn(_context(state, "player1"), SEAT, 10)
    kinds = {form.kind for form in turn.prompt.forms}
    assert "pass" in kinds and "move" in kinds
    wanted = "share" if "share" in reason else "ask"
    with pytest.raises(ValueError, match=re.escape(reason)):
        turn.action(ChosenAction(wanted, {"item": "x", "block": "block0"}))


def test_in_the_ask_mode_a_share_is_offered_only_to_answer_an_ask():
    state = _state(actions="ask")
    assert "share" not in {f.kind for f in SEAT.forms(_context(state, "player1"))}
    mine = state.private("player2")
    block = next(i.b if isinstance(i, Relation) else i.block for i in mine[1:] + mine[:1])
    state.step("player1", (Ask(block),))
    share = next(f for f in SEAT.forms(_context(state, "player2")) if f.kind == "share")
    assert share.fields[0].choices and all(re.search(rf"\bblock{block}\b", c) for c in share.fields[0].choices)
    assert f"Your partner has just asked about block{block}." in _sections(SeatTurn(_context(state, "player2"), SEAT, 10).prompt)["History"].lines


def test_without_answers_the_ask_mode_offers_no_share_at_all():
    state = _state(actions="ask", seek_answers=False)
    mine = state.private("player2")
    block = next(i.b if isinstance(i, Relation) else i.block for i in mine[1:] + mine[:1])
    state.step("player1", (Ask(block),))
    context = _context(state, "player2")
    assert "share" not in {f.kind for f in SEAT.forms(context)}
    assert "share a constraint" not in SEAT.rules(context)


@pytest.mark.parametrize(
    "params", [{}, {"actions": "ask"}, {"actions": "ask", "seek_answers": False}, {"actions": "share_ask/ask", "seek_answers": False},
               {"actions": "share", "blocks": 5}, {"actions": "none"}],
)
def test_whatever_a_person_picks_from_the_forms_the_game_takes(params):
    """Random fillings of the offered forms, step by step: each is applied, or is a pass, or a guess
    the table refuses (a block put into a wrong corner bin, which the rules tell the person)."""
    rng = random.Random(str(params))
    for seed in range(3):
        state = _state(seed, **params)
        while not state.done():
            role = ROLES[len(state.history) % 2]
            turn = SeatTurn(_context(state, role), SEAT, 10)
            form = rng.choice(turn.prompt.forms)
            values = {f.name: rng.choice(f.choices) for f in form.fields}
            try:
                action = turn.action(ChosenAction(form.kind, values))
            except ValueError as exc:
                assert "already" in str(exc)  # a block moved to where it is: the seat says so first
                continue
            step = state.step(role, (action,))
            if not step.applied:
                assert isinstance(action, Pass) or "board refused" in step.rejected[0].reason, (action, step.rejected)


@pytest.mark.parametrize(
    "kind, values, reason",
    [
        ("move", {"block": "block0"}, "To: give a value"),
        ("move", {"block": "block99", "target": "commonbin"}, "'block99' is not one of"),
        ("move", {"block": "block0", "target": "top_left_bin"}, "'top_left_bin' is not one of"),  # the far side
        ("share", {"item": "(block0, block1, same, row)x"}, "is not one of"),
        ("ask", {"block": "blockX"}, "is not one of"),
        ("fly", {}, "no action 'fly'"),
    ],
)
def test_a_wrong_filling_says_why(kind, values, reason):
    turn = SeatTurn(_context(_state(), "player1"), SEAT, 10)
    with pytest.raises(ValueError, match=re.escape(reason)):
        turn.action(ChosenAction(kind, values))


def test_a_move_to_where_the_block_is_says_why():
    state = _state()
    common = next(b for b in range(4) if state.board[b] == 4)  # a block in player1's start bin
    state.step("player1", (Move(common, "player1_bin", "commonbin"),))
    state.step("player2", (Pass(),))
    turn = SeatTurn(_context(state, "player1"), SEAT, 10)
    with pytest.raises(ValueError, match="in commonbin already"):
        turn.action(ChosenAction("move", {"block": f"block{common}", "target": "commonbin"}))


def test_one_action_a_turn_and_no_messages():
    turn = SeatTurn(_context(_state(), "player1"), SEAT, 10)
    with pytest.raises(ValueError, match="at most 1 action"):
        turn.reply(SeatAnswer(actions=(ChosenAction("pass"), ChosenAction("pass"))))
    with pytest.raises(ValueError, match="no messages"):
        turn.reply(SeatAnswer(message="hi"))
    assert turn.idle().actions == (Pass(),)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("role", ROLES)
def test_the_seat_never_shows_the_partners_constraints(seed, role):
    state = _state(seed, blocks=6)
    partner = next(r for r in ROLES if r != role)
    secret = [i for i in state.private(partner) if i not in state.private(role)]
    assert secret  # the split gives each player constraints of its own
    context = _context(state, role)
    shown = json.dumps(msgspec.to_builtins((SEAT.rules(context), SEAT.show(context), SEAT.forms(context))))
    for item in secret:
        assert item_text(item) not in shown
        assert plain(item) not in shown
    for item in state.private(role):
        assert item_text(item) in shown


@pytest.mark.parametrize("params", [{"blocks": 5, "actions": "ask/share"}, {"blocks": 8, "actions": "none"}, {"blocks": 6}])
def test_the_seat_passes_the_seat_conformance_check(params):
    check_seat(GAME, GAME.rules.Params(**params), seeds=range(4))
