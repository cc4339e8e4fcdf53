"""A run directory: the run's config, one JSON line per game, resumable.

While a run goes on, records are appended in the order games finish, each with one write so that a
killed run loses at most the games in flight. When every game of the run is recorded, the file is
rewritten sorted by game id (last record per game wins), so that the same config and seed give a
byte-identical file whether the run was interrupted or not.

Format 2 is written; format 1 is read (``engine.records.upgrade``), and a format-1 directory that is
resumed is upgraded in place first, so that its results stay one format.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

import msgspec

from engine.backends import BackendSettings
from engine.records.ids import IdCounts
from engine.records.ordered import Game, Survey, read_in_order, sort_results, whole_lines
from engine.records.planned import PlanCheck
from engine.records.record import GameRecord, RecordKey, decode_key, decode_record, encode_record, encode_storable, is_infra_error
from engine.plan.grid import Grid
from engine.records.upgrade import is_format_1, upgrade_current, upgrade_plan, upgrade_record, upgrade_saved_plan

Plan = Grid

FORMAT = 2
CONFIG_FILE = "config.json"
MODELS_FILE = "models.json"  # how model calls are made and paced (``BackendSettings``), saved with the run
RESULTS_FILE = "results.jsonl"
LOG_FILE = "run.log"
LOCK_FILE = ".lock"
DAMAGED_FILE = "results.damaged.jsonl"  # lines moved aside by a repair


class RunDirError(Exception):
    """A run directory cannot be used as asked; the message says why."""


class RunMeta(msgspec.Struct):
    format: int
    config: Plan


class _AnyMeta(msgspec.Struct):
    format: int
    config: msgspec.Raw


def decode_any_record(line: bytes) -> GameRecord:
    """A record of format 2 (as its game records it now), or of format 1 upgraded."""
    try:
        return upgrade_current(decode_record(line))
    except msgspec.ValidationError:
        raw = msgspec.json.decode(line)
        if isinstance(raw, dict) and is_format_1(raw):
            return upgrade_record(raw)
        raise


class RunDir:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.config_path = self.path / CONFIG_FILE
        self.results_path = self.path / RESULTS_FILE
        self.log_path = self.path / LOG_FILE

    @classmethod
    def create(cls, path: Path | str, config: Plan) -> RunDir:
        run = cls(path)
        if run.config_path.exists() or run.results_path.exists():
            raise RunDirError(f"{run.path} already holds a run; pass --resume {run.path} or another --out")
        run.path.mkdir(parents=True, exist_ok=True)
        _write_atomic(run.config_path, msgspec.json.format(msgspec.json.encode(RunMeta(FORMAT, config))) + b"\n")
        return run

    @classmethod
    def open(cls, path: Path | str) -> RunDir:
        run = cls(path)
        if not run.config_path.exists():
            raise RunDirError(f"{run.path} is not a run directory (no {CONFIG_FILE})")
        return run

    def model_settings(self) -> BackendSettings | None:
        """The model settings saved with the run, or None (a run saved before they were)."""
        path = self.path / MODELS_FILE
        if not path.exists():
            return None
        try:
            return msgspec.json.decode(path.read_bytes(), type=BackendSettings)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise RunDirError(f"{path} cannot be read: {exc}") from None

    def save_model_settings(self, settings: BackendSettings) -> None:
        _write_atomic(self.path / MODELS_FILE, msgspec.json.format(msgspec.json.encode(settings)) + b"\n")

    def format(self) -> int:
        try:
            return msgspec.json.decode(self.config_path.read_bytes(), type=_AnyMeta).format
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise RunDirError(f"{self.config_path} cannot be read: {exc}") from None

    def config(self) -> Plan:
        try:
            meta = msgspec.json.decode(self.config_path.read_bytes(), type=_AnyMeta)
            if meta.format == 1:
                return upgrade_plan(msgspec.json.decode(meta.config))
            if meta.format != FORMAT:
                raise RunDirError(f"{self.config_path} has format {meta.format}, this version reads 1 and {FORMAT}")
            return upgrade_saved_plan(msgspec.json.decode(meta.config, type=Plan), self._first_record())
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise RunDirError(f"{self.config_path} cannot be read: {exc}") from None

    def _first_record(self) -> bytes | None:
        """The first line of the results, or None."""
        try:
            with self.results_path.open("rb") as f:
                return f.readline() or None
        except FileNotFoundError:
            return None

    def upgrade(self) -> bool:
        """Rewrite a format-1 directory as format 2 (results first, then the config); True if it
        was format 1. Hold the lock while calling this."""
        if self.format() != 1:
            return False
        plan = self.config()
        drop_partial_tail(self.results_path)
        if self.results_path.exists():
            lines = []
            for number, _, line in self._lines():
                try:
                    lines.append(encode_record(decode_any_record(line)) + b"\n")
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    raise RunDirError(f"{self.results_path} line {number} is damaged: {exc}") from None
            _write_atomic(self.results_path, b"".join(lines))
        _write_atomic(self.config_path, msgspec.json.format(msgspec.json.encode(RunMeta(FORMAT, plan))) + b"\n")
        return True

    def lock(self) -> Any:
        """Hold the directory for this process; RunDirError if another process holds it.
        The lock lasts as long as the returned file stays open."""
        handle = open(self.path / LOCK_FILE, "a+b")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunDirError(f"{self.path} is in use by another process") from None
        return handle

    def recorded_keys(self):
        """The key (id, outcome, error kind, scores) of the last record of each game, one at a time.
        A last line cut short by a kill is removed first; a damaged line is a RunDirError naming it."""
        drop_partial_tail(self.results_path)
        for _, _, key, _ in self._last_lines():
            yield key

    def _damaged(self, number: int, exc: Exception) -> RunDirError:
        return RunDirError(
            f"{self.results_path} line {number} is damaged: {exc}; "
            f"move damaged lines aside with --resume {self.path} --repair"
        )

    def _key(self, number: int, line: bytes) -> RecordKey:
        try:
            return decode_key(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise self._damaged(number, exc) from None

    def writer(self) -> RecordWriter:
        return RecordWriter(self.results_path)

    def records(self) -> list[GameRecord]:
        """Every game recorded, once: a game played again (after an infrastructure error) counts by
        its last record."""
        return list(self.iter_records())

    def _lines(self):
        """(line number, offset, line) of every whole line of the results."""
        if not self.results_path.exists():
            return
        with self.results_path.open("rb") as f:
            yield from whole_lines(f)

    def _last_lines(self):
        """(line number, offset, key, line) of the last line of each game, in file order, in two
        passes that keep a count per game id (a byte each), never the records."""
        counts = IdCounts()
        for number, _, line in self._lines():
            counts.add(self._key(number, line).game_id, 1)
        for number, offset, line in self._lines():
            key = self._key(number, line)
            if counts.add(key.game_id, -1) == 0:
                yield number, offset, key, line

    def iter_records(self) -> Iterator[GameRecord]:
        """The records of ``records()``, one at a time (memory set by one record, not the run)."""
        return (self._record(number, line) for number, _, _, line in self._last_lines())

    def _record(self, number: int, line: bytes) -> GameRecord:
        try:
            return decode_any_record(line)
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            raise self._damaged(number, exc) from None

    def contradictions(self, plan: Plan, *, skip_damaged: bool = False):
        """(line number, game id, what differs, in words) of each record whose seed, game,
        parameters, options or agents are not those ``plan`` gives its game: a record changed by
        hand, or of another run pasted in (``engine.records.planned``). Records of games the plan
        does not have are left to ``recorded_games``."""
        check = PlanCheck(plan)
        for number, _, line in self._lines():
            try:
                game_id, what = check.differs(line)
            except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
                if skip_damaged:  # a reader that tolerates damage (the report) counts it elsewhere
                    continue
                raise self._damaged(number, exc) from None
            if what is not None:
                yield number, game_id, what

    def contradiction_error(self, plan: Plan, *, skip_damaged: bool = False, resume: str = "--resume") -> RunDirError | None:
        """A RunDirError naming the first record that contradicts ``plan``, or None; its advice is to
        move it aside with ``resume`` (the flag, or a whole command) and ``--repair``."""
        return next((RunDirError(
            f"{self.results_path} line {number} holds game {game_id} with {what} than the run's plan "
            f"gives it (a record changed by hand or of another run); move it aside with {resume} {self.path} --repair"
        ) for number, game_id, what in self.contradictions(plan, skip_damaged=skip_damaged)), None)

    def conflicts(self, *, skip_damaged: bool = False) -> Iterator[tuple[int, int, int]]:
        """(game id, line number, line number) of each game recorded twice with different records, the
        first two such lines: a run cannot choose between them (``merge_runs`` refuses the same). A
        record of a game lost to the infrastructure counts as none. Two passes; only the records of
        games recorded more than once are kept. A damaged line is a RunDirError, or skipped."""
        counts = IdCounts()
        twice: set[int] = set()
        for _, key, _ in self._keys(skip_damaged):
            if not is_infra_error(key) and counts.add(key.game_id, 1) == 2:
                twice.add(key.game_id)
        if not twice:
            return
        first: dict[int, tuple[int, bytes]] = {}
        for number, key, line in self._keys(skip_damaged):
            if key.game_id not in twice or is_infra_error(key):
                continue
            seen = first.setdefault(key.game_id, (number, line))
            if seen[1] != line:
                yield key.game_id, seen[0], number
                twice.discard(key.game_id)

    def _keys(self, skip_damaged: bool) -> Iterator[tuple[int, RecordKey, bytes]]:
        for number, _, line in self._lines():
            try:
                key = self._key(number, line)
            except RunDirError:
                if skip_damaged:
                    continue
                raise
            yield number, key, line

    def conflict_error(self) -> RunDirError | None:
        """A RunDirError naming the first game recorded twice with different records, or None."""
        return next((RunDirError(
            f"{self.results_path} lines {one} and {other} hold different records of game {game_id} (refusing to "
            f"choose, as merge does); move every record of such games aside, to play them again, with --resume {self.path} --repair"
        ) for game_id, one, other in self.conflicts()), None)

    def repair(self, total: int, plan: Plan | None = None) -> tuple[int, Path]:
        """Move aside every line that is not a whole record of a game of the plan (``total`` games),
        given the ``plan`` every record that contradicts it (``contradictions``), and every record of
        a game recorded twice with different records (``conflicts``: the game is played again):
        appended to ``results.damaged.jsonl`` beside the results, which are rewritten without them.
        Returns how many lines were moved, and where."""
        drop_partial_tail(self.results_path)
        check = PlanCheck(plan) if plan is not None else None
        conflicted = {game_id for game_id, _, _ in self.conflicts(skip_damaged=True)}
        aside = self.results_path.with_name(DAMAGED_FILE)
        tmp = self.results_path.with_suffix(".jsonl.tmp")
        moved = 0
        with tmp.open("wb") as kept, aside.open("ab") as damaged:
            for _, _, line in self._lines():
                try:
                    record = decode_any_record(line)
                    whole = (0 <= record.game_id < total and record.game_id not in conflicted
                             and (check is None or check.differs(line)[1] is None))
                except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
                    whole = False
                if whole:
                    kept.write(line)
                else:
                    damaged.write(line)
                    moved += 1
        if moved:
            os.replace(tmp, self.results_path)
        else:
            tmp.unlink()
            if aside.stat().st_size == 0:
                aside.unlink()
        return moved, aside

    def move_aside(self, game_ids: Container[int], name: str) -> int:
        """Move every line of the games in ``game_ids`` from the results to the file ``name`` beside
        them (appended, kept for reading by hand), so that those games count as not recorded and are
        played again; how many lines were moved. A kill half-way leaves them in both files, and the
        next call moves them again."""
        drop_partial_tail(self.results_path)
        moving = [line for number, _, line in self._lines() if self._key(number, line).game_id in game_ids]
        if not moving:
            return 0
        with (self.path / name).open("ab") as aside:
            aside.writelines(moving)
        _write_atomic(self.results_path, b"".join(line for number, _, line in self._lines()
                                                  if self._key(number, line).game_id not in game_ids))
        return len(moving)

    def finalize(self, total: int) -> bool:
        """Rewrite the results sorted by game id once all ``total`` games are recorded: the last line
        of each game, then those of games the plan does not have. Memory does not grow with the run
        (``engine.records.ordered``); a file sorted already is left as it is."""
        return sort_results(self.results_path, total, self._line_id)

    def _line_id(self, number: int, line: bytes) -> int:
        return self._key(number, line).game_id

    def ordered(self) -> tuple[Survey, Iterator[Game]]:
        """The results' survey and each game's lines in game-id order (``engine.records.ordered``),
        without keeping the records; RunDirError at a damaged line, before any game is given."""
        if not self.results_path.exists():
            return Survey(), iter(())
        return read_in_order(self.results_path, self._line_id)

    def last_records(self, games: Iterator[Game]) -> Iterator[GameRecord]:
        """The last record of each of ``games`` (as ``ordered`` gives them), decoded one at a time."""
        return (self._record(*lines[-1]) for _, lines in games)


class StorageError(OSError):
    """A record could not be written (a full disk, a file size limit, a directory gone); the
    results hold every record written before it, and no part of this one."""


class RecordWriter:
    """Appends records, one unbuffered write per record. The run's lock makes it the file's only
    writer, so it keeps the file's end itself (where a failed write is cut back to) rather than
    asking the system before every record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: Any = open(path, "ab", buffering=0)
        self._end = os.fstat(self._file.fileno()).st_size  # not tell(): appends do not follow a truncation
        self._failed: StorageError | None = None

    def write(self, record: GameRecord) -> None:
        if self._failed is not None:  # once a write failed, no other may leave half a record
            raise self._failed
        line = encode_storable(record) + b"\n"
        data = memoryview(line)
        try:
            while data:  # a raw write may be short (for instance on a full disk)
                written = self._file.write(data)
                data = data[written:]
            self._end += len(line)
        except OSError as exc:
            with contextlib.suppress(OSError):  # the next resume drops a line cut short
                self._file.truncate(self._end)  # no half record left behind
            self._failed = StorageError(exc.errno, f"cannot write {self.path}: {exc.strerror or exc}")
            raise self._failed from exc

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def drop_partial_tail(path: Path) -> None:
    """Cut a last line that a kill left without its newline."""
    if not path.exists() or (size := path.stat().st_size) == 0:
        return
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        end = data.rfind(b"\n") + 1  # 0: the file's one line is the one cut short
    if end < size:
        os.truncate(path, end)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
