"""Optimal step counts, cached: in process (an LRU) and on disk, one JSON line per result in
``$ASYMGAMES_CACHE/einstein_optima.jsonl`` (default ``~/.cache/asymgames``), keyed by the game ID,
the two action modes, the planner's budget and the planning rules.

A line is appended with one ``write`` on a file opened for appending, under an exclusive ``flock``
(a reader can see another process's write half copied, and would end a line that is not cut off);
a line that does not decode (a damaged write) is skipped, and a line that a killed process left cut
off is ended before the next is written. A miss plans and appends. Two processes
missing the same key both append the same record, which reads back the same. Threads share the
in-process cache under a lock (the engine plans in worker threads); the planning itself runs outside it.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections import OrderedDict
from pathlib import Path

import msgspec

from .board import Instance
from .planner import plan

FILE_NAME = "einstein_optima.jsonl"
RULES = 2  # bump when the planner's semantics change: older records are then ignored (2: player 1 first)
LRU_SIZE = 65_536


class Record(msgspec.Struct, frozen=True, gc=False):
    id: str
    modes: str
    budget: int
    steps: int | None
    expansions: int
    first: str
    rules: int = RULES
    answers: bool = True


def cache_dir() -> Path:
    return Path(os.environ.get("ASYMGAMES_CACHE") or Path.home() / ".cache" / "asymgames")


_memory: OrderedDict[tuple, Record] = OrderedDict()
_disk: dict[Path, dict[tuple, Record]] = {}
_decoder = msgspec.json.Decoder(Record)
_lock = threading.Lock()


def _key(game_id: str, modes: str, budget: int, answers: bool) -> tuple:
    return (game_id, modes, budget, answers)


def _load(path: Path) -> dict[tuple, Record]:
    found = _disk.get(path)
    if found is not None:
        return found
    found = {}
    try:
        data = path.read_bytes()
    except OSError:
        data = b""
    for line in data.splitlines():
        try:
            record = _decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue  # a damaged or foreign line
        if record.rules == RULES:
            found[_key(record.id, record.modes, record.budget, record.answers)] = record
    _disk[path] = found
    return found


def _append(path: Path, record: Record) -> None:
    line = msgspec.json.encode(record) + b"\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return  # no cache then; the result is still returned
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process's write may be half visible while it copies pages
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":
                    line = b"\n" + line  # end a line another write left cut off
        os.write(fd, line)
    except OSError:
        pass
    finally:
        os.close(fd)  # closing releases the lock


def optimum(instance: Instance, modes: tuple[str, str], budget: int, *, answers: bool = True) -> Record:
    """The optimal steps of ``instance`` with these modes (``steps`` None: not found within ``budget``)."""
    path = cache_dir() / FILE_NAME
    mode_text = "/".join(modes)
    key = _key(instance.id, mode_text, budget, answers)
    memory_key = (path, *key)
    with _lock:
        record = _memory.get(memory_key)
        if record is not None:
            _memory.move_to_end(memory_key)
            return record
        disk = _load(path)
        record = disk.get(key)
    if record is None:
        found = plan(instance, modes, budget, answers=answers)
        record = Record(instance.id, mode_text, budget, found.steps, found.expansions, found.first, answers=answers)
        with _lock:
            _append(path, record)
            disk[key] = record
    with _lock:
        _memory[memory_key] = record
        if len(_memory) > LRU_SIZE:
            _memory.popitem(last=False)
    return record


def forget() -> None:
    """Drop what this process remembers (the disk file stays)."""
    with _lock:
        _memory.clear()
        _disk.clear()


__all__ = ["FILE_NAME", "Record", "cache_dir", "forget", "optimum"]
