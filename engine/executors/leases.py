"""Rate limits shared by the workers of a cluster: providers enforce a limit per account, so every
worker draws from one budget instead of from a copy of the limit each.

- ``LimitLedger`` (a Ray actor) holds the one request and token bucket of each limit, refilled at
  the per-minute rate as in one process (``backends.limiter.Bucket``), and grants them in slices.
  It learns what any worker learns: a limit from the rate-limit headers, the ``remaining`` the
  provider reports, and the pause a 429 asks for, which then holds for every worker.
- In a worker, a model's limiter draws on ``LeasedBucket``s, which hold what the ledger granted
  (they do not refill on their own). One ``keep_leased`` task per limit asks for the next slice when
  a call finds its bucket short, and every ``REFRESH`` seconds passes on what the worker learned.

A slice is ``SLICE`` seconds of the rate, so a worker holds little that another could use; at
6,000 requests per minute over two workers that is about ten lease calls per second each.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import msgspec

from engine.backends import BackendSettings
from engine.backends.limiter import DEFAULT_BURST, Bucket, Limiter

SLICE = 0.1  # seconds of the per-minute rate granted at a time
REFRESH = 0.5  # seconds between leases when no call is short
POLL = 0.005  # seconds a call that found its bucket short waits before it looks again


class LimitLedger:
    """The cluster's one copy of each limit (made a Ray actor by the executor), with the limits the
    user set in the run's model ``settings`` (the rest are learned)."""

    def __init__(self, settings: BackendSettings | bytes, clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(settings, bytes):
            settings = msgspec.json.decode(settings, type=BackendSettings)
        self.settings = settings
        self.clock = clock
        self.buckets: dict[str, tuple[Bucket, Bucket]] = {}
        self.paused_until: dict[str, float] = {}  # key -> wall-clock time
        self.granted: dict[str, list[float]] = {}  # key -> [requests, tokens] granted so far

    def _buckets(self, key: str) -> tuple[Bucket, Bucket]:
        pair = self.buckets.get(key)
        if pair is None:
            rpm, tpm = limits_set(self.settings, key)
            pair = self.buckets[key] = (Bucket(rpm, DEFAULT_BURST, self.clock), Bucket(tpm, DEFAULT_BURST, self.clock))
            self.granted[key] = [0.0, 0.0]
        return pair

    def lease(self, key: str, wants: tuple[float, float, float, float], notes: dict[str, float]) -> tuple[Any, ...]:
        """Grant what is there of (requests wanted, requests needed, tokens wanted, tokens needed).
        ``notes``: what the worker learned (``rpm``, ``tpm``, ``requests_left``, ``tokens_left``,
        ``paused_until`` as wall-clock time). Returns (requests, tokens, rpm, tpm, paused_until)."""
        requests, tokens = self._buckets(key)
        rpm_set, tpm_set = limits_set(self.settings, key)
        for bucket, user_set, rate, left in ((requests, rpm_set, "rpm", "requests_left"), (tokens, tpm_set, "tpm", "tokens_left")):
            learned = notes.get(rate)
            if user_set is None and learned and learned != bucket.per_minute:
                bucket.set_rate(learned)
            if left in notes:
                bucket.drain_to(notes[left])
        if "paused_until" in notes:
            self.paused_until[key] = max(self.paused_until.get(key, 0.0), notes["paused_until"])
        granted = self.granted[key]
        got_requests = _grant(requests, wants[0], wants[1])
        got_tokens = _grant(tokens, wants[2], wants[3])
        granted[0] += got_requests
        granted[1] += got_tokens
        return got_requests, got_tokens, requests.per_minute, tokens.per_minute, self.paused_until.get(key, 0.0)

    def totals(self) -> dict[str, list[float]]:
        """Requests and tokens granted so far, per limit."""
        return self.granted


def _grant(bucket: Bucket, want: float, need: float) -> float:
    """Take up to ``want`` from ``bucket`` if it holds at least ``need`` (a call's worth); else none."""
    if bucket.per_minute is None:
        return want
    if want <= 0 or bucket.wait_time(need) > 0:
        return 0.0
    bucket._refill()
    got = max(min(want, bucket.level), min(need, bucket.capacity))
    bucket.take(got)
    return got


class LeasedBucket(Bucket):
    """A worker's share of a cluster-wide bucket: it holds what the ledger granted and refills only
    by the next grant. A call that finds it short says how much it needs and looks again shortly."""

    def __init__(self, per_minute: float | None) -> None:
        self.short = anyio.Event()
        super().__init__(None, DEFAULT_BURST, time.monotonic)
        self.per_minute = per_minute  # the cluster's rate, as the ledger last said
        self.level = 0.0
        self.short_by = 0.0
        self.learned: float | None = None
        self.left: float | None = None  # the least ``remaining`` the provider reported since the last lease

    def _refill(self) -> None:
        pass

    def set_rate(self, per_minute: float | None) -> None:
        self.learned = per_minute  # passed on to the ledger, which answers with the cluster's rate
        if self.per_minute is None and per_minute is not None:  # limited from now on: the next call waits for a lease
            self.per_minute = per_minute
            self.short.set()

    def wait_time(self, amount: float) -> float:
        if self.per_minute is None:
            return 0.0
        need = min(amount, self.capacity) - self.level
        if need <= 0:
            return 0.0
        self.short_by = max(self.short_by, need)
        self.short.set()
        return POLL

    def give_back(self, amount: float) -> None:
        if self.per_minute is not None:
            self.level = min(self.level + amount, self.slice() + amount)

    def drain_to(self, remaining: float) -> None:
        self.left = remaining if self.left is None else min(self.left, remaining)
        self.level = min(self.level, remaining)

    def slice(self) -> float:
        return max(1.0, (self.per_minute or 0.0) / 60.0 * SLICE)

    def wants(self) -> tuple[float, float]:
        """(wanted, needed): enough for the call waiting and a slice beyond it, less what is held."""
        if self.per_minute is None:
            return 0.0, 0.0
        held = max(self.level, 0.0)
        if not self.short_by and held >= self.slice() / 2:
            return 0.0, 0.0
        return max(0.0, self.short_by + self.slice() - held), self.short_by

    def granted(self, amount: float, per_minute: float | None) -> None:
        self.level += amount
        self.per_minute = per_minute
        self.short_by = 0.0
        self.learned = None
        self.left = None
        if self.short.is_set():
            self.short = anyio.Event()


class Leases:
    """A worker's side of the ledger: makes the leased buckets of each limit (a ``ModelHub``'s
    ``bucket_source``) and keeps them filled, in the task group it is given."""

    def __init__(self, ledger: Any, settings: BackendSettings, task_group: anyio.abc.TaskGroup) -> None:
        self.ledger = ledger
        self.settings = settings
        self.task_group = task_group
        self.pairs: dict[str, tuple[LeasedBucket, LeasedBucket]] = {}
        self.limiters: dict[str, list[Limiter]] = {}

    def __call__(self, key: str) -> tuple[LeasedBucket, LeasedBucket]:
        pair = self.pairs.get(key)
        if pair is None:
            rpm, tpm = limits_set(self.settings, key)
            pair = self.pairs[key] = (LeasedBucket(rpm), LeasedBucket(tpm))
            self.limiters[key] = []
            self.task_group.start_soon(self._keep_leased, key, pair)
        return pair

    def drawing(self, key: str, limiter: Limiter) -> None:
        """``limiter`` draws on the buckets of ``key``: share its pauses with the cluster."""
        self.limiters[key].append(limiter)

    async def _keep_leased(self, key: str, pair: tuple[LeasedBucket, LeasedBucket]) -> None:
        requests, tokens = pair
        sent_pause = 0.0
        while True:
            with anyio.move_on_after(REFRESH):  # until a call is short, or it is time to refresh
                async with anyio.create_task_group() as either:
                    for bucket in pair:
                        either.start_soon(_set_then_cancel, bucket.short, either.cancel_scope)
            notes: dict[str, float] = {}
            for bucket, rate, left in ((requests, "rpm", "requests_left"), (tokens, "tpm", "tokens_left")):
                if bucket.learned:
                    notes[rate] = bucket.learned
                if bucket.left is not None:
                    notes[left] = bucket.left
            now, wall = time.monotonic(), time.time()
            pause = max((limiter.paused_until for limiter in self.limiters[key]), default=0.0)
            if pause > now and pause > sent_pause:
                notes["paused_until"] = wall + pause - now
                sent_pause = pause
            wants = (*requests.wants(), *tokens.wants())
            got_requests, got_tokens, rpm, tpm, paused_until = await self.ledger.lease.remote(key, wants, notes)
            requests.granted(got_requests, rpm)
            tokens.granted(got_tokens, tpm)
            if paused_until > wall:
                for limiter in self.limiters[key]:
                    limiter.paused_until = max(limiter.paused_until, now + paused_until - wall)
            # A call still short: the cluster's bucket was empty too; ask again once it may have refilled.
            refill = [need * 60.0 / rate for need, got, rate in ((wants[1], got_requests, rpm), (wants[3], got_tokens, tpm)) if need and not got and rate]
            if refill:
                await anyio.sleep(min(SLICE, max(POLL, *refill)))


async def _set_then_cancel(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def limits_set(settings: BackendSettings, key: str) -> tuple[float | None, float | None]:
    """The requests and tokens per minute the user set for a limit: a provider's (``--shared-limit``)
    or a model's (``provider:model``, falling back on the provider's); None where not set."""
    provider, _, model = key.partition(":")
    rpm, tpm = settings.rpm, settings.tpm
    if not model:
        return rpm.get(provider), tpm.get(provider)
    return rpm.get(key, rpm.get(provider)), tpm.get(key, tpm.get(provider))


__all__ = ["LeasedBucket", "Leases", "LimitLedger", "limits_set"]
