"""Making transcripts (``engine.records.transcripts`` says what they hold and where they go): an
observer taps each game's bus and, when the game ends, encodes its transcript as one JSON line.

A messages-only transcript (the default) is cheap because a run of scripted games makes thousands a
second: its tap only pairs each turn's messages (frozen structs, shared with the game), and the
turns are made when the game ends, each in one call, then encoded by one reused encoder into the
writer's block (``engine.records.blocks``), compressed and written a block at a time. Building them
field by field as the game went, and a write per game, cost scripted runs about 9% more CPU.
"""

from __future__ import annotations

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
        self._last: TranscriptTurn | None = None

    def tap(self, address: str, message: Any) -> None:
        if isinstance(message, YourTurn):
            turn = TranscriptTurn(
                turn=message.turn, role=message.role, view=message.view,
                feedback=message.feedback, notices=message.notices,
            )
            self._open[message.role] = turn
            self.transcript.turns.append(turn)
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
            self._last = turn
        elif isinstance(message, Chat):
            # An agent's message is delivered before its Act reaches the Environment.
            turn = self._open.get(message.sender)
            if turn is None and self._last is not None and self._last.role == message.sender:
                turn = self._last
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
    tuples for its empty lists (what is empty is not written), made in one call."""

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


_KEPT = frozenset((YourTurn, Act, Chat))


class _MessagesCollector(msgspec.Struct, gc=False):
    """A messages-only transcript: the collector is its own tap, for the kinds it keeps only
    (``_KEPT``: the bus calls it for 9 of a scripted game's 16 messages). It pairs each turn's
    feedback and notices with its Act and chats (frozen structs, shared with the game), and the
    turns are made when the game ends, in one loop, as the full collector would have made them field
    by field as the game went. The kinds are compared exactly (each is its own tagged struct).
    Hand-written for speed: a struct (made in one C call, untracked by the garbage collector: it
    holds no cycle), and no call per turn."""

    spec: GameSpec
    played: list[list[Any]] = []  # per turn: [turn, role, feedback, notices, _Acted or None, chats or None]
    _open: dict[str, list[Any]] = {}
    _last: list[Any] | None = None

    def __call__(self, address: str, message: Any) -> None:
        kind = message.__class__
        if kind is YourTurn:  # kept without its view, which the game can let go
            self._open[message.role] = entry = [message.turn, message.role, message.feedback, message.notices, None, None]
            self.played.append(entry)
        elif kind is Act:  # kept without its context, view and reply, which the game can let go
            entry = self._open.pop(message.role, None)
            if entry is not None:
                error = message.format_error
                entry[4] = (
                    message.message, message.actions, message.rejected, error,
                    "" if error is None else message.reply[:FORMAT_ERROR_REPLY_CHARS],
                    message.usage, message.latency, message.candidates, message.chosen, message.human,
                )
                self._last = entry
        else:  # a Chat, delivered before its Act reaches the Environment
            entry = self._open.get(message.sender)
            if entry is None:
                entry = self._last
                if entry is None or entry[1] != message.sender:
                    return
            if entry[5] is None:
                entry[5] = [message]
            else:
                entry[5].append(message)

    def finished(self, record: GameRecord) -> Transcript:
        log = record.turn_log
        turns = self._turns(log, True) if len(log) == len(self.played) else None
        if turns is None:  # the turn log is not the turns played, in order
            by_turn = {(t.turn, t.role): t for t in log}
            turns = self._turns([by_turn.get((e[0], e[1])) for e in self.played], False)
        return Transcript(game_id=self.spec.game_id, spec=self.spec, outcome=record.outcome, turns=turns, detail=DETAIL_MESSAGES)

    def _turns(self, logged_turns: list[Any], check: bool) -> list[_Turn] | None:
        """Each played turn with its turn in the log (None if it has none); with ``check``, None
        unless each is the log's turn of the same number and role."""
        turns = []
        for (turn, role, feedback, notices, act, chats), logged in zip(self.played, logged_turns):
            if check and (logged.turn != turn or logged.role != role):
                return None
            message = "" if act is None else act[0]
            heard = delivered = ()
            if chats is not None:
                for chat in chats:  # who heard the message as sent; what the channel changed
                    if chat.text == message:
                        heard = [*heard, chat.recipient]
                    else:
                        delivered = [*delivered, Delivered(chat.recipient, chat.text)]
            if act is None:
                turns.append(_Turn(turn, role, None, feedback, notices, delivered=delivered, heard=heard,
                                   rejected=() if logged is None else logged.rejected, progress=None if logged is None else logged.progress))
                continue
            _, actions, rejected, error, reply, usage, latency, candidates, chosen, human = act
            turns.append(_Turn(
                turn, role, None, feedback, notices, (), None, reply, message, actions,
                rejected if logged is None else logged.rejected,  # by the parser and by the game
                error, delivered, None if logged is None else logged.progress, usage,
                None if latency is None else round(latency * 1e6) / 1e6,  # to the microsecond, as round(x, 6) but faster
                [msgspec.structs.replace(c, reply="") for c in candidates] if candidates else (),
                chosen, human, heard,
            ))
        return turns


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
        return TapOn(messages, _KEPT)

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
    (``engine.records.blocks``)."""

    def __init__(self, run_path: Path, full: bool = True, at_once: bool = False) -> None:
        super().__init__(full)
        self.path = Path(run_path) / TRANSCRIPTS_FILE
        # cuts off a block a kill left unfinished; ``at_once``: a block per game, written as it ends
        self._blocks = BlockWriter(self.path, block_bytes=0 if at_once else None)

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        if self.encode_into(spec, record, self._blocks.buffer):
            self._blocks.added(spec.game_id)

    def write(self, line: bytes) -> None:
        game_id = game_id_of(line)
        if game_id is None:
            raise ValueError("not a transcript line")
        self._blocks.buffer += line
        self._blocks.added(game_id)

    def close(self) -> None:
        self._blocks.close()


