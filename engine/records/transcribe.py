"""Making transcripts (``engine.records.transcripts`` says what they hold and where they go): an
observer taps each game's bus and, when the game ends, encodes its transcript as one JSON line.

A messages-only transcript (the default) is cheap because a run of scripted games makes thousands a
second: its tap is called for the three kinds it keeps only, makes each turn in one call as the
turn's Act passes (from the frozen structs the game sends, shared with it), and when the game ends
only gives each turn its progress; one reused encoder writes the line into the writer's block
(``engine.records.blocks``), compressed and written a block at a time. Building the turns field by
field as the game went, and a write per game, cost scripted runs about 9% more CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from bus import Act, Chat, TapOn, YourTurn
from puzzles import get_game

from engine.records.blocks import BlockWriter, game_id_of
from engine.records.record import GameRecord
from engine.records.transcripts import (
    DETAIL_MESSAGES, FORMAT_ERROR_REPLY_CHARS, TRANSCRIPTS_FILE, Delivered, Transcript, TranscriptTurn,
)
from engine.plan.spec import GameSpec


def game_instance(spec: GameSpec) -> Any:
    """What the game of ``spec`` was as it started (``Records.instance``), as plain data; None if the
    game gives none or cannot be built (the game itself then ends in an error that says why)."""
    game = get_game(spec.game)
    if game.records.instance is None:
        return None
    try:
        state = game.rules.new(spec.params, spec.seed, tuple(spec.agents), spec.max_turns)
        return msgspec.to_builtins(game.records.instance(state))
    except Exception:  # noqa: BLE001 - a transcript never stops a game
        return None


class _Collector:
    """A full transcript, built as the game goes (views and conversations are taken as they were)."""

    def __init__(self, spec: GameSpec) -> None:
        self.transcript = Transcript(game_id=spec.game_id, spec=spec, instance=game_instance(spec))
        self._open: dict[str, TranscriptTurn] = {}
        self._turns: dict[tuple[int, str], TranscriptTurn] = {}  # (turn, role) -> its turn

    def tap(self, address: str, message: Any) -> None:
        if isinstance(message, YourTurn):
            started = TranscriptTurn(
                turn=message.turn, role=message.role, view=message.view,
                feedback=message.feedback, notices=message.notices,
            )
            self._open[message.role] = self._turns[message.turn, message.role] = started
            self.transcript.turns.append(started)
        elif isinstance(message, Act):
            turn = self._open.pop(message.role, None)
            if turn is None:
                return
            turn.conversation = list(message.context.conversation) if message.context is not None else []
            turn.prompt = message.prompt
            turn.reply = message.reply
            turn.message = message.message
            turn.actions = list(message.actions)
            turn.rejected = list(message.rejected)
            turn.format_error = message.format_error
            turn.usage = message.usage
            turn.latency = message.latency
            turn.candidates = list(message.candidates)
            turn.chosen = message.chosen
            turn.human = message.human
            if message.tokens is not None:
                turn.tokens = message.tokens
        elif isinstance(message, Chat):
            # Delivered before its Act reaches the Environment, or later (a channel held it: a
            # delay, or simultaneous turns): it joins the turn it was said in.
            turn = self._turns.get((message.turn, message.sender))
            if turn is not None:
                turn.delivered.append(Delivered(message.recipient, message.text))

    def finished(self, record: GameRecord) -> Transcript:
        transcript = self.transcript
        transcript.outcome = record.outcome
        logs = {(log.turn, log.role): log for log in record.turn_log}
        for turn in transcript.turns:
            log = logs.get((turn.turn, turn.role))
            if log is not None:
                turn.progress = log.progress
                turn.rejected = list(log.rejected)  # by the parser and by the game
        return transcript


class _Turn(msgspec.Struct, omit_defaults=True, gc=False):
    """A messages-only turn as it is written: ``TranscriptTurn``'s fields in its order, with empty
    tuples for its empty lists (what is empty is not written), made in one call; its progress and
    rejected actions are set when the game ends."""

    turn: int
    role: str
    view: Any = None
    feedback: Any = None
    notices: tuple[str, ...] = ()
    conversation: Any = ()
    prompt: Any = None
    reply: str = ""
    message: str = ""
    actions: Any = ()
    rejected: Any = ()
    format_error: str | None = None
    delivered: Any = ()
    progress: int | float | None = None
    usage: Any = None
    latency: float | None = None
    candidates: Any = ()
    chosen: int | None = None
    human: Any = None
    heard: Any = ()
    tokens: Any = None


_KEPT = frozenset((YourTurn, Act, Chat))


def _recipients(chats: list[Chat] | None, message: str, heard: Any = (), delivered: Any = ()) -> tuple[Any, Any]:
    """Of the chats that carried a turn's ``message``: who heard it as sent, and what the channel
    delivered changed, after those already known (each () if none)."""
    if chats is None:
        return heard, delivered
    for chat in chats:
        if chat.text == message:
            heard = [*heard, chat.recipient]
        else:
            delivered = [*delivered, Delivered(chat.recipient, chat.text)]
    return heard, delivered


class _MessagesCollector(msgspec.Struct, gc=False):
    """A messages-only transcript: its ``tap`` is called for the kinds it keeps only (``_KEPT``: 9
    of a scripted game's 16 messages). A YourTurn opens a turn (its feedback and notices, frozen,
    shared with the game, kept without its view); the turn's Act makes the turn as it is written, in
    one call, with the chats sent before it; a chat delivered later (a channel held it) joins the
    turn it was said in.
    When the game ends, each turn takes its progress and rejected actions from the record's turn
    log. Hand-written for speed: a struct (made in one C call, untracked by the garbage collector:
    it holds no cycle), a bound method as the tap (the cheapest call), the kinds compared exactly
    (each is its own tagged struct), and one loop over the turns at the end."""

    spec: GameSpec
    played: list[Any] = []  # per turn: a _Turn, or [turn, role, feedback, notices, chats] until its Act
    _open: dict[str, int] = {}  # role -> its open turn's place in ``played``
    _places: dict[tuple[int, str], int] = {}  # (turn, role) -> the turn's place in ``played``
    _unplayed: int = 0  # turns opened and not (yet) played

    def tap(self, address: str, message: Any) -> None:
        kind = type(message)
        if kind is YourTurn:
            played = self.played
            self._open[message.role] = self._places[message.turn, message.role] = len(played)
            played.append([message.turn, message.role, message.feedback, message.notices, None])
            self._unplayed += 1
        elif kind is Act:  # kept without its context, view and reply, which the game can let go
            place = self._open.pop(message.role, None)
            if place is None:
                return
            turn, role, feedback, notices, chats = self.played[place]
            text = message.message
            heard, delivered = _recipients(chats, text)
            error = message.format_error
            latency = message.latency
            candidates = message.candidates
            self.played[place] = _Turn(
                turn, role, None, feedback, notices, (), None,
                "" if error is None else message.reply[:FORMAT_ERROR_REPLY_CHARS], text, message.actions,
                message.rejected, error, delivered, None, message.usage,
                None if latency is None else round(latency * 1e6) / 1e6,  # to the microsecond, as round(x, 6) but faster
                [msgspec.structs.replace(c, reply="") for c in candidates] if candidates else (),
                message.chosen, message.human, heard, message.tokens,
            )
            self._unplayed -= 1
        else:  # a Chat, delivered before its Act reaches the Environment, or later (a channel held it)
            place = self._places.get((message.turn, message.sender))
            if place is None:
                return
            entry = self.played[place]
            if type(entry) is list:  # the turn's Act has not passed yet
                entry[4] = [*(entry[4] or ()), message]
                return
            entry.heard, entry.delivered = _recipients([message], entry.message, entry.heard, entry.delivered)

    def finished(self, record: GameRecord) -> Transcript:
        played = self.played
        if self._unplayed:  # turns opened and never played: no message, no action
            for place, entry in enumerate(played):
                if type(entry) is list:
                    turn, role, feedback, notices, chats = entry
                    heard, delivered = _recipients(chats, "")
                    played[place] = _Turn(turn, role, None, feedback, notices, delivered=delivered, heard=heard)
        log = record.turn_log
        aligned = len(log) == len(played)
        if aligned:  # the turn log is the turns played, in order (as almost always)
            for turn, logged in zip(played, log):
                if logged.turn != turn.turn or logged.role != turn.role:
                    aligned = False
                    break
                turn.progress = logged.progress
                turn.rejected = logged.rejected  # by the parser and by the game
        if not aligned:
            by_turn = {(t.turn, t.role): t for t in log}
            for turn in played:
                found = by_turn.get((turn.turn, turn.role))
                if found is not None:
                    turn.progress = found.progress
                    turn.rejected = found.rejected
        return Transcript(game_id=self.spec.game_id, spec=self.spec, outcome=record.outcome, turns=played, detail=DETAIL_MESSAGES)


_UNSTORABLE = (UnicodeEncodeError, msgspec.EncodeError, TypeError, ValueError, OverflowError)


class TranscriptMaker:
    """A game observer that makes each finished game's transcript, encoded as one JSON line: full
    (``full=True``) or messages only. A Ray worker sends the lines to the driver with the records."""

    def __init__(self, full: bool = True) -> None:
        self.full = full
        self._collectors: dict[int, _Collector | _MessagesCollector] = {}
        self._encoder = msgspec.json.Encoder()
        self.made: dict[int, bytes] = {}  # game id -> its line, until taken (``take``)

    def game_started(self, spec: GameSpec):
        if self.full:
            collector = self._collectors[spec.game_id] = _Collector(spec)
            return collector.tap
        messages = self._collectors[spec.game_id] = _MessagesCollector(spec)
        return TapOn(messages.tap, _KEPT)

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        line = self.line(spec, record)
        if line is not None:
            self.made[spec.game_id] = line

    def take(self, game_id: int) -> bytes | None:
        return self.made.pop(game_id, None)

    def line(self, spec: GameSpec, record: GameRecord) -> bytes | None:
        """The game's transcript as a JSON line, or None for a game this observer did not see start."""
        out = bytearray()
        return bytes(out) if self.encode_into(spec, record, out) else None

    def encode_into(self, spec: GameSpec, record: GameRecord, out: bytearray) -> bool:
        """Append the game's transcript line to ``out``; False for a game this observer did not see start."""
        collector = self._collectors.pop(spec.game_id, None)
        if collector is None:
            return False
        transcript = collector.finished(record)
        start = len(out)
        try:
            self._encoder.encode_into(transcript, out, -1)
        except _UNSTORABLE as exc:
            # Kept as a stub naming the problem: the game's record still says what was played.
            del out[start:]
            self._encoder.encode_into(Transcript(
                game_id=transcript.game_id, spec=transcript.spec, instance=transcript.instance,
                outcome=f"{transcript.outcome} (turns not storable: {type(exc).__name__})", detail=transcript.detail,
            ), out, -1)
        out.append(10)
        return True


class TranscriptWriter(TranscriptMaker):
    """A ``TranscriptMaker`` that appends each game's line to ``transcripts.jsonl.gz`` as the game
    ends (or, for games played elsewhere, as ``write`` is given their lines), a block at a time
    (``engine.records.blocks``). Given ``records`` (the run's record writer), it writes each game's
    record (``record``) once the game's transcript is on disk, so that no kill or full disk leaves a
    record without its transcript: a game whose transcript was lost has no record either, and
    ``--resume`` plays it again."""

    def __init__(self, run_path: Path, full: bool = True, at_once: bool = False,
                 records: Callable[[GameRecord], None] | None = None) -> None:
        super().__init__(full)
        self.path = Path(run_path) / TRANSCRIPTS_FILE
        self._records = records
        self._held: list[GameRecord] = []  # records whose transcripts are not on disk yet
        # cuts off a block a kill left unfinished; ``at_once``: a block per game, written as it ends
        self._blocks = BlockWriter(self.path, block_bytes=0 if at_once else None, on_written=self._release)

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        if self.encode_into(spec, record, self._blocks.buffer):
            self._blocks.added(spec.game_id)

    def write(self, line: bytes) -> None:
        game_id = game_id_of(line)
        if game_id is None:
            raise ValueError("not a transcript line")
        self._blocks.buffer += line
        self._blocks.added(game_id)

    def record(self, record: GameRecord) -> None:
        """Write ``record`` through ``records`` as soon as every transcript given so far is on disk
        (at once when it is already)."""
        self._held.append(record)
        if not self._blocks.ids:
            self._release()

    def _release(self) -> None:
        if self._records is None:
            self._held.clear()
            return
        held, self._held = self._held, []
        for record in held:
            self._records(record)

    def close(self) -> None:
        self._blocks.close()
