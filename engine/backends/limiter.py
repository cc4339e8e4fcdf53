"""One limiter per provider and model: request and token buckets, an adaptive cap on calls in
flight, and pauses the provider asks for.

- Buckets refill continuously at the per-minute rate and hold at most ``burst`` seconds of it, so the
  limiter sends at a steady rate instead of a burst at the start of each minute. A call takes one
  request and its estimated tokens before it is sent; ``settle`` corrects the token bucket with the
  usage the provider reports.
- Limits the user did not set are learned from the rate-limit headers (OpenAI's ``x-ratelimit-*``,
  Anthropic's ``anthropic-ratelimit-*``); ``remaining`` below what the bucket holds drains the bucket.
- The in-flight cap shrinks by a factor on sustained overload: when 429/529/503 replies make up at
  least ``overload_share`` of the attempts of the last ``overload_window`` seconds (and at least
  ``overload_count`` of them), once per ``cooldown``. Scattered refusals (a few percent of 529s)
  leave it alone. It grows by a quarter per cap's worth of successes, up to ``max_in_flight``; until
  the first overload it doubles instead (slow start). ``cap_note`` says why the cap is where it is. ``retry-after`` pauses every new call until it has passed.
- Calls wait in priority order (``admission.PriorityGate``): the run gives each game its admission
  order, so the calls of games started earlier go first and games finish one after another instead of
  all advancing a call at a time.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from contextlib import asynccontextmanager

import msgspec

from engine.backends.admission import CALL_PRIORITY, PriorityGate

# Seconds of the per-minute rate a bucket may hold.
DEFAULT_BURST = 1.0


class Bucket:
    """A token bucket refilled at ``per_minute`` / 60 per second, holding at most ``burst`` seconds' worth
    (at least one call's worth). ``per_minute`` None means no limit."""

    def __init__(self, per_minute: float | None, burst: float, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.burst = burst
        self.per_minute: float | None = None
        self.capacity = 1.0  # at most burst seconds' worth, at least one call's; kept by ``set_rate``
        self._per_second = 0.0
        self.level = 0.0
        self.updated = clock()
        self.set_rate(per_minute)

    def set_rate(self, per_minute: float | None) -> None:
        self._refill()
        first = self.per_minute is None
        self.per_minute = per_minute
        self._per_second = (per_minute or 0.0) / 60.0
        self.capacity = max(1.0, self._per_second * self.burst)
        if per_minute is not None:
            self.level = self.capacity if first else min(self.level, self.capacity)

    def _refill(self) -> None:
        now = self.clock()
        if self.per_minute is not None:
            level = self.level + (now - self.updated) * self._per_second
            self.level = level if level < self.capacity else self.capacity
        self.updated = now

    def wait_time(self, amount: float) -> float:
        """Seconds until ``amount`` can be taken (0 if now). An amount over the capacity waits for a
        full bucket and then drives the level negative, so one huge call does not block forever."""
        if self.per_minute is None:
            return 0.0
        self._refill()
        need = min(amount, self.capacity) - self.level
        return 0.0 if need <= 0 else need * 60.0 / self.per_minute

    def take(self, amount: float) -> None:
        if self.per_minute is not None:
            self._refill()
            self.level -= amount

    def give_back(self, amount: float) -> None:
        if self.per_minute is not None:
            self._refill()
            self.level = min(self.capacity, self.level + amount)

    def drain_to(self, remaining: float) -> None:
        """The provider says only ``remaining`` is left: never hold more than that."""
        if self.per_minute is not None:
            self._refill()
            self.level = min(self.level, remaining)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The pause a reply asks for: ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    ms, seconds = _number(headers, "retry-after-ms"), _number(headers, "retry-after")
    if ms is not None:
        return max(0.0, ms / 1000.0)
    if seconds is not None:
        return max(0.0, seconds)
    value = headers.get("retry-after")
    if value is None:
        return None
    from email.utils import parsedate_to_datetime

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _number(headers: Mapping[str, str], name: str) -> float | None:
    try:
        return float(headers[name])
    except (KeyError, ValueError):
        return None


class CallCounters(msgspec.Struct):
    """The counters of one model's calls, the one place their names are written: ``usage.json``
    gives each model these, in this order (``ModelHub.summary``), and sums them over the processes
    of a run (``engine.session.playing.merge_usage``); a failed attempt names the one it counts
    (``engine.backends.base.Failure.counter``)."""

    calls: int = 0  # successful calls
    attempts: int = 0
    rate_limited: int = 0  # 429 and 529 replies
    server_errors: int = 0  # other 5xx replies
    timeouts: int = 0
    connection_errors: int = 0
    malformed: int = 0
    failed: int = 0  # calls given up after all retries
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_hits: int = 0  # calls answered from the response cache (``--cache``), not in ``calls``
    batched: int = 0  # of the ``calls``, those answered through the provider's batch API (``--batch``)
    cut: int = 0  # of the ``calls``, replies the server cut at the token limit (``--max-tokens``)


COUNTERS: tuple[str, ...] = CallCounters.__struct_fields__


class LimiterStats(CallCounters):
    """Counters a dashboard and the run summary read: the call counters, the cost and latency so
    far, and the attempts of the last minute."""

    cost_usd: float | None = 0.0
    latency_sum: float = 0.0
    sent_times: deque[float] = msgspec.field(default_factory=deque)  # when each attempt of the last minute was sent
    first_sent: float | None = None
    arriving: int = 0  # pieces of streamed replies received, of calls still in flight (about a token each)

    def rate(self, now: float, window: float = 60.0) -> float:
        """Attempts per minute over the last ``window`` seconds, or since the first attempt if that
        is more recent (at least a second), so that the first minute does not read low."""
        if self.first_sent is None:
            return 0.0
        self.forget(now - window)
        span = max(1.0, min(window, now - self.first_sent))
        return len(self.sent_times) * 60.0 / span

    def sent(self, now: float) -> None:
        if self.first_sent is None:
            self.first_sent = now
        self.sent_times.append(now)
        if len(self.sent_times) % 256 == 0:
            self.forget(now - 60.0)

    def forget(self, before: float) -> None:
        times = self.sent_times
        while times and times[0] < before:
            times.popleft()


class Limiter:
    """Admission control for one provider and model. Use ``async with limiter.slot(tokens) as slot``
    around each attempt; call ``slot.done(headers, tokens)`` or ``limiter.backed_off(...)``."""

    def __init__(
        self,
        name: str,
        *,
        rpm: float | None = None,
        tpm: float | None = None,
        max_in_flight: int = 256,
        initial_in_flight: int | None = None,
        learn_limits: bool = True,
        burst: float = DEFAULT_BURST,
        decrease: float = 0.7,
        cooldown: float = 1.0,
        overload_share: float = 0.1,
        overload_count: int = 3,
        overload_window: float = 2.0,
        adaptive: bool = True,
        clock: Callable[[], float] = time.monotonic,
        shared: tuple[Bucket, Bucket] | None = None,
    ) -> None:
        self.name = name
        self.clock = clock
        # ``shared``: the request and token buckets of a limit several models draw on (one account's
        # limit); each model keeps its own cap on calls in flight and its own counters.
        self.requests, self.tokens = shared or (Bucket(rpm, burst, clock), Bucket(tpm, burst, clock))
        self.learn_requests = learn_limits and rpm is None
        self.learn_tokens = learn_limits and tpm is None
        self.max_in_flight = max_in_flight
        start = max_in_flight if initial_in_flight is None else min(initial_in_flight, max_in_flight)
        self.in_flight = PriorityGate(max(1, start))  # calls of earlier games first (``CALL_PRIORITY``)
        self.adaptive = adaptive  # grow the cap on success (off where something else steers it)
        self.decrease = decrease
        self.cooldown = cooldown
        self._last_decrease = -math.inf
        self._successes_since_change = 0
        self._slow_start = True  # double the cap per cap's worth of successes until the first overload
        self.overload_share, self.overload_count, self.overload_window = overload_share, overload_count, overload_window
        self._outcomes: deque[tuple[float, bool]] = deque()  # (when, refused as overloaded) of recent attempts
        self._refused_recently = 0
        self.cap_note = ""  # why the cap is below its maximum, for the dashboard
        self.paused_until = 0.0
        self.stats = LimiterStats()

    @property
    def cap(self) -> int:
        return self.in_flight.cap

    @property
    def running(self) -> int:
        return self.in_flight.held

    def set_cap(self, value: int) -> None:
        self.in_flight.set_cap(max(1, min(self.max_in_flight, value)))

    @asynccontextmanager
    async def slot(self, estimated_tokens: int, priority: int | None = None):
        """Wait for a place in flight, any pause, and room in both buckets, behind the calls of higher
        priority (lower value; by default the context's ``CALL_PRIORITY``); then the call may go."""

        def ready() -> float:
            return max(
                self.paused_until - self.clock(), self.requests.wait_time(1), self.tokens.wait_time(estimated_tokens),
            )

        await self.in_flight.acquire(CALL_PRIORITY.get() if priority is None else priority, ready)
        try:
            self.requests.take(1)
            self.tokens.take(estimated_tokens)
            self.stats.attempts += 1
            self.stats.sent(self.clock())
            yield Slot(self, estimated_tokens)
        finally:
            self.in_flight.release()

    def _outcome(self, refused: bool) -> tuple[int, int]:
        """Record an attempt's outcome; (refusals, attempts) over the last ``overload_window`` seconds."""
        now, outcomes = self.clock(), self._outcomes
        outcomes.append((now, refused))
        self._refused_recently += refused
        while outcomes and outcomes[0][0] < now - self.overload_window:
            self._refused_recently -= outcomes.popleft()[1]
        return self._refused_recently, len(outcomes)

    def succeeded(self) -> None:
        """A call went through (called while it still holds its place in flight)."""
        self.stats.calls += 1
        self._outcome(False)
        if not self.adaptive or self.running < self.cap:
            return  # the cap is not what limits us: no evidence it could be higher
        self._successes_since_change += 1
        if self._successes_since_change >= self.cap and self.cap < self.max_in_flight:
            self._successes_since_change = 0
            self.set_cap(self.cap * 2 if self._slow_start else self.cap + max(1, self.cap // 4))
            if self.cap >= self.max_in_flight:
                self.cap_note = ""

    def backed_off(self, pause: float | None, *, overloaded: bool) -> None:
        """The provider refused a call (429/529/503): pause new calls as it asks and, on sustained
        overload, once per cooldown, lower the cap."""
        now = self.clock()
        if pause:
            self.paused_until = max(self.paused_until, now + pause)
        if not overloaded:
            return
        refused, attempts = self._outcome(True)
        sustained = refused >= self.overload_count and refused >= self.overload_share * attempts
        if sustained and now - self._last_decrease >= self.cooldown:
            self._last_decrease = now
            self._slow_start = False
            self._successes_since_change = 0
            self.set_cap(math.floor(min(self.cap, max(self.running, 1)) * self.decrease))
            window = f"{self.overload_window:g} s"
            self.cap_note = f"lowered: {refused} of {attempts} calls refused as overloaded in {window}"

    def learn(self, headers: Mapping[str, str]) -> None:
        """Read the provider's rate-limit headers (both providers' spellings)."""
        lower = {k.lower(): v for k, v in headers.items()}
        for bucket, learn, kind in ((self.requests, self.learn_requests, "requests"), (self.tokens, self.learn_tokens, "tokens")):
            # x-ratelimit-limit-requests (OpenAI), anthropic-ratelimit-requests-limit (Anthropic), and so on
            limit, remaining = (next((v for n in (f"x-ratelimit-{what}-{kind}", f"anthropic-ratelimit-{kind}-{what}")
                                      if (v := _number(lower, n)) is not None), None) for what in ("limit", "remaining"))
            if learn and limit is not None and limit > 0 and limit != bucket.per_minute:
                bucket.set_rate(limit)
            if remaining is not None:
                bucket.drain_to(remaining)


class Slot:
    def __init__(self, limiter: Limiter, estimated_tokens: int) -> None:
        self.limiter = limiter
        self.estimated_tokens = estimated_tokens

    def refused(self, headers: Mapping[str, str]) -> None:
        """The provider answered but did not serve the call: its tokens were not used."""
        self.limiter.learn(headers)
        self.limiter.tokens.give_back(self.estimated_tokens)

    def done(self, headers: Mapping[str, str], used_tokens: int | None) -> None:
        """The call went through: learn from its headers and correct the token estimate."""
        limiter = self.limiter
        limiter.learn(headers)
        if used_tokens is not None:
            difference = self.estimated_tokens - used_tokens
            if difference > 0:
                limiter.tokens.give_back(difference)
            elif difference < 0:
                limiter.tokens.take(-difference)
        limiter.succeeded()
