"""The model call every client shares: the limiter, our own retries, usage and cost, and the sorting
of failures.

A client's backend implements ``_send`` (one attempt) and may extend ``_classify`` with its own
exceptions. Failures are sorted in two:
- the provider or the network failed (429 after all retries, 5xx, 529, timeouts, connection errors,
  bodies that are not the API's JSON, and 4xx refusals such as a bad key): ``InfraError``, which ends
  the game as an ``infra_error``; ``--resume`` plays such games again;
- the model answered: whatever text it wrote is the agent's reply, and a reply that cannot be read
  is the agent's format error, scored as the model's failure.
"""

from __future__ import annotations

import itertools
import random
import re
import sys
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import anyio

from bus import Usage

from engine.backends.limiter import Limiter, retry_after
from engine.backends.prices import PriceTable
from engine.backends.settings import CALL_ID, History, ModelOptions
from engine.backends.tokens import Tokenizer
from engine.backends.wire import MalformedReply

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
REPLAYABLE_4XX = frozenset({401, 403, 404})  # a key or model name to fix before --resume
OVERLOAD_STATUS = frozenset({429, 503, 529})


class InfraError(RuntimeError):
    """The provider or the network failed, not the model. Ends the game as an infrastructure error."""

    kind = "infra_error"


class RequestError(InfraError):
    """The provider refused the request itself (400, 413, 422: a prompt over the context window, say).
    Not the model's failure, but playing the game again would fail the same way, so ``--resume``
    leaves it."""

    kind = "request_error"


class StatusError(Exception):
    """The server answered with an HTTP error: its status, the message of its error body, its headers."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


class Completion(NamedTuple):
    text: str
    usage: Usage


class Failure(NamedTuple):
    reason: str
    retryable: bool
    pause: float | None  # what the provider asked for (retry-after)
    overloaded: bool  # lower the in-flight cap
    counter: str  # which of the call counters (``limiter.COUNTERS``) the failed attempt counts
    request_error: bool = False  # the request itself was refused: RequestError
    refused: Mapping[str, str] | None = None  # the headers of an HTTP refusal, for the limiter


class Secrets:
    """The API keys in use, to scrub from anything written (error messages end up in records)."""

    _KEYLIKE = re.compile(r"\b(sk|key)-[A-Za-z0-9_\-*.]{6,}")

    def __init__(self, values: list[str]) -> None:
        self.values = [v for v in values if v and len(v) >= 6 and v != "EMPTY"]

    def scrub(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "[redacted]")
            for part in (value[:12], value[-8:]):  # providers echo a masked key: its ends
                if len(part) >= 8:
                    text = text.replace(part, "[redacted]")
        return self._KEYLIKE.sub("[redacted]", text)


def status_failure(status: int, message: str, headers: Mapping[str, str]) -> Failure:
    """How an HTTP error is handled, whichever client met it."""
    reason = f"HTTP {status}: {message}"
    if status in RETRYABLE_STATUS:
        counter = "rate_limited" if status in (429, 529) else "server_errors"
        return Failure(reason, True, retry_after(headers), status in OVERLOAD_STATUS, counter, refused=headers)
    return Failure(reason, False, None, False, "server_errors", status not in REPLAYABLE_4XX, refused=headers)


def network_failure(cause: BaseException | None, timed_out: bool = False) -> Failure:
    if timed_out or isinstance(cause, TimeoutError):
        return Failure("timed out", True, None, False, "timeouts")
    detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
    return Failure(f"connection error{detail}", True, None, False, "connection_errors")


def _is_aiohttp_error(exc: BaseException) -> bool:
    """An aiohttp client error. aiohttp is imported by the clients that use it, never here: where
    it was never imported, no exception can be its (a run with no model imports no HTTP client)."""
    aiohttp = sys.modules.get("aiohttp")
    return aiohttp is not None and isinstance(exc, aiohttp.ClientError)


class Backend:
    """One model of one provider: sends each call through the limiter, retries, counts usage and cost.
    Subclasses implement ``_send``."""

    provider = ""
    client_kind: str | None = None  # "lean" or "sdk", as usage.json says; None for a stand-in

    def __init__(
        self, client: Any, sdk: Any, model: str, limiter: Limiter, options: ModelOptions,
        tokenizer: Tokenizer, prices: PriceTable, secrets: Secrets,
    ) -> None:
        self.client = client
        self.sdk = sdk
        self.model = model
        self.limiter = limiter
        self.options = options
        self.tokenizer = tokenizer
        self.prices = prices
        self.secrets = secrets
        self.rng = random.Random(f"jitter:{self.provider}:{model}")  # back-off jitter only
        self._call_ids = itertools.count()
        self._tokens_per_char: float | None = None  # of this model's prompts, as last counted (``estimate``)

    def estimate(self, chars: int, system: str, user: str, history: History = ()) -> int:
        """Tokens a call may use, for the token bucket: the prompt plus a typical reply (corrected
        after). The prompt's ``chars`` characters are priced at the tokens per character of the last
        call the provider counted (``learn_density``); the first call is counted with the tokenizer.
        Counting every prompt cost about 40% more CPU per call with a token limit; this costs nothing."""
        if self._tokens_per_char is None:
            count = self.tokenizer.count
            tokens = count(system) + count(user) + sum(count(asked) + count(answered) for asked, answered in history)
            self._tokens_per_char = tokens / max(chars, 1)
        return round(chars * self._tokens_per_char) + min(self.options.max_tokens, 400)

    def learn_density(self, chars: int, prompt_tokens: int) -> None:
        if chars > 0 and prompt_tokens > 0:
            self._tokens_per_char = prompt_tokens / chars

    async def _send(
        self, system: str, user: str, schema: dict | None, history: History, sample: int = 0,
    ) -> tuple[str, int, int, int, int, Mapping[str, str]]:
        """(text, prompt tokens, cache reads, cache writes, completion tokens, headers) or an
        exception ``_classify`` knows. The prompt tokens include the cache reads and writes."""
        raise NotImplementedError

    def _classify(self, exc: Exception) -> Failure | None:
        """How a failed attempt is handled; None for an exception that is not the provider's (re-raised)."""
        if isinstance(exc, StatusError):
            return status_failure(exc.status, exc.message, exc.headers)
        if isinstance(exc, MalformedReply):
            return Failure(f"malformed reply: {exc}", True, None, False, "malformed")
        if isinstance(exc, TimeoutError):
            return network_failure(exc, timed_out=True)
        if isinstance(exc, OSError) or _is_aiohttp_error(exc):
            return network_failure(exc)
        return None

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.options.backoff_max, self.options.backoff_base * 2 ** (attempt - 1))
        return self.rng.uniform(0, ceiling)

    async def complete(
        self, system: str, user: str, schema: dict | None = None, history: History = (), *, sample: int = 0,
    ) -> Completion:
        """One model call: ``system``, then the earlier turns of a chat (``history``, pairs of user
        prompt and the model's reply), then ``user``. ``sample`` numbers the calls of a best-of-n
        turn: where the run fixes a seed, sample i is sent seed + i so that the samples differ.
        With ``--cache`` the hub puts the response cache in front of this (``cache.CachedCalls``)."""
        limiter, options, stats = self.limiter, self.options, self.limiter.stats
        # Only a token limit (given, or learned from the headers) needs the call's tokens up front. Until
        # one is learned nothing is counted before the call: its tokens are taken when it returns.
        chars = estimate = 0
        if limiter.tokens.per_minute is not None:
            chars = len(system) + len(user)
            if history:
                chars += sum(len(asked) + len(answered) for asked, answered in history)
            estimate = self.estimate(chars, system, user, history)
        waited = 0.0
        failure: Failure | None = None
        CALL_ID.set(f"{next(self._call_ids)}")  # every attempt of this call carries it; this task's own context
        for attempt in range(1, options.max_attempts + 1):
            queued = time.monotonic()
            async with limiter.slot(estimate) as slot:
                sent = time.monotonic()
                waited += sent - queued
                try:
                    text, prompt, cached, written, completion, headers = await self._send(system, user, schema, history, sample)
                except anyio.get_cancelled_exc_class():
                    raise
                except Exception as exc:  # noqa: BLE001 - sorted below; anything unknown is re-raised
                    failure = self._classify(exc)
                    if failure is None:
                        raise
                    setattr(stats, failure.counter, getattr(stats, failure.counter) + 1)
                    if failure.refused is not None:
                        slot.refused(failure.refused)
                else:
                    latency = time.monotonic() - sent
                    slot.done(headers, prompt + completion)
                    if chars:
                        self.learn_density(chars, prompt)
                    cost = self.prices.cost(self.provider, self.model, prompt, cached, written, completion)
                    stats.prompt_tokens += prompt
                    stats.completion_tokens += completion
                    stats.cached_tokens += cached
                    stats.latency_sum += latency
                    if stats.cost_usd is not None:
                        stats.cost_usd = None if cost is None else stats.cost_usd + cost
                    usage = Usage(
                        model=f"{self.provider}:{self.model}", prompt_tokens=prompt, completion_tokens=completion,
                        cached_tokens=cached, attempts=attempt, latency=round(latency, 4),
                        waited=round(waited, 4), cost_usd=cost,
                    )
                    return Completion(text, usage)
            if not failure.retryable or attempt == options.max_attempts:
                break
            # A pause longer than the longest back-off (a quota, say) is cut short: the attempts run out instead.
            pause = min(failure.pause, options.backoff_max) if failure.pause else None
            limiter.backed_off(pause, overloaded=failure.overloaded)
            delay = pause + self.rng.uniform(0, 0.1 * pause + 0.05) if pause else self._backoff(attempt)
            await anyio.sleep(delay)
            waited += delay
        stats.failed += 1
        assert failure is not None
        tries = f"after {attempt} attempt{'s' if attempt > 1 else ''}"
        error = RequestError if failure.request_error else InfraError
        raise error(self.secrets.scrub(f"{self.provider}:{self.model} {tries}: {failure.reason}"))
