"""A person's seat: every registered game's seat passes the conformance check (and the check
catches seats that break it); people who read only what their seat shows play whole games of the
two position games to success through the human policy; a wrong form value comes back with its reason."""

import dataclasses
import re

import anyio
import msgspec
import pytest

from engine import PolicyFactory
from engine.play.game import play_game
from engine.policies.seat import ChosenAction, SeatAnswer, SeatTurn
from engine.plan.spec import GameSpec, Options
from puzzles import GAMES, ChatLine, TurnContext
from puzzles.asympuzl.seat import AsymPuzlSeat
from puzzles.positions.vocab import COLORS
from puzzles.seat import ActionForm, Field, Section
from puzzles.testing import check_seat


@pytest.mark.parametrize("name", list(GAMES))
def test_every_registered_games_seat_passes_the_seat_check(name):
    check_seat(GAMES[name])


@pytest.mark.parametrize(
    "name, params",
    [
        ("asympuzl", {"size": 2}),
        ("asympuzl", {"size": 4, "distractors": 3, "distractors_in": "alice", "prompt": "guided"}),
        ("asympuzl", {"size": 4, "distractors": 3, "distractors_in": "bob"}),
        ("chain", {"size": 2}),
        ("chain", {"size": 9}),
    ],
)
def test_the_position_seats_pass_the_seat_check_at_other_parameters(name, params):
    game = GAMES[name]
    check_seat(game, game.rules.Params(**params), seeds=range(4))


def _context(game, roles, role, seed=0, feedback=None):
    params = game.rules.Params()
    state = game.rules.new(params, seed, roles, game.rules.default_max_turns(params, roles))
    context = TurnContext(
        game_id=0, role=role, turn=1, max_turns=state.max_turns, view=state.view(role),
        feedback=game.rules.feedback[feedback or game.rules.default_feedback](state, role), conversation=(),
        partners=tuple(r for r in roles if r != role),
    )
    return state, context


def _text(sections):
    lines = []
    for section in sections:
        lines += [section.title, *section.lines]
        if section.board is not None:
            lines += [" ".join(span.text for span in row) for row in section.board.rows]
    return "\n".join(lines)


# ---- The check catches broken seats ----


def _with_seat(make_seat):
    """AsymPuzl with a seat that can see the game's state (``make_seat(state)``), as a careless one might."""
    game = GAMES["asympuzl"]
    latest = {}

    def new(params, seed, roles, max_turns):
        latest["state"] = game.rules.new(params, seed, roles, max_turns)
        return latest["state"]

    class Proxy(AsymPuzlSeat):
        def show(self, context):
            return make_seat(latest["state"]).show(context)

        def forms(self, context):
            return make_seat(latest["state"]).forms(context)

    return dataclasses.replace(
        game, rules=dataclasses.replace(game.rules, new=new), faces=dataclasses.replace(game.faces, seat=Proxy()),
    )


def test_the_check_catches_a_seat_that_shows_alice_bobs_pairs():
    class Leaky(AsymPuzlSeat):
        def __init__(self, state):
            self.state = state

        def show(self, context):
            pairs = tuple(f"The {p.shape} is {p.color}." for p in self.state.private("bob")) if context.role == "alice" else ()
            return super().show(context) + (Section("Overheard", pairs),)

    with pytest.raises(AssertionError, match="alice .*privately"):
        check_seat(_with_seat(Leaky))


def test_the_check_catches_a_seat_that_shows_bob_alices_order():
    class Leaky(AsymPuzlSeat):
        def __init__(self, state):
            self.state = state

        def show(self, context):
            order = tuple(f"Position {i}: {p.shape}" for i, p in enumerate(self.state.private("alice"), 1))
            return super().show(context) + (Section("Overheard", order if context.role == "bob" else ()),)

    with pytest.raises(AssertionError, match="bob .*privately"):
        check_seat(_with_seat(Leaky))


def test_the_check_catches_choices_drawn_from_the_hidden_solution():
    class Telling(AsymPuzlSeat):
        def __init__(self, state):
            self.state = state

        def forms(self, context):
            (form,) = super().forms(context)
            colors = Field("color", "color", "choice", tuple(sorted(p.color for p in self.state.truth)))
            return (ActionForm(form.kind, form.label, (*form.fields[:2], colors)),)

    with pytest.raises(AssertionError, match="changes with the seed"):
        check_seat(_with_seat(Telling))


def test_the_check_catches_a_seat_that_takes_what_is_not_a_choice():
    from puzzles.asympuzl.rules import Replace

    class Trusting(AsymPuzlSeat):
        def action(self, context, kind, values):
            return Replace(int(values["position"]), values["shape"], values["color"])

    game = GAMES["asympuzl"]
    with pytest.raises(AssertionError, match="took"):
        check_seat(dataclasses.replace(game, faces=dataclasses.replace(game.faces, seat=Trusting())))


# ---- What a seat shows and how it answers ----


@pytest.mark.parametrize("seed", range(5))
def test_alice_is_never_shown_bobs_colors(seed):
    game = GAMES["asympuzl"]
    state, context = _context(game, ("alice", "bob"), "alice", seed)
    shown = set(re.findall(r"[a-z]+", (game.faces.seat.rules(context) + _text(game.faces.seat.show(context))).lower()))
    assert shown.isdisjoint(p.color for p in state.private("bob"))
    assert shown.isdisjoint(COLORS)  # she knows no color at all yet


def test_a_chain_seat_shows_its_link_and_nothing_of_the_others():
    game = GAMES["chain"]
    state, context = _context(game, ("alice", "bob", "carol"), "carol")
    shown = _text(game.faces.seat.show(context))
    assert all(f"The color {c} goes with the pattern {p}." in shown for _, c, p in state.private("carol"))
    assert not {s for s, _, _ in state.truth} & set(re.findall(r"[a-z]+", shown))  # no shape at all


def test_the_feedback_is_shown_as_its_mode_gives_it():
    game = GAMES["asympuzl"]
    roles = ("alice", "bob")

    def shown(mode):
        _, context = _context(game, roles, "bob", seed=0, feedback=mode)
        sections = {s.title: s for s in game.faces.seat.show(context)}
        return context.feedback, sections["Feedback"].lines, sections["Your hypothesis"].board

    _, lines, board = shown("none")
    assert lines == ("No feedback in this game.",) and "check" not in board.columns
    _, lines, board = shown("own")
    assert lines == ("Your part of the puzzle is unsolved.",) and "check" not in board.columns
    _, lines, board = shown("both")
    assert lines == ("Your part of the puzzle is unsolved.", "Alice's part of the puzzle is unsolved.")
    feedback, lines, board = shown("own_detailed")
    assert feedback.own.wrong and len(feedback.own.wrong) < len(board.rows)  # some of Bob's rows start right
    assert [row[-1].text for row in board.rows] == [
        "wrong" if p in feedback.own.wrong else "right" for p in range(1, len(board.rows) + 1)
    ]


def test_a_wrong_form_value_comes_back_with_its_reason():
    game = GAMES["asympuzl"]
    _, context = _context(game, ("alice", "bob"), "bob")
    turn = SeatTurn(context, game.faces.seat, 60)
    pair = context.view.clues[0]  # Bob's choices are the shapes and colors he has been shown
    good = {"position": "3", "shape": pair.shape, "color": pair.color}
    for wrong, reason in (
        ({"position": "9"}, "position: give a number from 1 to 5"),
        ({"color": "transparent"}, "color: 'transparent' is not one of"),
        ({"shape": ""}, "shape: give a value"),
    ):
        with pytest.raises(ValueError, match=re.escape(reason)):
            turn.reply(SeatAnswer(actions=(ChosenAction("replace", {**good, **wrong}),)))
    assert turn.describe(ChosenAction("replace", good)) == f"position 3: {pair.color} {pair.shape}"
    chain = GAMES["chain"]
    _, context = _context(chain, ("alice", "bob", "carol"), "alice")
    shape = context.view.clues[1][0]  # Alice's shapes are her clues'; no color or pattern named yet: all of them
    chosen = ChosenAction("replace", {"position": 2, "shape": shape, "color": "red", "pattern": "plaid"})
    assert SeatTurn(context, chain.faces.seat, 60).describe(chosen) == f"position 2: shape {shape}, color red, pattern plaid"


def test_a_fields_choices_are_the_values_the_person_has_been_shown():
    """Not the 40 words of the vocabulary: Alice's shapes are her clues' and her colors, once Bob has
    named some, the colors his messages name; before anyone has named a color, every color."""

    game = GAMES["asympuzl"]
    _, context = _context(game, ("alice", "bob"), "alice")
    (form,) = game.faces.seat.forms(context)
    fields = {f.name: f for f in form.fields}
    assert fields["shape"].choices == tuple(sorted(p.shape for p in context.view.clues))
    assert fields["color"].choices == tuple(sorted(COLORS))  # none named yet
    named = sorted(COLORS)[:2]
    said = (ChatLine(1, "bob", f"The {context.view.clues[0].shape} is {named[0]}; the other is {named[1].upper()}."),)
    (form,) = game.faces.seat.forms(msgspec.structs.replace(context, conversation=said))
    assert {f.name: f for f in form.fields}["color"].choices == tuple(named)
    _, bob = _context(game, ("alice", "bob"), "bob")
    (form,) = game.faces.seat.forms(bob)
    assert {f.name: f for f in form.fields}["color"].choices == tuple(sorted(p.color for p in bob.view.clues))
    with pytest.raises(ValueError, match="is not one of"):
        SeatTurn(bob, game.faces.seat, 60).describe(
            ChosenAction("replace", {"position": 1, "shape": bob.view.clues[0].shape, "color": next(c for c in COLORS if c not in {p.color for p in bob.view.clues})}))


# ---- Whole games played by people who read only their seat ----


ALICE_CLUE = re.compile(r"^Position (\d+): (\w+) \(color unknown\)$")
BOB_CLUE = re.compile(r"^The (\w+) is (\w+)\.$")
FIRST_CLUE = re.compile(r"^Position (\d+): (\w+) (\w+)$")
LINK_CLUE = re.compile(r"^The (\w+) (\w+) goes with the (\w+) (\w+)\.$")


class Person:
    """Someone at a seat of a position game: reads the clue sections and the messages, tells the
    partners their clues, and fills in the replace form for every row of the hypothesis table that
    is not what the clues put together say. The first answer of the game is a wrong one, to see the
    reason come back as a front end would show it."""

    kind = "terminal"
    participant = "P01"

    def __init__(self, solve):
        self.solve = solve  # (clue lines, columns) -> {position: {column: value}} once it can tell
        self.heard: list[str] = []
        self.seen = []
        self.reasons: list[str] = []

    async def play(self, turn):
        prompt = turn.prompt
        self.seen.append(prompt)
        clues = [line for s in prompt.sections if s.title.startswith("Your clues") for line in s.lines]
        self.heard += [line for chat in prompt.conversation for line in chat.text.splitlines()]
        (table,) = [s.board for s in prompt.sections if s.board is not None]
        columns = [c for c in table.columns if c not in ("position", "check")]
        target = self.solve(clues + self.heard, columns)
        actions = []
        for row in table.rows:
            position = int(row[0].text)
            now = dict(zip(columns, (cell.text for cell in row[1:])))
            if target and {k: now[k] for k in columns} != target[position]:
                actions.append(ChosenAction("replace", {"position": str(position), **target[position]}))
        if not self.reasons:
            try:
                turn.reply(SeatAnswer(actions=(ChosenAction("replace", {"position": "0"}),)))
            except ValueError as reason:
                self.reasons.append(str(reason))
        return turn.reply(SeatAnswer(message="\n".join(clues), actions=tuple(actions)))

    def timed_out(self, turn):
        raise AssertionError("the person answers at once")


def solve_asympuzl(lines, columns):
    order = {int(m[1]): m[2] for line in lines if (m := ALICE_CLUE.match(line))}
    colors = {m[1]: m[2] for line in lines if (m := BOB_CLUE.match(line))}
    if not order or not all(shape in colors for shape in order.values()):
        return None
    return {p: {"shape": shape, "color": colors[shape]} for p, shape in order.items()}


def solve_chain(lines, columns):
    first = {int(m[1]): m[3] for line in lines if (m := FIRST_CLUE.match(line))}
    links = {(m[1], m[2], m[3]): m[4] for line in lines if (m := LINK_CLUE.match(line))}
    target = {}
    for position, value in first.items():
        item = {columns[0]: value}
        for before, after in zip(columns, columns[1:]):
            if (before, item[before], after) not in links:
                return None
            item[after] = links[before, item[before], after]
        target[position] = item
    return target or None


class Seats:
    def __init__(self, people):
        self.people = people

    def front(self, role, seed):
        return self.people[role]


@pytest.mark.parametrize(
    "name, roles, solve",
    [
        ("asympuzl", ("alice", "bob"), solve_asympuzl),
        ("chain", ("alice", "bob"), solve_chain),
        ("chain", ("alice", "bob", "carol", "dave"), solve_chain),
    ],
)
@pytest.mark.parametrize("seed", [3, 11])
def test_people_who_read_only_their_seats_solve_the_game(name, roles, solve, seed):
    game = GAMES[name]
    people = {role: Person(solve) for role in roles}
    factory = PolicyFactory()
    factory.seats = Seats(people)
    factory.turn_seconds = 60
    params = game.rules.Params()
    spec = GameSpec(
        game_id=0, seed=seed, params=params, agents=dict.fromkeys(roles, "human"),
        options=Options(feedback=game.rules.default_feedback, max_turns=game.rules.default_max_turns(params, roles), history=None, leak_audit=True),
    )
    record = anyio.run(play_game, spec, factory)
    assert record.error is None
    assert record.outcome == "success"
    assert record.turns <= 2  # everyone tells all on turn 1; the last to hear it writes it on turn 2
    assert set(record.humans) == set(roles) and all(h.timeouts == 0 for h in record.humans.values())
    assert all(person.reasons == ["position: give a number from 1 to 5"] for person in people.values())
    assert not any(record.invalid_actions.values())
    # What each person was shown on their first turn never held a partner's clue lines.
    for role, person in people.items():
        first = _text(person.seen[0].sections)
        others = [p for r, p in people.items() if r != role]
        for other in others:
            theirs = [line for s in other.seen[0].sections if s.title.startswith("Your clues") for line in s.lines[1:]]
            assert not any(line in first for line in theirs)


@pytest.mark.parametrize("name", list(GAMES))
def test_every_score_a_game_records_has_words_for_a_participant(name):
    """A seat's end screen shows each score in words (``Game.score_in_words``), never the papers'
    abbreviations: every score key a game records has its words."""
    from engine import run_games
    from engine.plan.grid import Grid

    game = GAMES[name]
    plan = Grid(game=name, seeds=4, agents=[[game.default_policy] * len(game.rules.rosters[0])])
    records = []
    anyio.run(lambda: run_games(plan.specs_for(range(plan.total)), factory=PolicyFactory(), concurrency=4, on_record=records.append))
    keys = {key.partition(".")[0] for record in records for key in record.scores}
    assert keys and keys <= set(game.records.score_words), keys - set(game.records.score_words)
