"""The people of a ``runners.seats.browser`` run, each at a page: one ``BrowserFront`` per seat (the
``engine.policies.seat.FrontEnd`` a page plays through) and ``BrowserSeats``, the ``engine.policies.seat.Seats``
that hands them out and follows the games (a ``play_plan`` observer).

A front holds what its page may show and nothing else: the turn waiting for the person, the
conversation as this seat saw it (the messages delivered to it and its own, taken off the game's
bus), the last game's outcome. Each change bumps ``version``; the page asks for the state again
when the version it has is old (``wait_change`` is the long poll). Everything here runs on the one
event loop of the run, the web handlers included, so no lock is needed.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable, Mapping
from typing import Any

import anyio
import msgspec

from bus import Act, Chat
from engine.policies import HUMAN, ChosenAction, FrontKind, HumanAbsent, SeatAnswer, SeatTurn, participant_id
from puzzles import GAMES, ChatLine, Game, Reply
from runners.seats.ending import ending

TIME_RAN_OUT = "the turn's time ran out"


class _Pending:
    """A turn waiting for the person's answer; its clock runs from when the page first drew it."""

    def __init__(self, turn: SeatTurn) -> None:
        self.turn = turn
        self.answered = anyio.Event()
        self.reply: Reply | None = None

    def seconds_left(self) -> float:
        return self.turn.seconds_left()


def _whole(prompt: Any) -> dict[str, Any]:
    """The prompt as JSON data with its defaults written out (``SeatPrompt`` leaves them out), so
    the page need not know them."""
    data = msgspec.to_builtins(prompt)
    for field in msgspec.structs.fields(prompt):
        data.setdefault(field.encode_name, msgspec.to_builtins(getattr(prompt, field.name)))
    return data


class BrowserFront:
    """One seat played at one page (``/seat/TOKEN``) for the whole run."""

    kind: FrontKind = "browser"

    def __init__(self, role: str, total: int, participant: str | None = None) -> None:
        self.role = role
        self.token = secrets.token_urlsafe(16)
        self.total = total  # games in the run
        self.participant = participant
        self.named = anyio.Event()  # set once the participant id is known
        if participant is not None:
            self.named.set()
        self.game: int | None = None  # id of the game in play (or the last one)
        self.prompt: Any = None  # the seat's latest prompt in this game
        self.conversation: list[ChatLine] = []
        self.notes: list[str] = []  # what the page says about the turn beyond the game's notices
        self.pending: _Pending | None = None
        self.ran_out: tuple[int, int] | None = None  # (game, turn) whose time ran out last
        self.over = False  # the game in play has ended
        self.last: dict[str, Any] | None = None  # the outcome of the last game that ended
        self.done = False  # the run is over
        self.told = anyio.Event()  # the page has heard that the run is over
        self.gone = False  # the person has left: their turns end the game as human_absent
        self.ended_by: str | None = None  # the partner who left the game in play: this seat's turns end it
        self.version = time.time_ns() // 1_000_000  # never one a page has from before a restart
        self._changed = anyio.Event()

    # ---- the page's side ----

    def changed(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_change(self, since: int, seconds: float) -> None:
        """Return when the state is newer than ``since`` (at once if it is), or after ``seconds``."""
        if since != self.version:
            return
        with anyio.move_on_after(seconds):
            await self._changed.wait()

    def name(self, text: str) -> str:
        """Record the participant id the page gave; ValueError with the reason if it is not one."""
        if self.participant is not None:
            raise ValueError(f"the participant id is already {self.participant}")
        self.participant = participant_id(text)
        self.named.set()
        self.changed()
        return self.participant

    def _turn(self, game: int | None, turn: int | None) -> _Pending:
        """The turn an answer or a check is for: the one waiting, if the page means that one."""
        pending = self.pending
        if pending is not None:
            prompt = pending.turn.prompt
            if (game is None or game == prompt.game_id) and (turn is None or turn == prompt.turn):
                if pending.seconds_left() <= 0:
                    raise ValueError(TIME_RAN_OUT)
                return pending
        if self.ran_out is not None and (game, turn) in (self.ran_out, (None, None)):
            raise ValueError(TIME_RAN_OUT)
        raise ValueError("it is not your turn")

    def shown(self, game: int | None = None, turn: int | None = None) -> float:
        """The page drew the turn: its clock starts (the first time). The seconds left."""
        pending = self._turn(game, turn)
        if pending.turn.shown_at is None:
            pending.turn.shown()
            self.changed()
        return pending.seconds_left()

    def check(self, kind: str, values: dict[str, Any], game: int | None = None, turn: int | None = None) -> str:
        """One filled-in form as the action's one line; ValueError with the reason."""
        return self._turn(game, turn).turn.describe(ChosenAction(kind, values))

    def answer(self, answer: SeatAnswer, game: int | None = None, turn: int | None = None) -> None:
        """The person's whole turn; ValueError with the reason (the turn is still theirs then)."""
        pending = self._turn(game, turn)
        pending.reply = pending.turn.reply(answer)
        pending.answered.set()
        self.notes = []

    def state(self) -> dict[str, Any]:
        """What the page shows now: only this seat's."""
        pending = self.pending
        if self.participant is None:
            status = "need_participant"
        elif self.done:
            status = "done"
        elif pending is not None:
            status = "your_turn"
        elif self.over:
            status = "game_over"
        else:
            status = "waiting"
        return {
            "version": self.version, "status": status, "role": self.role, "participant": self.participant,
            "game": None if self.game is None else self.game + 1, "games": self.total,
            "prompt": None if self.prompt is None else _whole(self.prompt),
            "conversation": [{"turn": c.turn, "sender": c.sender, "text": c.text} for c in self.conversation],
            "notes": list(self.notes), "last": self.last,
            "seconds_left": None if pending is None else round(pending.seconds_left(), 1),
            "clock_running": pending is not None and pending.turn.shown_at is not None,
        }

    # ---- the engine's side (engine.policies.seat.FrontEnd) ----

    async def play(self, turn: SeatTurn) -> Reply:
        pending = self.pending = _Pending(turn)
        self.prompt = turn.prompt  # the notes stay: a turn that timed out is told about on the next
        self.changed()
        try:
            if not (self.gone or self.ended_by):
                await pending.answered.wait()
            if self.gone:
                raise HumanAbsent(f"{self.role} left", role=self.role)
            if self.ended_by is not None:
                raise HumanAbsent(f"{self.ended_by} left", role=self.ended_by)
            assert pending.reply is not None
            return pending.reply
        finally:  # answered, or cancelled when the turn's time is up
            self.pending = None
            self.changed()

    def leave(self, partner: str | None = None) -> None:
        """The person has left (or, given ``partner``, that partner of the game in play has): the turn
        waiting here, or the next, ends the game as human_absent, on the account of who left."""
        if partner is None:
            self.gone = True
        else:
            self.ended_by = partner
        if self.pending is not None:
            self.pending.answered.set()
        self.changed()

    def timed_out(self, turn: SeatTurn) -> None:
        self.ran_out = (turn.prompt.game_id, turn.prompt.turn)
        self.notes = [f"Your time for turn {turn.prompt.turn} ran out: the turn was played without you."]
        self.changed()

    # ---- following the games ----

    def new_game(self, game_id: int) -> None:
        """A game starts: nothing of the one before stays but its outcome."""
        self.game = game_id
        self.prompt = None
        self.conversation = []
        self.notes = []
        self.ran_out = None
        self.over = False
        self.ended_by = None
        self.changed()

    def heard(self, address: str, message: Any) -> None:
        """A bus tap: keep what this seat was sent and what it said."""
        if isinstance(message, Chat) and address == self.role and message.recipient == self.role:
            self.conversation.append(ChatLine(message.turn, message.sender, message.text))
            self.changed()
        elif isinstance(message, Act) and message.role == self.role and message.message:
            self.conversation.append(ChatLine(message.turn, self.role, message.message))
            self.changed()

    def game_over(self, record: Any, game: Game) -> None:
        self.last = {"game": record.game_id + 1, **ending(record, game, self.role)}
        self.over = True
        self.changed()


class BrowserSeats:
    """Every seat of the run a person plays at a page (``engine.policies.seat.Seats``), and the observer
    that tells each front when its games start and end."""

    def __init__(self, roles: Iterable[str], total: int, participants: Mapping[str, str] | None = None) -> None:
        participants = participants or {}
        self.fronts = {role: BrowserFront(role, total, participants.get(role)) for role in roles}
        self.by_token = {front.token: front for front in self.fronts.values()}

    def front(self, role: str, seed: int) -> BrowserFront:
        return self.fronts[role]

    def seated(self, spec: Any) -> list[BrowserFront]:
        return [front for role, front in self.fronts.items() if spec.agents.get(role) == HUMAN]

    async def named(self) -> None:
        """Return once every seat has its participant id."""
        for front in self.fronts.values():
            await front.named.wait()

    def game_started(self, spec: Any):
        fronts = self.seated(spec)
        for front in fronts:
            front.new_game(spec.game_id)

        def tap(address: str, message: Any) -> None:
            for front in fronts:
                front.heard(address, message)

        return tap if fronts else None

    def game_finished(self, spec: Any, record: Any) -> None:
        game = GAMES[spec.game]
        for front in self.seated(spec):
            front.game_over(record, game)

    def finish(self) -> None:
        """The run is over: every page says so."""
        for front in self.fronts.values():
            front.done = True
            front.changed()

    async def told(self) -> None:
        """Return once every page has heard that the run is over."""
        for front in self.fronts.values():
            await front.told.wait()
