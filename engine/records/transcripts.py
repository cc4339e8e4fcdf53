"""Transcripts: one JSON line per game in ``transcripts.jsonl``, written when the game ends (before
its record), in one of two levels of detail.

- Full (``--transcripts``): what the game was (``instance``: for games that give one, the truth and
  each role's private information, once per game), then every turn's inputs (the view, feedback,
  notices, conversation, prompt), raw reply, parsed message and actions (on a best-of-n turn, every
  candidate and the one played), what the channel delivered, usage, latency and the role's progress
  afterwards: all a third party needs to check a game without the engine.
- Messages (the runners' default, ``detail: "messages"``): per turn only what cannot be rebuilt
  from the seed: feedback, notices, the message, actions, rejected actions, format error (with the
  reply, cut to 2000 characters), deliveries that changed the message (the recipients who got it
  as sent in ``heard``), candidates, usage, latency and progress; empty fields are left out. The
  views, the conversation and the game's instance follow from the seed and the actions
  (``runners.replay`` rebuilds them); prompts and raw replies are not kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from bus import Act, Chat, YourTurn
from puzzles import get_game

from engine.records.record import GameRecord
from engine.records.rundir import drop_partial_tail
from engine.plan.spec import GameSpec

TRANSCRIPTS_FILE = "transcripts.jsonl"


FORMAT_ERROR_REPLY_CHARS = 2000
"""How much of a reply that could not be read a messages-only transcript keeps."""


class Delivered(msgspec.Struct):
    recipient: str
    text: str


class TranscriptTurn(msgspec.Struct, kw_only=True):
    turn: int
    role: str
    view: Any = None  # what the agent saw, before the turn
    feedback: Any = None
    notices: tuple[str, ...] = ()
    conversation: list[Any] = []
    prompt: Any = None
    reply: str = ""
    message: str = ""
    actions: list[Any] = []
    rejected: list[Any] = []
    format_error: str | None = None
    delivered: list[Delivered] = []
    progress: int | float | None = None  # the role's progress after the turn
    usage: Any = None
    latency: float | None = None  # seconds the policy took to reply
    candidates: list[Any] = []  # best of n: every sampled reply, as read
    chosen: int | None = None  # and the one played (its reply, message and actions are the turn's)
    human: Any = None  # a person played the turn: response seconds, timed out (``bus.HumanTurn``)
    heard: list[str] = []  # messages only: who received the message as sent (``delivered`` holds the changed ones)

    def recipients(self) -> list[Delivered]:
        """Every delivery of the turn's message, at either level of detail."""
        return [Delivered(r, self.message) for r in self.heard] + self.delivered


class CompactTurn(TranscriptTurn, kw_only=True, omit_defaults=True):
    """A turn of a messages-only transcript: empty fields are not written."""


DETAIL_FULL = "full"
DETAIL_MESSAGES = "messages"


class Transcript(msgspec.Struct, kw_only=True):
    game_id: int
    spec: GameSpec
    instance: Any = None  # the game as it started (``Records.instance``); None for games without one, and in older transcripts
    outcome: str = ""
    turns: list[TranscriptTurn] = []
    detail: str = DETAIL_FULL  # "messages": a messages-only transcript (no views, conversation, prompts or raw replies)


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
    def __init__(self, spec: GameSpec, full: bool) -> None:
        if full:
            self.transcript = Transcript(game_id=spec.game_id, spec=spec, instance=game_instance(spec))
        else:
            self.transcript = Transcript(game_id=spec.game_id, spec=spec, detail=DETAIL_MESSAGES)
        self.full = full
        self._open: dict[str, TranscriptTurn] = {}
        self._last: TranscriptTurn | None = None

    def tap(self, address: str, message: Any) -> None:
        if isinstance(message, YourTurn):
            if self.full:
                turn = TranscriptTurn(
                    turn=message.turn, role=message.role, view=message.view,
                    feedback=message.feedback, notices=message.notices,
                )
            else:
                turn = CompactTurn(turn=message.turn, role=message.role, feedback=message.feedback, notices=message.notices)
            self._open[message.role] = turn
            self.transcript.turns.append(turn)
        elif isinstance(message, Act):
            turn = self._open.pop(message.role, None)
            if turn is None:
                return
            if self.full:
                turn.conversation = list(message.context.conversation) if message.context is not None else []
                turn.prompt = message.prompt
                turn.reply = message.reply
            elif message.format_error is not None:
                turn.reply = message.reply[:FORMAT_ERROR_REPLY_CHARS]
            turn.message = message.message
            turn.actions = list(message.actions)
            turn.rejected = list(message.rejected)
            turn.format_error = message.format_error
            turn.usage = message.usage
            turn.latency = message.latency if self.full or message.latency is None else round(message.latency, 6)
            turn.candidates = list(message.candidates) if self.full else [msgspec.structs.replace(c, reply="") for c in message.candidates]
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


class TranscriptMaker:
    """A game observer that makes each finished game's transcript, encoded as one JSON line: full
    (``full=True``) or messages only. A Ray worker sends the lines to the driver with the records."""

    def __init__(self, full: bool = True) -> None:
        self.full = full
        self._collectors: dict[int, _Collector] = {}
        self._encode = msgspec.json.Encoder().encode
        self.made: dict[int, bytes] = {}  # game id -> its line, until taken (``take``)

    def game_started(self, spec: GameSpec):
        collector = _Collector(spec, self.full)
        self._collectors[spec.game_id] = collector
        return collector.tap

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        line = self.line(spec, record)
        if line is not None:
            self.made[spec.game_id] = line

    def take(self, game_id: int) -> bytes | None:
        return self.made.pop(game_id, None)

    def line(self, spec: GameSpec, record: GameRecord) -> bytes | None:
        """The game's transcript as a JSON line, or None for a game this observer did not see start."""
        collector = self._collectors.pop(spec.game_id, None)
        if collector is None:
            return None
        transcript = collector.transcript
        transcript.outcome = record.outcome
        logs = {(log.turn, log.role): log for log in record.turn_log}
        for turn in transcript.turns:
            log = logs.get((turn.turn, turn.role))
            if log is not None:
                turn.progress = log.progress
                turn.rejected = list(log.rejected)  # by the parser and by the game
            if not self.full and turn.delivered:
                turn.heard = [d.recipient for d in turn.delivered if d.text == turn.message]
                turn.delivered = [d for d in turn.delivered if d.text != turn.message]
        try:
            encoded = self._encode(transcript)
        except (UnicodeEncodeError, msgspec.EncodeError, TypeError, ValueError, OverflowError) as exc:
            # Kept as a stub naming the problem: the game's record still says what was played.
            encoded = self._encode(Transcript(game_id=transcript.game_id, spec=transcript.spec, instance=transcript.instance,
                                              outcome=f"{transcript.outcome} (turns not storable: {type(exc).__name__})",
                                              detail=transcript.detail))
        return encoded + b"\n"


class TranscriptWriter(TranscriptMaker):
    """A ``TranscriptMaker`` that appends each line to ``transcripts.jsonl`` as its game ends (or,
    for games played elsewhere, as ``write`` is given their lines)."""

    def __init__(self, run_path: Path, full: bool = True) -> None:
        super().__init__(full)
        self.path = Path(run_path) / TRANSCRIPTS_FILE
        drop_partial_tail(self.path)  # a line a kill cut short
        self._file: Any = open(self.path, "ab", buffering=0)

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        line = self.line(spec, record)
        if line is not None:
            self.write(line)

    def write(self, line: bytes) -> None:
        data = memoryview(line)
        while data:
            data = data[self._file.write(data):]

    def close(self) -> None:
        self._file.close()


def read_transcript(run_path: Path, game_id: int) -> Transcript | None:
    """The last transcript written for ``game_id``, or None."""
    path = Path(run_path) / TRANSCRIPTS_FILE
    if not path.exists():
        return None
    decoder = msgspec.json.Decoder(Transcript)
    found = None
    needle = f'{{"game_id":{game_id},'.encode()
    with path.open("rb") as f:
        for line in f:
            if line.startswith(needle) and line.endswith(b"\n"):
                try:
                    found = decoder.decode(line)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    continue  # a damaged line: an earlier or later copy may be whole
    return found
