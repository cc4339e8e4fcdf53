"""One model's batches: calls wait in a queue; a batch is sent when it holds ``size`` calls (or the
provider's most requests or bytes) or ``wait`` seconds after its first call came; each batch is then
looked at with growing pauses until it ends, and its results are handed to the calls that wait for
them. The batches of a run overlap: a batch sent does not hold up the next.

A batch is recorded before it is sent and again as soon as the provider has taken it
(``batch.log``). Its failures are its calls' failures (``base.Failure``), which the call path
(``batch.BatchedCalls``) retries in a later batch as it would retry a call: a batch the provider
refuses, a request in it that failed, one it never ran (the batch expired or was cancelled), or a
batch that can no longer be looked at (ten looks in a row failed).

``recorded`` answers a call that an earlier process of the run sent in a batch, from that batch's
results (looked at until it ends, then fetched once, for every call of it the run makes again).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import anyio
import anyio.abc

from engine.backends.base import Failure
from engine.backends.batch.log import BatchLog, Recorded, ids_digest
from engine.backends.limiter import LimiterStats
from engine.backends.settings import BatchSettings, History
from engine.backends.wire import Reply

LOOK_FAILURES = 10  # looks at a batch in a row that fail before its calls fail
FETCH_ATTEMPTS = 5  # downloads of a batch's results before its calls fail
GROWTH = 1.5  # each pause between looks at a batch is this much longer than the last


class Answer(NamedTuple):
    """A call's reply from a batch: how long it waited to be sent and then for the batch, and whether
    this process counts it (not if an earlier process of the run collected it and counted it)."""

    reply: Reply
    waited: float
    latency: float
    counted: bool = True


Outcome = Reply | Failure


class BatchAPI(Protocol):
    """A provider's batch API (``batch.openai_api``, ``batch.anthropic_api``)."""

    max_requests: int
    max_bytes: int
    verify: bool  # whether a batch ``find`` names must be checked by its results' custom ids

    def request(self, custom_id: str, system: str, user: str, schema: dict | None, history: History, sample: int) -> tuple[Any, int]: ...
    async def submit(self, requests: list[Any], tag: str) -> str: ...
    async def ended(self, batch_id: str) -> bool: ...
    async def results(self, batch_id: str) -> tuple[dict[str, Outcome], Failure]: ...
    async def find(self, tag: str, entry: Recorded, taken: set[str]) -> list[str]: ...
    def failure(self, exc: Exception) -> Failure | None: ...


def _unknown(exc: Exception, doing: str) -> Failure:
    return Failure(f"{doing}: {type(exc).__name__}: {exc}", True, None, False, "connection_errors")


class _Waiting:
    __slots__ = ("custom_id", "request", "size", "queued", "done", "outcome", "sent")

    def __init__(self, custom_id: str, request: Any, size: int) -> None:
        self.custom_id, self.request, self.size = custom_id, request, size
        self.queued = time.monotonic()
        self.sent = 0.0
        self.done = anyio.Event()
        self.outcome: Answer | Failure | None = None


class BatchQueue:
    """The batches of the model ``name``: ``send`` a call and wait for its outcome."""

    def __init__(
        self, name: str, api: BatchAPI, log: BatchLog, settings: BatchSettings, stats: LimiterStats,
        group: Callable[[], anyio.abc.TaskGroup | None], scrub: Callable[[str], str] = lambda text: text,
    ) -> None:
        self.name, self.api, self.log, self.settings, self.stats = name, api, log, settings, stats
        self.group = group
        self.scrub = scrub  # keys out of what the log keeps
        self.size = max(1, min(settings.size, api.max_requests))
        self._queue: list[_Waiting] = []
        self._bytes = 0
        self._arrived = anyio.Event()
        self._full = anyio.Event()
        self._started = False
        # tag -> (results kept, the outcome of a call with none, counted), or None: never sent (or not found)
        self._earlier: dict[str, tuple[dict[str, Outcome], Failure, bool] | None] = {}
        self._fetching: dict[str, anyio.Event] = {}
        self.sent = 0  # batches this process sent
        self.in_flight = 0
        self.resumed = 0  # batches of earlier processes looked at
        self.flying: dict[str, tuple[int, float]] = {}  # tag -> (requests, when sent) of each batch in flight

    # ---- calls ----

    async def send(self, custom_id: str, request: Any, size: int) -> Answer | Failure:
        if not self._started:
            group = self.group()
            if group is None:
                raise RuntimeError("batch mode sends from the model hub's task group: use the hub as `async with hub:`")
            group.start_soon(self._flush)
            self._started = True
        waiting = _Waiting(custom_id, request, size)
        self._queue.append(waiting)
        self._bytes += size
        self._arrived.set()
        if len(self._queue) >= self.size or self._bytes >= self.api.max_bytes:
            self._full.set()
        try:
            await waiting.done.wait()
        except BaseException:
            if waiting.sent == 0.0 and waiting in self._queue:  # not sent: it goes in no batch
                self._queue.remove(waiting)
                self._bytes -= waiting.size
            raise
        assert waiting.outcome is not None
        return waiting.outcome

    async def _flush(self) -> None:
        while True:
            await self._arrived.wait()
            with anyio.move_on_after(self.settings.wait):
                await self._full.wait()
            chunk: list[_Waiting] = []
            size = 0
            for waiting in self._queue:
                if len(chunk) == self.size or (chunk and size + waiting.size > self.api.max_bytes):
                    break
                chunk.append(waiting)
                size += waiting.size
            del self._queue[: len(chunk)]
            self._bytes -= size
            self._full = anyio.Event()
            if not self._queue:
                self._arrived = anyio.Event()
            elif len(self._queue) >= self.size or self._bytes >= self.api.max_bytes:
                self._full.set()
            if chunk:
                group = self.group()
                assert group is not None
                group.start_soon(self._batch, chunk)

    async def _batch(self, chunk: list[_Waiting]) -> None:
        tag = f"{self.log.token}.{os.urandom(5).hex()}"
        await anyio.to_thread.run_sync(self.log.intent, tag, self.name, [w.custom_id for w in chunk])
        now = time.monotonic()
        for waiting in chunk:
            waiting.sent = now
            self.stats.attempts += 1
            self.stats.sent(now)
        self.in_flight += 1
        self.flying[tag] = (len(chunk), now)
        try:
            try:
                batch_id = await self.api.submit([w.request for w in chunk], tag)
            except Exception as exc:  # noqa: BLE001 - the calls fail; sorted like a call's failure
                failure = self.api.failure(exc) or _unknown(exc, "the batch could not be sent")
                await anyio.to_thread.run_sync(self.log.dropped, tag, self.scrub(failure.reason))
                self._hand(chunk, {}, failure, counted=True)
                return
            self.sent += 1
            await anyio.to_thread.run_sync(self.log.sent, tag, batch_id)
            results, default = await self._collect(batch_id, self.settings.poll)
            self._hand(chunk, results, default, counted=True)
            await anyio.to_thread.run_sync(self.log.collected, tag)
        finally:
            self.in_flight -= 1
            self.flying.pop(tag, None)

    def figures(self, now: float) -> dict[str, object]:
        """For the dashboard: the batches sent, those in flight (this process's and earlier ones being
        collected) and the requests in them, the calls waiting for the next batch, the oldest batch's age
        (an earlier process's batch: since this process took it up)."""
        oldest = min((since for _, since in self.flying.values()), default=None)
        return {
            "sent": self.sent, "in flight": len(self.flying), "requests": sum(n for n, _ in self.flying.values()),
            "queued": len(self._queue), "oldest": "-" if oldest is None else f"{now - oldest:.0f}s",
        }

    def _hand(self, chunk: list[_Waiting], results: dict[str, Outcome], default: Failure, *, counted: bool) -> None:
        now = time.monotonic()
        for waiting in chunk:
            outcome = results.get(waiting.custom_id, default)
            if isinstance(outcome, Reply):
                waiting.outcome = Answer(outcome, waiting.sent - waiting.queued, now - waiting.sent, counted)
            else:
                waiting.outcome = outcome
            waiting.done.set()

    async def _collect(self, batch_id: str, pause: float) -> tuple[dict[str, Outcome], Failure]:
        """The batch's results once it has ended: (outcome by custom id, the outcome of a call with none)."""
        failures = 0
        while True:
            await anyio.sleep(pause)
            pause = min(max(pause, self.settings.poll) * GROWTH, max(self.settings.poll_max, self.settings.poll))
            try:
                if await self.api.ended(batch_id):
                    break
                failures = 0
            except Exception as exc:  # noqa: BLE001 - looked at again; after many failures in a row, given up
                failure = self.api.failure(exc) or _unknown(exc, "the batch could not be looked at")
                failures += 1
                if failures >= LOOK_FAILURES or not failure.retryable:
                    return {}, failure._replace(reason=f"batch {batch_id}: {failure.reason}", retryable=True)
        for attempt in range(1, FETCH_ATTEMPTS + 1):
            try:
                return await self.api.results(batch_id)
            except Exception as exc:  # noqa: BLE001 - fetched again
                failure = self.api.failure(exc) or _unknown(exc, "the batch's results could not be fetched")
                if attempt == FETCH_ATTEMPTS:
                    return {}, failure._replace(reason=f"batch {batch_id}: {failure.reason}", retryable=True)
                await anyio.sleep(min(self.settings.poll, 2.0 ** attempt))
        raise AssertionError("unreachable")

    # ---- calls an earlier process of the run sent ----

    async def recorded(self, custom_id: str) -> Answer | Failure | None:
        """The outcome of a call an earlier process sent (``custom_id`` is in the log's index), or None
        if that batch was never sent (or cannot be found): the call is to be sent anew."""
        tag = self.log.index[custom_id]
        if tag not in self._earlier:
            fetching = self._fetching.get(tag)
            if fetching is not None:
                await fetching.wait()
            else:
                self._fetching[tag] = anyio.Event()
                try:
                    await self._fetch_earlier(tag)
                finally:
                    self._fetching.pop(tag).set()
        kept = self._earlier.get(tag)
        self.log.served(custom_id)
        if tag not in self.log.wanted:  # the last of its calls the run makes again
            self._earlier.pop(tag, None)
        if kept is None:
            return None
        results, default, counted = kept
        outcome = results.pop(custom_id, default)
        if isinstance(outcome, Reply):
            return Answer(outcome, 0.0, 0.0, counted)
        return outcome

    async def _find(self, tag: str, entry: Recorded) -> tuple[str, dict[str, Outcome], Failure] | None:
        """The batch an earlier process sent but did not record, with its results: the provider's
        candidates (``BatchAPI.find``), each, if the API asks (``verify``), waited for and taken only if
        its results hold exactly the batch's custom ids. None: not found, its calls are sent again."""
        taken = {r.batch_id for r in self.log.batches.values() if r.batch_id is not None}
        try:
            candidates = await self.api.find(tag, entry, taken)
        except Exception:  # noqa: BLE001 - not found: its calls are sent again
            return None
        for batch_id in candidates:
            results, default = await self._collect(batch_id, 0.0)
            if not getattr(self.api, "verify", False) or ids_digest(results) == entry.digest:
                return batch_id, results, default
        return None

    async def _fetch_earlier(self, tag: str) -> None:
        entry = self.log.batches[tag]
        batch_id = entry.batch_id
        self.resumed += 1
        self.in_flight += 1
        self.flying[tag] = (len(self.log.wanted.get(tag, ())), time.monotonic())
        try:
            if batch_id is None:  # killed between sending and recording: looked up
                found = await self._find(tag, entry)
                if found is None:
                    self.resumed -= 1
                    self._earlier[tag] = None
                    return
                batch_id, results, default = found
                entry.batch_id = batch_id
                await anyio.to_thread.run_sync(self.log.sent, tag, batch_id)
            else:
                results, default = await self._collect(batch_id, 0.0)
        finally:
            self.in_flight -= 1
            self.flying.pop(tag, None)
        wanted = self.log.wanted.get(tag, set())
        self._earlier[tag] = ({cid: r for cid, r in results.items() if cid in wanted}, default, not entry.collected)
        if not entry.collected:
            entry.collected = True
            await anyio.to_thread.run_sync(self.log.collected, tag)


__all__ = ["Answer", "BatchAPI", "BatchQueue", "Outcome"]
