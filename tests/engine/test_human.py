"""The policy ``human``: a person's answer is written in the game's reply format and ruled as a
model's would be; a turn with no answer in time is played idle and recorded; turns timing out in a
row end the game with "human_absent"; the record names the seat, its participant and response times."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from bus import HumanTurn
from engine import PolicyFactory
from engine.play.game import play_game
from engine.policies.seat import ChosenAction, HumanPolicy, SeatAnswer, SeatTurn, participant_id
from engine.records.record import decode_record, encode_record
from engine.plan.spec import GameSpec, Options
from engine.records.transcribe import TranscriptMaker
from puzzles import GAMES, TurnContext, get_game
from puzzles.seat import seat_of


class Front:
    """A front end that answers each turn with ``answer(turn)``, or never (``None``)."""

    kind = "browser"

    def __init__(self, answer, participant: str | None = "P07") -> None:
        self.answer = answer
        self.participant = participant
        self.turns: list[SeatTurn] = []
        self.timeouts = 0

    async def play(self, turn: SeatTurn):
        self.turns.append(turn)
        answer = self.answer(turn)
        if answer is None:
            await anyio.sleep_forever()
        return turn.reply(answer)

    def timed_out(self, turn: SeatTurn) -> None:
        self.timeouts += 1


class Seats:
    def __init__(self, front: Front) -> None:
        self.fronts = front
        self.asked: list[tuple[str, int]] = []

    def front(self, role: str, seed: int) -> Front:
        self.asked.append((role, seed))
        return self.fronts


def _spec(name: str, human_role: str, seed: int = 3, max_turns: int = 3) -> GameSpec:
    game = get_game(name)
    roster = game.rules.rosters[0]
    agents = {role: ("human" if role == human_role else game.default_policy) for role in roster}
    return GameSpec(
        game_id=0, seed=seed, params=game.rules.Params(), agents=agents,
        options=Options(feedback=game.rules.default_feedback, max_turns=max_turns),
    )


def _factory(front: Front, seconds: float = 30.0, absent_after: int = 2) -> PolicyFactory:
    factory = PolicyFactory()
    factory.seats = Seats(front)
    factory.turn_seconds = seconds
    factory.absent_after = absent_after
    return factory


def _first_filling(turn: SeatTurn) -> ChosenAction | None:
    """The first form filled with the first valid value of each field, if that makes an action."""
    for form in turn.prompt.forms:
        values = {}
        for field in form.fields:
            if field.kind == "choice":
                values[field.name] = field.choices[0]
            elif field.kind == "number":
                values[field.name] = field.minimum if field.minimum is not None else 1
            elif field.kind == "sequence":
                values[field.name] = list(field.choices[: max(field.minimum or 1, 1)])
            else:
                values[field.name] = "x"
        chosen = ChosenAction(form.kind, values)
        try:
            turn.action(chosen)
        except ValueError:
            continue
        return chosen
    return None


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_person_plays_every_game_and_the_record_says_so(name):
    game = get_game(name)
    human = game.rules.rosters[0][-1]

    def answer(turn: SeatTurn) -> SeatAnswer:
        chosen = _first_filling(turn)
        message = "hello there" if turn.prompt.messages else ""
        return SeatAnswer(message=message, actions=(chosen,) if chosen is not None else ())

    front = Front(answer)
    maker = TranscriptMaker(full=False)
    spec = _spec(name, human)
    record = anyio.run(lambda: play_game(spec, _factory(front), [maker.game_started(spec)]))
    assert record.outcome in ("success", "failure"), record.error
    assert record.humans == {human: record.humans[human]}
    seat = record.humans[human]
    assert (seat.front, seat.participant, seat.timeouts) == ("browser", "P07", 0)
    human_turns = [t for t in record.turn_log if t.role == human]
    assert seat.turns == len(human_turns) == len(front.turns) > 0
    assert all(isinstance(t.human, HumanTurn) and not t.human.timed_out for t in human_turns)
    assert all(t.human is msgspec.UNSET for t in record.turn_log if t.role != human)
    assert record.format_errors[human] == 0  # a person's answer always reads
    # The prompt a person sees is the seat's own: its role, the turn, the forms.
    prompt = front.turns[0].prompt
    assert (prompt.role, prompt.turn, prompt.max_turns) == (human, front.turns[0].context.turn, 3)
    assert prompt.forms
    # The record survives the results file, humans and all.
    again = decode_record(encode_record(record))
    assert again.humans == record.humans
    assert msgspec.to_builtins(again.turn_log) == msgspec.to_builtins(record.turn_log)


def test_a_turn_with_no_answer_is_played_idle_then_the_absent_person_ends_the_game():
    front = Front(lambda turn: None)
    spec = _spec("asympuzl", "bob", max_turns=5)
    record = anyio.run(lambda: play_game(spec, _factory(front, seconds=0.05, absent_after=2)))
    assert record.outcome == "error"
    assert (record.error.kind, record.error.actor) == ("human_absent", "bob")
    seat = record.humans["bob"]
    assert (seat.turns, seat.timeouts, front.timeouts) == (2, 2, 2)
    bob_turns = [t for t in record.turn_log if t.role == "bob"]
    assert len(bob_turns) == 1  # the first timed-out turn was played; the second ended the game
    assert bob_turns[0].human.timed_out and bob_turns[0].human.seconds >= 0.05
    assert bob_turns[0].applied == 0 and bob_turns[0].message_chars == 0


def test_an_answer_after_a_timeout_resets_the_count():
    answers = iter([None, SeatAnswer(message="here"), None, SeatAnswer(message="again")])
    front = Front(lambda turn: next(answers))
    spec = _spec("asympuzl", "bob", max_turns=4)
    record = anyio.run(lambda: play_game(spec, _factory(front, seconds=0.05, absent_after=2)))
    assert record.error is None
    assert [t.human.timed_out for t in record.turn_log if t.role == "bob"] == [True, False, True, False]
    assert record.humans["bob"].timeouts == 2


def _context(name: str, role: str) -> tuple[TurnContext, object]:
    game = get_game(name)
    roster = game.rules.rosters[0]
    state = game.rules.new(game.rules.Params(), 1, roster, 5)
    feedback = game.rules.feedback[game.rules.default_feedback](state, role)
    context = TurnContext(
        game_id=0, role=role, turn=1, max_turns=5, view=state.view(role), feedback=feedback, conversation=(),
        partners=tuple(r for r in roster if r != role),
    )
    return context, game


def test_a_wrong_answer_says_why_and_nothing_is_played():
    context, game = _context("asympuzl", "bob")
    turn = SeatTurn(context, seat_of(game), 10)
    with pytest.raises(ValueError, match="no action"):
        turn.reply(SeatAnswer(actions=(ChosenAction("fly", {}),)))
    form = turn.prompt.forms[0]
    with pytest.raises(ValueError, match="give a value"):
        turn.action(ChosenAction(form.kind, {}))


def test_a_directed_message_names_its_recipient():
    context, game = _context("asympuzl", "bob")
    context = msgspec.structs.replace(context, directed=True, partners=("alice", "carol"))
    turn = SeatTurn(context, seat_of(game), 10)
    with pytest.raises(ValueError, match="alice, carol"):
        turn.reply(SeatAnswer(message="hi"))
    assert turn.reply(SeatAnswer(message="hi", to="carol")).to == "carol"


def test_the_policy_needs_seats_and_a_positive_time():
    factory = PolicyFactory()
    game = get_game("asympuzl")
    factory.check("human", game)  # a name every game knows
    with pytest.raises(ValueError, match="no seat"):
        factory.make("human", "bob", 0, game)
    with pytest.raises(ValueError):
        HumanPolicy(game, Front(lambda t: None), seconds=0)


@pytest.mark.parametrize("text", ["P07", "s-12.a", "A" * 40])
def test_participant_ids_are_study_codes(text):
    assert participant_id(f" {text} ") == text


@pytest.mark.parametrize("text", ["", "Jane Doe", "a" * 41, "-x", "anna@example.org"])
def test_anything_else_is_refused(text):
    with pytest.raises(ValueError, match="never a name"):
        participant_id(text)


def test_a_message_the_reply_format_would_cut_short_is_refused():
    game = get_game("tsp")
    role = game.rules.rosters[0][0]
    context, game = _context("tsp", role)
    turn = SeatTurn(context, seat_of(game), 10, game.faces.prompter)
    with pytest.raises(ValueError, match="rephrase"):
        turn.reply(SeatAnswer(message="take this [Action]: end(L)"))
    assert turn.reply(SeatAnswer(message="take the attic first")).message == "take the attic first"


class LateFront(Front):
    """A page that draws each turn ``late`` seconds after it is given, then answers ``after`` seconds later."""

    def __init__(self, late: float, after: float) -> None:
        super().__init__(lambda turn: SeatAnswer(message="hi"))
        self.late, self.after = late, after
        self.left: list[float] = []

    async def play(self, turn: SeatTurn):
        self.left.append(turn.seconds_left())
        await anyio.sleep(self.late)
        self.left.append(turn.seconds_left())
        turn.shown()
        await anyio.sleep(self.after)
        return await super().play(turn)


def test_the_clock_starts_when_the_turn_is_shown_and_the_response_time_counts_from_then():
    front = LateFront(late=0.8, after=0.6)  # 1.4 s in all: over the turn's 1 s, but 0.6 s after it was shown
    spec = _spec("asympuzl", "bob", max_turns=1)
    record = anyio.run(lambda: play_game(spec, _factory(front, seconds=1.0)))
    assert record.error is None and front.timeouts == 0
    [turn] = [t for t in record.turn_log if t.role == "bob"]
    assert not turn.human.timed_out and 0.6 <= turn.human.seconds < 1.3  # not the 0.8 s before it was shown
    assert front.left[:2] == [1.0, 1.0]  # no time went while the turn was not shown
