"""Transcripts: what was said and done in each game, one JSON line per game, written as the game
ends (``engine.records.transcribe``), in one of two levels of detail.

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

A run that asks for its calls' tokens (``--tokens``) adds to each model turn, at either level of
detail, ``tokens``: ``{"prompt_ids": [...], "completion_ids": [...], "logprobs": [...]}`` as the
server gave them (``bus.Tokens``); a turn without them has no ``tokens`` field at all, so that the
transcripts of every other run are what they always were.

The lines are kept in ``transcripts.jsonl.gz``: gzip blocks of about 128 KiB of lines, each
naming its games in its header (``engine.records.blocks`` says why gzip and why blocks), about a
tenth of the lines' size; ``zcat`` prints the lines. Runs made before kept them as plain lines in
``transcripts.jsonl``, which are still read (a resumed old run adds blocks beside them). A game
played again (a resume replays the games lost to the infrastructure) is written again: readers take
each game's last copy, and a game whose last copy is damaged has no transcript.

Every reader goes through the API here: ``read_transcript`` (one game), ``iter_transcripts``
(every game, or some, one block in memory at a time), ``full_transcripts`` (the games kept in full), ``TranscriptIndex`` (a live run, read again
as far as it grew) and ``copy_transcripts`` (merging runs).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from bus import Tokens

from engine.records.blocks import BlockWriter, GameLines
from engine.plan.spec import GameSpec

TRANSCRIPTS_FILE = "transcripts.jsonl.gz"
PLAIN_TRANSCRIPTS_FILE = "transcripts.jsonl"  # as runs kept them before: still read, no longer written
# Written when a process of the run keeps no transcripts (``--no-messages``): its games have none by
# choice, so a resume does not take them for games whose transcripts were lost (``engine.session.replaying``).
NO_TRANSCRIPTS_FILE = "transcripts.none"


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
    tokens: Tokens | UnsetType = UNSET  # the call's token ids and log-probabilities (--tokens); unset: not written

    def recipients(self) -> list[Delivered]:
        """Every delivery of the turn's message, at either level of detail."""
        return [Delivered(r, self.message) for r in self.heard] + self.delivered


DETAIL_FULL = "full"
DETAIL_MESSAGES = "messages"


class Transcript(msgspec.Struct, kw_only=True):
    game_id: int
    spec: GameSpec
    instance: Any = None  # the game as it started (``Records.instance``); None for games without one, and in older transcripts
    outcome: str = ""
    turns: list[TranscriptTurn] = []
    detail: str = DETAIL_FULL  # "messages": a messages-only transcript (no views, conversation, prompts or raw replies)


_decode = msgspec.json.Decoder(Transcript).decode


def decode_transcript(line: bytes | None) -> Transcript | None:
    """One transcript line read; None for no line or a damaged one."""
    try:
        return _decode(line) if line is not None else None
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


class TranscriptIndex(GameLines):
    """Where each game's last transcript lies in a run directory, in either format (``GameLines``);
    ``refresh`` reads only what was appended. The viewer keeps one for a live run."""

    def __init__(self, run_path: Path) -> None:
        super().__init__(Path(run_path) / PLAIN_TRANSCRIPTS_FILE, Path(run_path) / TRANSCRIPTS_FILE)

    def get(self, game_id: int) -> Transcript | None:
        """The last transcript written for ``game_id``; None if there is none or it is damaged."""
        return decode_transcript(self.line(game_id))

    def transcripts(self, game_ids: Container[int] | None = None) -> Iterator[tuple[int, Transcript]]:
        """(game id, its last transcript) of every game, or of ``game_ids``, in the order written;
        games whose last transcript is damaged are left out."""
        for game_id, line in self.lines(game_ids):
            transcript = decode_transcript(line)
            if transcript is not None and transcript.game_id == game_id:
                yield game_id, transcript


def has_transcripts(run_path: Path) -> bool:
    """The run directory has a transcripts file, in either format."""
    return any((Path(run_path) / name).is_file() for name in (TRANSCRIPTS_FILE, PLAIN_TRANSCRIPTS_FILE))


def iter_transcripts(run_path: Path, game_ids: Container[int] | None = None) -> Iterator[tuple[int, Transcript]]:
    """(game id, its last transcript) of each game of the run at ``run_path`` (or of those in
    ``game_ids``), in the order written; memory holds 8 bytes a game and one block."""
    index = TranscriptIndex(run_path)
    index.refresh()
    yield from index.transcripts(game_ids)


class _Detail(msgspec.Struct):
    game_id: int
    detail: str = DETAIL_FULL


_decode_detail = msgspec.json.Decoder(_Detail).decode


def full_transcripts(run_path: Path) -> set[int]:
    """The games of the run at ``run_path`` whose last transcript is full (``--transcripts``): each
    line's game id and detail read, the rest skipped unread."""
    index = TranscriptIndex(run_path)
    index.refresh()
    full: set[int] = set()
    for game_id, line in index.lines():
        try:
            found = _decode_detail(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if found.game_id == game_id and found.detail == DETAIL_FULL:
            full.add(game_id)
    return full


def read_transcript(run_path: Path, game_id: int) -> Transcript | None:
    """The last transcript written for ``game_id``; None if there is none or it is damaged."""
    index = TranscriptIndex(run_path)
    index.refresh()
    return index.get(game_id)


def copy_transcripts(out: Path, sources: Iterable[tuple[Path, Container[int]]]) -> int:
    """Append to the run at ``out`` the last transcript of each game of each (run, game ids) of
    ``sources``, as written; how many were copied (the file is made only if there are some)."""
    copied = 0
    blocks: BlockWriter | None = None
    try:
        for run_path, game_ids in sources:
            index = TranscriptIndex(run_path)
            index.refresh()
            for game_id, line in index.lines(game_ids):
                if blocks is None:
                    blocks = BlockWriter(Path(out) / TRANSCRIPTS_FILE)
                blocks.buffer += line if line.endswith(b"\n") else line + b"\n"
                blocks.added(game_id)
                copied += 1
    finally:
        if blocks is not None:
            blocks.close()
    return copied
