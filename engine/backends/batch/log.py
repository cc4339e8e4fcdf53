"""The run's record of its batches, ``RUN_DIR/batches.jsonl``: what a run killed while batches were in
flight needs to collect them when resumed, and never to send a call twice.

One JSON object a line, appended and forced to disk (``fsync``) before the run goes on:

- ``{"run": TOKEN, "v": 1}``, the first line: TOKEN begins every custom id of the run, in every
  process that plays it, so that the calls a resumed run makes again have the ids they had;
- ``{"intent": TAG, "model": NAME, "ids": [CUSTOM_ID, ...], "at": SECONDS}``, before a batch is sent
  (``at``: the time, Unix seconds);
- ``{"sent": TAG, "batch": BATCH_ID}``, as soon as the provider has taken it;
- ``{"collected": TAG}``, once its results were handed to its calls (and counted in this
  process's usage);
- ``{"dropped": TAG, "reason": ...}``, a batch the provider refused: its calls were never sent.

**A kill between sending and recording.** The intent is on disk before the batch is sent, the batch
id right after the provider answers. A process killed in between leaves an intent with no id: a
resumed run looks the batch up: OpenAI's batches carry the tag as metadata; Anthropic's cannot
carry any, so there the batches made from a little before ``at`` on with as many requests are the
candidates, and the one whose results hold exactly the intent's custom ids (``digest``) is adopted
(``batch_anthropic.AnthropicBatches.find``, ``BatchQueue``). The other order (the id first) cannot be
had, since the id is the provider's answer.

A line cut short by a kill is skipped. The file never holds a prompt, a reply or a key: ids only.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

BATCHES_FILE = "batches.jsonl"
VERSION = 1


class Recorded(msgspec.Struct):
    """A batch an earlier process of the run sent (or meant to): its model, the provider's id (None
    if the process ended before it was recorded), whether its results were collected."""

    model: str
    batch_id: str | None = None
    collected: bool = False
    dropped: bool = False
    requests: int = 0  # custom ids in the batch
    at: float | None = None  # when it was about to be sent (Unix seconds), if the log says
    digest: str = ""  # of its custom ids (``ids_digest``)


class BatchState(msgspec.Struct, frozen=True):
    """A batch as its provider describes it (``asymgames batches``): its status, whether it has
    ended, its requests done and failed (of ``total``), and its files (OpenAI's: the input, then the
    output and error files; none for Anthropic's)."""

    status: str
    ended: bool
    total: int
    done: int
    failed: int
    input_file: str | None = None
    output_files: tuple[str, ...] = ()


def ids_digest(ids: Iterable[str]) -> str:
    """A batch's custom ids, in any order, as one short digest: a batch found again is known by it."""
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()[:16]


class BatchLog:
    """``batches.jsonl`` of one run (``path`` None: kept in memory only, for games played outside a
    run directory). ``index`` maps the custom ids of earlier processes' batches to their tags, and
    ``wanted`` each such batch to its ids, both for the ids ``keep`` keeps (those of games the run
    will play again), so that their size is set by those games."""

    def __init__(self, path: Path | None, keep: Callable[[str], bool] = lambda custom_id: True) -> None:
        self.path = path
        self.batches: dict[str, Recorded] = {}
        self.index: dict[str, str] = {}
        self.wanted: dict[str, set[str]] = {}
        self.token = ""
        self._lock = threading.Lock()
        self._file: Any = None
        if path is not None and path.exists():
            self._read(path, keep)
        if not self.token:
            self.token = os.urandom(4).hex()
            self._write({"run": self.token, "v": VERSION})

    def _read(self, path: Path, keep: Callable[[str], bool]) -> None:
        intents: dict[str, list[str]] = {}
        for line in path.read_bytes().splitlines():
            try:
                entry = msgspec.json.decode(line)
            except msgspec.DecodeError:
                continue  # a line cut short by a kill
            if not isinstance(entry, dict):
                continue
            if "run" in entry and not self.token:
                self.token = str(entry["run"])
            elif "intent" in entry:
                tag = str(entry["intent"])
                ids = [i for i in entry.get("ids", []) if isinstance(i, str)]
                at = entry.get("at")
                self.batches[tag] = Recorded(
                    str(entry.get("model", "")), requests=len(ids), digest=ids_digest(ids),
                    at=float(at) if isinstance(at, (int, float)) else None,
                )
                intents[tag] = [i for i in ids if keep(i)]
            elif (sent := entry.get("sent")) in self.batches:
                self.batches[sent].batch_id = str(entry.get("batch"))
            elif (collected := entry.get("collected")) in self.batches:
                self.batches[collected].collected = True
            elif (dropped := entry.get("dropped")) in self.batches:
                self.batches[dropped].dropped = True
        for tag, ids in intents.items():
            if ids and not self.batches[tag].dropped:
                self.index.update(dict.fromkeys(ids, tag))
                self.wanted[tag] = set(ids)

    def served(self, custom_id: str) -> str:
        """Take an earlier process's call out of the index (it is being answered); its batch's tag."""
        tag = self.index.pop(custom_id)
        wanted = self.wanted[tag]
        wanted.discard(custom_id)
        if not wanted:
            del self.wanted[tag]
        return tag

    def _write(self, entry: dict[str, Any]) -> None:
        if self.path is None:
            return
        data = msgspec.json.encode(entry) + b"\n"
        with self._lock:
            if self._file is None:
                self._file = self.path.open("ab")
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())

    # Each of these writes one line (and waits for the disk): call them from a worker thread.
    def intent(self, tag: str, model: str, ids: list[str]) -> None:
        self._write({"intent": tag, "model": model, "ids": ids, "at": round(time.time(), 3)})

    def sent(self, tag: str, batch_id: str) -> None:
        self._write({"sent": tag, "batch": batch_id})

    def collected(self, tag: str) -> None:
        self._write({"collected": tag})

    def dropped(self, tag: str, reason: str) -> None:
        self._write({"dropped": tag, "reason": reason[:300]})

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


__all__ = ["BATCHES_FILE", "BatchLog", "BatchState", "Recorded", "ids_digest"]
