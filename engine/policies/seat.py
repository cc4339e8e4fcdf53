"""A person plays a seat: the policy ``human``, and what it asks of a front end (the terminal form
of ``runners.seat``, the browser page of ``runners.seats.browser``).

Each turn the policy builds a ``SeatTurn`` from the game's seat (``puzzles.seat``): the prompt a
front end draws (``SeatPrompt``, plain data, JSON for a page) and the checks it runs on what the
person fills in. The front end returns the answer as a ``Reply``; the policy writes it in the game's
reply format, so the person's turn is read and ruled exactly as a model's. A person who does not
answer within the turn's time gets the turn played with no message and the game's idle actions,
recorded as timed out; after ``absent_after`` timeouts in a row the game ends with the error
"human_absent", so a person who walked away never holds a run. Response times go into the record
with each turn (``bus.HumanTurn``) and, per seat, with the participant id (``HumanSeat``).

The turn's clock starts when the person first sees the turn: a front end that draws it later (a page,
when it next asks) says so with ``SeatTurn.shown()``, and the turn's time and the response time count
from then. A turn that is never shown within its time is played without the person, so a page
nobody opens still times out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, Literal, Protocol

import anyio
import msgspec

from bus import HumanTurn
from puzzles import Answer, ChatLine, Game, Reply, TurnContext, implements
from puzzles.seat import ActionForm, IdleActions, Section, Seat, check_values, form_named, seat_of

HUMAN = "human"
DEFAULT_TURN_SECONDS = 600.0
DEFAULT_ABSENT_AFTER = 2
PARTICIPANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
FrontKind = Literal["terminal", "browser"]


def participant_id(text: str) -> str:
    """A participant id as given, checked: a study code such as P07 (letters, digits, ``_.-``, at
    most 40, no spaces), so that a name is not written by mistake. ValueError says why."""
    text = text.strip()
    if not PARTICIPANT.fullmatch(text):
        raise ValueError(
            f"{text!r} is not a participant id: give a study code (letters, digits, '_', '.', '-'; no spaces; at most 40), never a name"
        )
    return text


class SeatPrompt(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """What a front end shows a person for one turn: only what the seat's view allows."""

    game_id: int
    role: str
    turn: int
    max_turns: int
    rules: str
    sections: tuple[Section, ...]
    conversation: tuple[ChatLine, ...]
    notices: tuple[str, ...]
    forms: tuple[ActionForm, ...]
    partners: tuple[str, ...]
    directed: bool = False
    messages: bool = True  # the game has free messages (Einstein's players talk through actions)
    max_actions: int | None = None
    seconds: float = DEFAULT_TURN_SECONDS  # time allowed for the turn


class ChosenAction(msgspec.Struct, frozen=True, gc=False):
    """An action as a person filled in its form: the form's kind and the field values."""

    kind: str
    values: dict[str, Any] = {}


class SeatAnswer(msgspec.Struct, frozen=True, gc=False):
    """A person's whole turn as a front end sends it."""

    message: str = ""
    to: str | None = None
    actions: tuple[ChosenAction, ...] = ()


class SeatTurn:
    """One turn of a person: the prompt, and the checks a front end runs as the person fills it in."""

    def __init__(self, context: TurnContext, seat: Seat, seconds: float, prompter: Any = None) -> None:
        self.context = context
        self.seat = seat
        self.prompter = prompter
        self.shown_at: float | None = None  # time.monotonic() when the person first saw the turn
        self._on_shown: Callable[[], None] | None = None
        self.prompt = SeatPrompt(
            game_id=context.game_id, role=context.role, turn=context.turn, max_turns=context.max_turns,
            rules=seat.rules(context), sections=tuple(seat.show(context)), conversation=context.conversation,
            notices=context.notices, forms=tuple(seat.forms(context)), partners=context.partners,
            directed=context.directed, messages=seat.messages, max_actions=seat.max_actions, seconds=seconds,
        )

    def shown(self) -> None:
        """The person sees the turn now (its first showing counts): its clock starts."""
        if self.shown_at is None:
            self.shown_at = time.monotonic()
            if self._on_shown is not None:
                self._on_shown()

    def seconds_left(self) -> float:
        """The turn's time left: all of it until the turn is shown."""
        if self.shown_at is None:
            return self.prompt.seconds
        return max(0.0, self.prompt.seconds - (time.monotonic() - self.shown_at))

    def action(self, chosen: ChosenAction) -> Any:
        """The game's action for a filled-in form; ValueError with the reason to show."""
        form = form_named(self.prompt.forms, chosen.kind)
        return self.seat.action(self.context, chosen.kind, check_values(form, chosen.values))

    def describe(self, chosen: ChosenAction) -> str:
        """The action in one line; ValueError if the form is not filled in right."""
        return self.seat.describe(self.action(chosen))

    def reply(self, answer: SeatAnswer) -> Reply:
        """The answer as the game's reply; ValueError with the reason to show if any part is wrong."""
        prompt = self.prompt
        limit = prompt.max_actions
        if limit is not None and len(answer.actions) > limit:
            raise ValueError(f"at most {limit} action{'s' * (limit != 1)} a turn, got {len(answer.actions)}")
        actions = tuple(self.action(chosen) for chosen in answer.actions)
        message = answer.message.strip()
        if message and not prompt.messages:
            raise ValueError("this game has no messages: say things through its actions")
        to = answer.to
        if prompt.directed and message:
            if to is None and len(prompt.partners) == 1:
                to = prompt.partners[0]
            if to not in prompt.partners:
                raise ValueError(f"name who the message is for: one of {', '.join(prompt.partners)}")
        elif not prompt.directed:
            to = None
        reply = Reply(message=message, actions=actions, to=to)
        if self.prompter is not None:
            self._check_written(reply)
        return reply

    def _check_written(self, reply: Reply) -> None:
        """The reply reads back as it was meant when written in the game's format: a message that
        holds the format's own markers would otherwise reach the partner cut short."""
        try:
            read = self.prompter.parse(self.prompter.format(reply), self.context)
        except ValueError as exc:
            raise ValueError(f"the game cannot write this turn as it is ({exc}); change the message") from None
        if read.message.strip() != reply.message or len(read.actions) != len(reply.actions):
            raise ValueError("the message holds text the game's reply format reads as its own; rephrase it")

    def idle(self) -> Reply:
        """The turn of a person who gave no answer: no message, the game's idle actions."""
        actions = tuple(self.seat.idle(self.context)) if implements(self.seat, IdleActions) else ()
        return Reply(message="", actions=actions)


class FrontEnd(Protocol):
    """Where a person sits: shows each ``SeatTurn`` and returns the answer as ``turn.reply(...)``
    gives it; cancelled when the turn's time is up."""

    kind: FrontKind
    participant: str | None

    async def play(self, turn: SeatTurn) -> Reply:
        """The person's answer; ``HumanAbsent`` if the front end knows the person has gone. A front
        end that shows the turn later than it is given calls ``turn.shown()`` then."""

    def timed_out(self, turn: SeatTurn) -> None:
        """The turn's time ran out before the person answered."""


class Seats(Protocol):
    """Where the people of a run sit: the front end of ``role`` in the game of ``seed``."""

    def front(self, role: str, seed: int) -> FrontEnd: ...


class HumanAbsent(RuntimeError):
    """The person in a seat let ``absent_after`` turns in a row time out, or left: the game ends with
    this error. ``role`` is whose seat is empty when that is not the seat that raised it (a front end
    whose person's partner left ends the game on the partner's account)."""

    kind = "human_absent"

    def __init__(self, message: str, role: str | None = None) -> None:
        super().__init__(message)
        self.role = role


class HumanSeat(msgspec.Struct, omit_defaults=True):
    """A seat a person played, in the record: who (a participant id, never a name), where, and
    how the turns went. Each turn's response time is in the turn log (``TurnLog.human``)."""

    front: str
    participant: str | None = None
    turns: int = 0
    timeouts: int = 0
    seconds: float = 0.0  # response time, summed over the turns


class HumanPolicy:
    """The policy of a seat a person plays, through ``front``."""

    def __init__(
        self, game: Game, front: FrontEnd, *, seconds: float = DEFAULT_TURN_SECONDS, absent_after: int = DEFAULT_ABSENT_AFTER,
    ) -> None:
        if seconds <= 0 or absent_after < 1:
            raise ValueError("a person's turn needs a positive time and absent_after >= 1")
        self.game = game
        self.seat = seat_of(game)
        self.front = front
        self.seconds = seconds
        self.absent_after = absent_after
        self.record = HumanSeat(front=front.kind, participant=front.participant)
        self._in_a_row = 0

    async def reply(self, context: TurnContext) -> Answer:
        """The person's reply in the game's format, with their response time (``Answer.human``)."""
        turn = SeatTurn(context, self.seat, self.seconds, self.game.faces.prompter)
        started = time.monotonic()
        reply: Reply | None = None
        try:
            with anyio.move_on_after(self.seconds) as clock:  # until shown: the time the front end has to show it

                def restart() -> None:
                    clock.deadline = anyio.current_time() + self.seconds

                turn._on_shown = restart
                reply = await self.front.play(turn)
        except HumanAbsent as absent:  # the front end knows the person has gone (the terminal's input ended)
            if absent.role in (None, context.role):  # not when the turn ended because a partner left
                self._count(turn.shown_at or started, timed_out=True)
            raise
        finally:
            turn._on_shown = None
        seconds = self._count(turn.shown_at or started, timed_out=reply is None)
        if reply is None:
            self._in_a_row += 1
            human = HumanTurn(seconds, timed_out=True)
            self.front.timed_out(turn)
            if self._in_a_row >= self.absent_after:
                turns = f"{self._in_a_row} turns in a row" if self._in_a_row > 1 else "a turn"
                raise HumanAbsent(f"{context.role} gave no answer in {turns} of {self.seconds:g} s")
            reply = turn.idle()
        else:
            self._in_a_row = 0
            human = HumanTurn(seconds)
        return Answer(self.game.faces.prompter.format(reply), human=human)

    def _count(self, started: float, *, timed_out: bool) -> float:
        """Count a turn in the seat's record; its response seconds."""
        seconds = round(time.monotonic() - started, 3)
        record = self.record
        record.turns += 1
        record.timeouts += timed_out
        record.seconds = round(record.seconds + seconds, 3)
        return seconds
