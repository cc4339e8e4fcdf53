"""The response cache (``--cache``): a model call made before is answered again from disk, with the
reply it got then, at no cost and without reaching the provider.

**What a call is known by.** Everything that decides its reply: the API (its kind), the server (its
base URL, less any credentials; a server the engine starts itself is known by its model instead, its
address changing with every start), the provider's name and the model, the system prompt, the earlier
turns and the prompt, the reply schema as sent (in its own order: a strict structured output writes
the properties in that order), the sampling settings (temperature, top_p, max tokens, structured
output, the seed of the call) and the number of the sample in a best-of-n turn. The engine sends no
tools and no stop sequences; a backend that comes to send them must add them here. The stored key is
the SHA-256 of one JSON encoding of these; neither API keys (never part of it) nor prompts are stored,
only the key's digest and the reply (its text and token counts, and its token ids and
log-probabilities where the call asked for them: ``Entry.tokens``). A call that asks for its tokens is
not answered by an entry kept without them: it is a miss, and its reply replaces the entry.

**Which calls.** Only calls whose reply the request fixes (temperature 0, or a seed, on an API that
takes them) unless the run asks for sampled ones too (``CacheSettings.sampled``): a sampled call
answered from the cache would be the same sample again, where a research run wants a new one.
Anthropic's current API takes neither temperature nor seed, so its calls count as sampled.

**Where.** One SQLite file (``responses.sqlite`` in ``$ASYMGAMES_CACHE``, else ``~/.cache/asymgames``,
or ``--cache-dir``) through the standard library's ``sqlite3``: one file holds every entry; each write
is a transaction, so an entry is stored whole or not at all (never torn, whatever stops the process);
in WAL mode readers never wait for a writer, and with a busy timeout several processes (a run's Ray
workers, runs side by side) write the same file at once, one after the other. The file must be on a
local disk (WAL needs shared memory; a network file system does not give it).

**A hit** is an agent's call like any other in the records, marked ``cache_hits: 1``: no attempt,
no tokens, cost 0 (the tokens and cost of a record are what the run spent). The model's counters
in ``usage.json`` keep hits apart from ``calls`` (the calls that reached the provider). An entry
older than ``--cache-expiry`` is a miss, and the new reply replaces it.

**Failure is a miss.** An entry that does not decode, or whose checksum is wrong, is a miss (the new
reply replaces it); a file that is not a database (or that becomes unreadable) makes every call a miss
for the rest of the process, and ``usage.json`` says why (``options.cache.problem``): never a crash.

**Cost.** With ``--cache off`` (the default) this module is not imported and calls go as they always
did. With it on, a call costs a hash of its prompt and one indexed read (in a worker thread, never on
the event loop: a write may wait for another process's), and a miss one write: some 0.1 ms a hit and
0.15 ms a miss besides the call itself, on a 2-core machine.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import msgspec

from bus import Tokens, Usage

from engine.backends.base import Backend, Completion, FinishReason, Request
from engine.backends.routes import routed
from engine.backends.settings import CacheSettings, ModelOptions
from engine.backends.wrappers import Wrapper

FILE_NAME = "responses.sqlite"
KEY_VERSION = 1  # part of every key: a change of what keys hold leaves the old entries unread
BUSY_TIMEOUT = 10.0  # seconds a write waits for another process's
_DEFAULT_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
_TABLE = (
    "CREATE TABLE IF NOT EXISTS replies ("
    "key BLOB PRIMARY KEY, created REAL NOT NULL, crc INTEGER NOT NULL, value BLOB NOT NULL) WITHOUT ROWID"
)

_encode = msgspec.json.Encoder().encode


class Entry(msgspec.Struct, array_like=True, frozen=True):
    """What the cache keeps of a reply: its text, the tokens the provider counted for it, why the
    server stopped (an entry kept before finish reasons were kept reads as a whole reply) and, kept
    for a call that asked for them, its token ids and log-probabilities (``tokens``; None: kept
    without them). An entry without them is written as it always was: less its last field."""

    text: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    finish: FinishReason = "stop"
    tokens: Tokens | None = None


_decode_entry = msgspec.json.Decoder(Entry).decode


def _read_entry(crc: int, value: object) -> Entry:
    """A kept entry read; ValueError if its checksum is wrong or it does not decode."""
    if not isinstance(value, bytes) or zlib.crc32(value) != crc:
        raise ValueError("checksum")
    return _decode_entry(value)


def cache_root() -> Path:
    """The project's cache folder: ``$ASYMGAMES_CACHE``, else ``~/.cache/asymgames`` (as the Einstein
    optima's, ``puzzles.einstein.optima.cache_dir``)."""
    return Path(os.environ.get("ASYMGAMES_CACHE") or Path.home() / ".cache" / "asymgames")


def cache_file(settings: CacheSettings) -> Path:
    return Path(settings.directory).expanduser() / FILE_NAME if settings.directory else cache_root() / FILE_NAME


def sampled(kind: str, options: ModelOptions) -> bool:
    """Whether a call's reply is a sample the request does not fix: temperature above 0 and no seed,
    or an API that takes neither (Anthropic's)."""
    return kind == "anthropic" or (options.temperature > 0 and options.seed is None)


def server_identity(url: str) -> str:
    """A base URL as part of a key: scheme and host in lower case, no credentials, query or fragment,
    no trailing slash."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower() + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme.lower(), host, parts.path.rstrip("/"), "", ""))


def default_server(kind: str) -> str:
    return _DEFAULT_URL.get(kind, "")


class ResponseStore:
    """The SQLite file, used from any thread: ``get`` and ``put`` by key digest. Opened on first use;
    every failure is a miss (``problem`` says the first). ``writable`` False: read only."""

    def __init__(self, path: Path, *, expiry: float | None = None, writable: bool = True, timeout: float = BUSY_TIMEOUT) -> None:
        self.path = path
        self.expiry = expiry
        self.writable = writable
        self.timeout = timeout
        self.stored = 0  # entries written by this process
        self.damaged = 0  # entries read that did not decode
        self.problem: str | None = None  # why the file could not be read or written, the first time
        self.broken = False  # the file is not a usable database: every call a miss from now on
        self._open_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._writer: sqlite3.Connection | None = None
        self._opened = False

    def _connect(self) -> sqlite3.Connection:
        # isolation_level None: each statement is its own transaction (an insert is whole or absent).
        return sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)

    def _open(self) -> None:
        if self._opened:  # the common case, without the lock
            return
        with self._open_lock:
            if self._opened:
                return
            try:
                if self.writable:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    writer = self._connect()
                    self._writer = writer
                    writer.execute("PRAGMA journal_mode=WAL")
                    writer.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: durable at each checkpoint, never torn
                    writer.execute(_TABLE)
                elif not self.path.exists():
                    return  # nothing kept yet: every call a miss
                self._reader = self._connect()
                self._reader.execute("SELECT 1 FROM replies LIMIT 1").fetchall()
            except (sqlite3.Error, OSError) as exc:
                self._failed(exc, hard=True)
            finally:
                self._opened = True  # after the connections: a thread that waited for the lock finds them

    def check(self) -> str | None:
        """Open the file now: why no call can be answered from it or kept in it, or None."""
        self._open()
        return self.problem if self.broken else None

    def _failed(self, exc: BaseException, hard: bool = False) -> None:
        if self.problem is None:
            self.problem = f"{self.path}: {type(exc).__name__}: {exc}"
        # A lock held past the timeout, a full disk: this call misses. A file that is not a database: every call.
        if hard or (isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)):
            self.broken = True

    def get(self, key: bytes) -> Entry | None:
        """The entry of ``key``, or None: none kept, expired, damaged, or the file unusable."""
        self._open()
        if self.broken or self._reader is None:
            return None
        try:
            with self._read_lock:
                row = self._reader.execute("SELECT created, crc, value FROM replies WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._failed(exc)
            return None
        if row is None:
            return None
        try:
            created, crc, value = row
            if self.expiry is not None and created < time.time() - self.expiry:
                return None
            return _read_entry(crc, value)
        except (ValueError, TypeError):  # msgspec's errors are ValueErrors
            self.damaged += 1
            return None

    def put(self, key: bytes, entry: Entry) -> None:
        """Keep ``entry`` as ``key``'s (replacing a damaged or expired one). Does nothing read-only."""
        self._open()
        if self.broken or self._writer is None:  # read only: no writer
            return
        value = _encode(entry if entry.tokens is not None else msgspec.structs.astuple(entry)[:-1])
        try:
            with self._write_lock:
                self._writer.execute(
                    "INSERT OR REPLACE INTO replies (key, created, crc, value) VALUES (?, ?, ?, ?)",
                    (key, time.time(), zlib.crc32(value), value),
                )
            self.stored += 1
        except sqlite3.Error as exc:
            self._failed(exc)

    def close(self) -> None:
        """Close the connections; the next use opens them again."""
        with self._open_lock, self._read_lock, self._write_lock:
            for db in (self._reader, self._writer):
                if db is not None:
                    with contextlib.suppress(sqlite3.Error):
                        db.close()
            self._reader = self._writer = None
            self._opened = False

    def summary(self) -> dict[str, Any]:
        """For ``usage.json``: the file, the entries this process wrote and found damaged, the problem."""
        return {"file": str(self.path), "stored": self.stored, "damaged": self.damaged, "problem": self.problem}


def _size(path: Path) -> int:
    """The file's bytes on disk, with its write-ahead log."""
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def store_figures(path: Path) -> dict[str, Any]:
    """``asymgames cache stats``: the file, its entries, when the oldest and newest were kept (Unix
    seconds, None without entries) and its bytes on disk."""
    figures: dict[str, Any] = {"file": str(path), "entries": 0, "oldest": None, "newest": None, "bytes": 0}
    if path.exists():
        with contextlib.closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT)) as db:
            figures["entries"], figures["oldest"], figures["newest"] = db.execute(
                "SELECT count(*), min(created), max(created) FROM replies").fetchone()
        figures["bytes"] = _size(path)
    return figures


def prune(path: Path, older_than: float | None = None, *, vacuum: bool = False) -> dict[str, Any]:
    """``asymgames cache prune``: remove the entries kept more than ``older_than`` seconds ago and
    those that do not decode (a miss anyway); ``vacuum`` gives the freed pages back to the disk (it
    rewrites the file, and waits for every other process to finish writing). Other processes may use
    the file meanwhile. (removed old, removed damaged, entries left, bytes before and after.)"""
    before = _size(path)
    with contextlib.closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        old = 0 if older_than is None else db.execute("DELETE FROM replies WHERE created < ?", (time.time() - older_than,)).rowcount
        damaged = []
        for key, crc, value in db.execute("SELECT key, crc, value FROM replies"):
            try:
                _read_entry(crc, value)
            except (ValueError, TypeError):
                damaged.append((key,))
        db.executemany("DELETE FROM replies WHERE key = ?", damaged)
        if vacuum:
            db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        left = db.execute("SELECT count(*) FROM replies").fetchone()[0]
    return {"file": str(path), "old": old, "damaged": len(damaged), "entries": left, "bytes_before": before, "bytes_after": _size(path)}


class CachedCalls(Wrapper):
    """One model's calls through the cache: a call it holds is answered from it, any other is made
    by the backend inside and kept. ``fixed``: what every call of the model is known by besides its
    own parts (``model_key``)."""

    def __init__(self, inner: Backend, store: ResponseStore, fixed: dict[str, Any], seed: int | None) -> None:
        super().__init__(inner)
        self.store = store
        self.stats = inner.limiter.stats
        self.seed = seed
        self._prefix = hashlib.sha256(_encode(fixed))
        self._model = str(fixed.get("model", ""))

    def key(self, request: Request) -> bytes:
        """The digest the call is kept under: the model's fixed part, then this call's."""
        system, user, schema, history, sample, grammar = request[:6]
        seed = None if self.seed is None else self.seed + sample
        digest = self._prefix.copy()
        # The grammar only where one is sent: the keys of every other call stay what they were. Whether
        # the call asks for its tokens is no part of the key: it changes what is kept, not the reply.
        digest.update(_encode((system, history, user, schema, seed, sample, *(() if grammar is None else (grammar,)))))
        route = routed(self._model)  # the game's weights, where a trainer swaps them (``routes``): only then
        if route:
            digest.update(_encode(dict(route)))
        return digest.digest()

    async def complete(self, request: Request) -> Completion:
        if self.store.broken:  # the file is not usable: the call as if there were no cache
            return await self.inner.complete(request)
        key = self.key(request)
        started = time.monotonic()
        entry = await anyio.to_thread.run_sync(self.store.get, key)
        if entry is not None and request.tokens and entry.tokens is None:
            entry = None  # kept without its tokens: the call is made again, and its reply kept with them
        if entry is not None:
            self.stats.cache_hits += 1
            cut = int(entry.finish == "length")
            self.stats.cut += cut
            usage = Usage(model=self.name, attempts=0, latency=round(time.monotonic() - started, 4), cost_usd=0.0,
                          cache_hits=1, cut=cut)
            return Completion(entry.text, usage, entry.finish, entry.tokens if request.tokens else None)
        completion = await self.inner.complete(request)
        if self.store.writable:
            usage = completion.usage
            counts = (completion.text, usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, completion.finish)
            kept = Entry(*counts, tokens=completion.tokens)
            await anyio.to_thread.run_sync(self.store.put, key, kept)
        return completion


def model_key(kind: str, server: str, provider: str, model: str, options: ModelOptions,
              schema_bounds: tuple[int, int] | None) -> dict[str, Any]:
    """What every call of a model is known by besides its own parts: the API, the server, the model
    and the sampling settings (see the module's docstring)."""
    return {
        "v": KEY_VERSION, "api": kind, "server": server, "provider": provider, "model": model,
        "temperature": options.temperature, "top_p": options.top_p, "max_tokens": options.max_tokens,
        "structured": options.structured, "schema_bounds": schema_bounds,
    }


__all__ = ["CachedCalls", "Entry", "model_key", "ResponseStore", "cache_file", "cache_root", "prune", "sampled", "server_identity", "store_figures"]
