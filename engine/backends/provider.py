"""The model call every client shares: the limiter, our own retries, usage and cost, and the sorting
of failures (``base`` says into what).

A client's backend implements ``_send`` (one attempt) and may extend ``_classify`` with its own
exceptions."""

from __future__ import annotations

import itertools
import random
import sys
import time
from collections.abc import Mapping
from typing import Any

import anyio

from bus import Usage

from engine.backends.base import Completion, Failure, InfraError, Request, RequestError, Secrets, StatusError, TokensMissing
from engine.backends.limiter import Limiter, LimiterStats, retry_after
from engine.backends.prices import PriceTable
from engine.backends.settings import History, ModelOptions
from engine.backends.tokens import Tokenizer
from engine.backends.wire import MalformedReply, Reply

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
REPLAYABLE_4XX = frozenset({401, 403, 404})  # a key or model name to fix before --resume
OVERLOAD_STATUS = frozenset({429, 503, 529})


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


def count_answer(stats: LimiterStats, reply: Reply, latency: float, cost: float | None) -> None:
    """Count an answered call's tokens, latency, cost (unknown from the first call whose is) and cut."""
    stats.prompt_tokens += reply.prompt
    stats.completion_tokens += reply.completion
    stats.cached_tokens += reply.cached
    stats.latency_sum += latency
    if stats.cost_usd is not None:
        stats.cost_usd = None if cost is None else stats.cost_usd + cost
    stats.cut += int(reply.finish == "length")


def completion(name: str, reply: Reply, cost: float | None, *, attempts: int, latency: float, waited: float,
               batched: int = 0) -> Completion:
    """What an answered call of the model ``name`` brings back, with its usage."""
    usage = Usage(
        model=name, prompt_tokens=reply.prompt, completion_tokens=reply.completion, cached_tokens=reply.cached,
        attempts=attempts, latency=round(latency, 4), waited=round(waited, 4), cost_usd=cost, batched=batched,
        cut=int(reply.finish == "length"),
    )
    return Completion(reply.text, usage, reply.finish, reply.tokens)


def missing_tokens(reply: Reply) -> list[str]:
    """What of a call's tokens the reply lacks: the prompt's token ids, the completion's, their
    log-probabilities; or, all there, an id for each completion token the server counted and a
    log-probability for each id."""
    tokens = reply.tokens
    if tokens is None:
        return ["prompt token ids", "completion token ids", "logprobs"]
    missing = [what for what, there in (("prompt token ids", tokens.prompt_ids), ("completion token ids", tokens.completion_ids),
                                        ("logprobs", tokens.logprobs)) if there is None]
    if missing:
        return missing
    ids, logprobs = tokens.completion_ids or (), tokens.logprobs or ()
    if len(ids) != reply.completion:
        missing.append(f"id of every completion token it counted ({len(ids)} ids for {reply.completion} tokens)")
    elif len(logprobs) != len(ids):
        missing.append(f"logprob of every completion token ({len(logprobs)} for {len(ids)} tokens)")
    return missing


class ProviderBackend:
    """One model of one provider (a ``base.Backend``): sends each call through the limiter, retries,
    counts usage and cost. Subclasses implement ``_send``."""

    provider = ""
    client_kind: str | None = None  # "lean" or "sdk", as usage.json says; None for a stand-in
    bound_schema: tuple[int, int] | None = None  # (characters per string, items per array) the schema is held to

    def __init__(
        self, client: Any, sdk: Any, model: str, limiter: Limiter, options: ModelOptions,
        tokenizer: Tokenizer, prices: PriceTable, secrets: Secrets, *, provider: str | None = None,
    ) -> None:
        self.client = client
        self.sdk = sdk
        if provider is not None:  # the name the run knows the model's provider by: usage, prices, errors
            self.provider = provider
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

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    def arriving(self, n: int) -> None:
        """Pieces of a streamed reply counted as they arrive (``wire.openai_stream``), taken back when its call ends."""
        self.limiter.stats.arriving += n

    async def _send(self, request: Request, call: str) -> tuple[Reply, Mapping[str, str]]:
        """One attempt: the reply and the response's headers, or an exception ``_classify`` knows.
        ``call`` names the call, the same for each of its attempts (the ``X-Call-Id`` header)."""
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

    async def complete(self, request: Request) -> Completion:
        """One model call, attempted until it is answered, fails for good, or the attempts run out."""
        limiter, options, stats = self.limiter, self.options, self.limiter.stats
        # Only a token limit (given, or learned from the headers) needs the call's tokens up front. Until
        # one is learned nothing is counted before the call: its tokens are taken when it returns.
        chars = estimate = 0
        if limiter.tokens.per_minute is not None:
            system, user, history = request.system, request.user, request.history
            chars = len(system) + len(user)
            if history:
                chars += sum(len(asked) + len(answered) for asked, answered in history)
            estimate = self.estimate(chars, system, user, history)
        waited = 0.0
        failure: Failure | None = None
        call = f"{next(self._call_ids)}"  # every attempt of this call carries it
        for attempt in range(1, options.max_attempts + 1):
            queued = time.monotonic()
            async with limiter.slot(estimate) as slot:
                sent = time.monotonic()
                waited += sent - queued
                try:
                    reply, headers = await self._send(request, call)
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
                    slot.done(headers, reply.prompt + reply.completion)
                    if chars:
                        self.learn_density(chars, reply.prompt)
                    cost = self.prices.cost(self.provider, self.model, reply.prompt, reply.cached, reply.written, reply.completion)
                    count_answer(stats, reply, latency, cost)
                    if request.tokens:
                        missing = missing_tokens(reply)
                        if missing:
                            stats.failed += 1
                            raise TokensMissing(f"{self.name}: the server's reply has no {', no '.join(missing)} (asked for "
                                                "with --tokens); play the model on a vLLM or llama.cpp server, or without --tokens")
                    return completion(self.name, reply, cost, attempts=attempt, latency=latency, waited=waited)
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
        raise error(self.secrets.scrub(f"{self.name} {tries}: {failure.reason}"))
