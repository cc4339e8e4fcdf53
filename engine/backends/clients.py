"""Model backends: OpenAI, Anthropic and a vLLM server, each behind its limiter, with our own retries.

One SDK client per provider per process (``openai.AsyncOpenAI``, ``anthropic.AsyncAnthropic``; the vLLM
server through its OpenAI-compatible API), on the SDKs' aiohttp transport, with the SDKs' own retries
off so that every attempt is counted and paced here. The SDKs are imported only when a backend is used.

Failures are sorted in two:
- the provider or the network failed (429 after all retries, 5xx, 529, timeouts, connection errors,
  bodies that are not the API's JSON, and 4xx refusals such as a bad key): ``InfraError``, which ends
  the game as an ``infra_error``; ``--resume`` plays such games again;
- the model answered: whatever text it wrote is the agent's reply, and a reply that cannot be read
  is the agent's format error, scored as the model's failure.
"""

from __future__ import annotations

import inspect
import math
import os
import random
import re
import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, NamedTuple

import anyio
import msgspec

from bus import Usage

from .limiter import DEFAULT_BURST, Bucket, Limiter, retry_after
from .prices import PriceTable
from .tokens import Tokenizer

PROVIDERS = ("openai", "anthropic", "vllm")
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "vllm": "VLLM_API_KEY"}
URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL", "vllm": "VLLM_BASE_URL"}
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
REPLAYABLE_4XX = frozenset({401, 403, 404})  # a key or model name to fix before --resume
OVERLOAD_STATUS = frozenset({429, 503, 529})
GAME_HEADER = "X-Game-Id"
CALL_GAME: ContextVar[str | None] = ContextVar("call_game", default=None)
"""The game the calls made in this context belong to, unique within the run and across runs; sent
as the ``X-Game-Id`` header so that a server playing scripted agents (``runners.fake_llm``) keeps
each game's agents apart. It names no person and no key."""


def _game_header() -> dict[str, str] | None:
    game = CALL_GAME.get()
    return {GAME_HEADER: game} if game is not None else None


class ModelOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How every model call of a run is made."""

    temperature: float = 0.0
    top_p: float | None = None  # nucleus sampling (OpenAI, vLLM); None: the provider's default
    max_tokens: int = 4096
    seed: int | None = None  # passed to providers that take one (OpenAI, vLLM)
    structured: bool = False  # ask the backend for JSON that follows the reply schema
    timeout: float = 120.0  # seconds per attempt
    max_attempts: int = 8
    backoff_base: float = 1.0  # seconds; doubles per attempt, full jitter
    backoff_max: float = 60.0

    def sampling(self) -> dict[str, Any]:
        """What the replies depend on (kept with every record a model played): temperature, top_p,
        max_tokens, seed and structured, those set."""
        fields = {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens,
                  "seed": self.seed, "structured": self.structured}
        return {k: v for k, v in fields.items() if v is not None}


class BackendSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Per-run settings of the model backends (none of them changes what a game is)."""

    options: ModelOptions = ModelOptions()
    rpm: dict[str, float] = {}  # provider or provider:model -> requests per minute
    tpm: dict[str, float] = {}  # provider or provider:model -> tokens per minute
    urls: dict[str, str] = {}  # provider -> base URL
    max_in_flight: int = 512  # per provider and model (OpenAI, Anthropic)
    vllm_max_seqs: int = 256  # the server's --max-num-seqs
    shared_limits: list[str] = []  # providers whose models draw on one limit (the account's), not one each
    prices: dict[str, tuple[float, ...]] = {}  # model -> (input, cached input, output[, cache write]) $/M tokens, over prices.toml


History = tuple[tuple[str, str], ...]
"""The earlier turns of a chat with a model: (user prompt, the model's reply) pairs, oldest first."""


def chat_turns(history: History, cache_last: bool = False) -> list[dict[str, Any]]:
    """``history`` as alternating user and assistant messages. ``cache_last`` marks the end of the
    history as a prompt-cache breakpoint (Anthropic caches the prefix up to it; OpenAI caches long
    prefixes on its own)."""
    messages: list[dict[str, Any]] = []
    for asked, answered in history:
        messages.append({"role": "user", "content": asked})
        messages.append({"role": "assistant", "content": answered})
    if cache_last and messages:
        last = messages[-1]
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": {"type": "ephemeral"}}]
    return messages


class InfraError(RuntimeError):
    """The provider or the network failed, not the model. Ends the game as an infrastructure error."""

    kind = "infra_error"


class Completion(NamedTuple):
    text: str
    usage: Usage


class RequestError(InfraError):
    """The provider refused the request itself (400, 413, 422: a prompt over the context window, say).
    Not the model's failure, but playing the game again would fail the same way, so ``--resume``
    leaves it."""

    kind = "request_error"


class MalformedReply(ValueError):
    """The provider's reply is not the API's JSON (cut short, missing fields, wrong types)."""


class _Failure(NamedTuple):
    reason: str
    retryable: bool
    pause: float | None  # what the provider asked for (retry-after)
    overloaded: bool  # lower the in-flight cap
    counter: str  # which LimiterStats counter
    request_error: bool = False  # the request itself was refused: RequestError


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


def _counts(prompt: Any, cached: Any, written: Any, completion: Any) -> tuple[int, int, int, int]:
    if not all(type(n) is int and n >= 0 for n in (prompt, cached, written, completion)):
        raise ValueError(f"token counts are not counts: {prompt!r}, {cached!r}, {written!r}, {completion!r}")
    return prompt, cached, written, completion


async def _parsed(raw: Any) -> Any:
    """The SDK's parsed reply from a raw response (``parse`` is async in some SDK versions)."""
    reply = raw.parse()
    return await reply if inspect.isawaitable(reply) else reply


def _network_cause(exc: BaseException) -> BaseException | None:
    """The aiohttp or OS exception under an SDK connection error, if any."""
    import aiohttp

    seen = exc.__cause__ or exc.__context__
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, (aiohttp.ClientError, OSError, TimeoutError)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _headers(obj: Any) -> Mapping[str, str]:
    headers = getattr(obj, "headers", None)
    return headers if headers is not None else {}


class Backend:
    """One model of one provider: builds the request, sends it through the limiter, retries."""

    provider = ""

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

    def estimate(self, system: str, user: str, history: History = ()) -> int:
        """Tokens a call may use, for the token bucket: the prompt plus a typical reply (corrected after)."""
        count = self.tokenizer.count
        earlier = sum(count(asked) + count(answered) for asked, answered in history)
        return count(system) + count(user) + earlier + min(self.options.max_tokens, 400)

    async def _send(
        self, system: str, user: str, schema: dict | None, history: History, sample: int = 0,
    ) -> tuple[str, int, int, int, int, Mapping[str, str]]:
        """(text, prompt tokens, cache reads, cache writes, completion tokens, headers) or an SDK
        exception. The prompt tokens include the cache reads and writes."""
        raise NotImplementedError

    def _classify(self, exc: Exception) -> _Failure | None:
        sdk = self.sdk
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            pause = retry_after(_headers(exc.response))
            reason = f"HTTP {status}: {exc.message}"
            if status in RETRYABLE_STATUS:
                counter = "rate_limited" if status in (429, 529) else "server_errors"
                return _Failure(reason, True, pause, status in OVERLOAD_STATUS, counter)
            return _Failure(reason, False, None, False, "server_errors", status not in REPLAYABLE_4XX)
        if isinstance(exc, MalformedReply):
            return _Failure(f"malformed reply: {exc}", True, None, False, "malformed")
        if isinstance(exc, sdk.APIResponseValidationError):
            return _Failure(f"malformed reply: {exc.message}", True, None, False, "malformed")
        if isinstance(exc, sdk.APIConnectionError):
            # The SDKs' aiohttp transport reports every connection failure as a connect timeout; the
            # aiohttp exception underneath says what happened.
            cause = _network_cause(exc)
            if cause is None and isinstance(exc, sdk.APITimeoutError) or isinstance(cause, TimeoutError):
                return _Failure("timed out", True, None, False, "timeouts")
            detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
            return _Failure(f"connection error{detail}", True, None, False, "connection_errors")
        return None

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.options.backoff_max, self.options.backoff_base * 2 ** (attempt - 1))
        return self.rng.uniform(0, ceiling)

    async def complete(
        self, system: str, user: str, schema: dict | None = None, history: History = (), *, sample: int = 0,
    ) -> Completion:
        """One model call: ``system``, then the earlier turns of a chat (``history``, pairs of user
        prompt and the model's reply), then ``user``. ``sample`` numbers the calls of a best-of-n
        turn: where the run fixes a seed, sample i is sent seed + i so that the samples differ."""
        limiter, options, stats = self.limiter, self.options, self.limiter.stats
        estimate = self.estimate(system, user, history)
        waited = 0.0
        failure: _Failure | None = None
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
                    if isinstance(exc, self.sdk.APIStatusError):
                        slot.refused(_headers(exc.response))
                else:
                    latency = time.monotonic() - sent
                    slot.done(headers, prompt + completion)
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


class OpenAIBackend(Backend):
    provider = "openai"
    max_tokens_field = "max_completion_tokens"

    async def _send(self, system, user, schema, history, sample=0):
        options = self.options
        extra: dict[str, Any] = {self.max_tokens_field: options.max_tokens}
        if options.seed is not None:
            extra["seed"] = options.seed + sample
        if options.top_p is not None:
            extra["top_p"] = options.top_p
        if schema is not None:
            extra["response_format"] = {
                "type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True},
            }
        raw = await self.client.chat.completions.with_raw_response.create(
            model=self.model,
            messages=[{"role": "system", "content": system}, *chat_turns(history), {"role": "user", "content": user}],
            temperature=options.temperature,
            timeout=options.timeout,
            extra_headers=_game_header(),
            **extra,
        )
        try:
            reply = await _parsed(raw)
            text = reply.choices[0].message.content or ""
            usage = reply.usage
            details = usage.prompt_tokens_details
            cached = (details.cached_tokens or 0) if details is not None else 0
            counts = _counts(usage.prompt_tokens, cached, 0, usage.completion_tokens)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
            raise MalformedReply(f"{type(exc).__name__}: {exc}") from exc
        return text, *counts, raw.headers


class VLLMBackend(OpenAIBackend):
    provider = "vllm"
    max_tokens_field = "max_tokens"


class AnthropicBackend(Backend):
    """Anthropic's API version 2026-10-21 (sent by SDK 2.x) refuses temperature, top_p and top_k with a
    400, so calls use the model's own sampling and ``--temperature`` does not apply; ``--model-seed``
    neither (the API takes no seed)."""

    provider = "anthropic"

    async def _send(self, system, user, schema, history, sample=0):
        options = self.options
        extra: dict[str, Any] = {}
        if schema is not None:
            extra["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        raw = await self.client.messages.with_raw_response.create(
            model=self.model,
            max_tokens=options.max_tokens,
            system=system,
            messages=[*chat_turns(history, cache_last=True), {"role": "user", "content": user}],
            timeout=options.timeout,
            extra_headers=_game_header(),
            **extra,
        )
        try:
            reply = await _parsed(raw)
            text = "".join(block.text for block in reply.content if block.type == "text")
            usage = reply.usage
            cached = usage.cache_read_input_tokens or 0
            written = usage.cache_creation_input_tokens or 0
            # Anthropic counts cache reads and writes apart from input_tokens; prompt_tokens holds all three.
            counts = _counts(usage.input_tokens + cached + written, cached, written, usage.output_tokens)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
            raise MalformedReply(f"{type(exc).__name__}: {exc}") from exc
        return text, *counts, raw.headers


_BACKENDS = {"openai": OpenAIBackend, "anthropic": AnthropicBackend, "vllm": VLLMBackend}


def split_name(name: str) -> tuple[str, str]:
    """``provider:model`` -> (provider, model); the model keeps its spelling. Raises ValueError."""
    provider, sep, model = name.partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    if not sep or provider not in PROVIDERS:
        raise ValueError(f"unknown model provider in {name!r}; use openai:MODEL, anthropic:MODEL or vllm:MODEL")
    if not model:
        raise ValueError(f"{name!r} names no model; use {provider}:MODEL")
    return provider, model


def _metrics_url(base_url: str) -> str:
    return re.sub(r"/v1/?$", "", base_url.rstrip("/")) + "/metrics"


_METRIC = re.compile(r"^(vllm:num_requests_(?:running|waiting))(?:\{[^}]*\})?\s+([0-9.eE+-]+)", re.M)


def read_vllm_metrics(text: str) -> dict[str, float]:
    """Sum ``vllm:num_requests_running`` and ``..._waiting`` over their label sets."""
    found: dict[str, float] = {}
    for name, value in _METRIC.findall(text):
        key = name.removeprefix("vllm:num_requests_")
        found[key] = found.get(key, 0.0) + float(value)
    return found


class ServerLoad:
    """The vLLM server's queue as its /metrics last said."""

    def __init__(self) -> None:
        self.running = 0.0
        self.waiting = 0.0
        self.samples = 0
        self.running_sum = 0.0
        self.error: str | None = None


class ModelHub:
    """The run's model clients and limiters: one SDK client per provider, one limiter per model.

    Use as ``async with hub:``; it polls each vLLM server's /metrics while open and closes the clients
    at the end. ``backend(name)`` is cheap after the first call for a model.
    """

    def __init__(self, settings: BackendSettings | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.settings = settings or BackendSettings()
        self.environ = os.environ if environ is None else environ
        self.tokenizer = Tokenizer()
        self.prices = PriceTable(self.settings.prices)
        self._clients: dict[str, Any] = {}
        self._backends: dict[str, Backend] = {}
        self.loads: dict[str, ServerLoad] = {}
        self._shared: dict[str, tuple[Bucket, Bucket]] = {}  # provider -> its one limit's buckets
        self._task_group: anyio.abc.TaskGroup | None = None
        self.secrets = Secrets([self.environ.get(v, "") for v in KEY_ENV.values()])

    def check(self, name: str) -> None:
        """Raise ValueError with a one-line reason if ``name`` cannot be played (unknown provider, no key)."""
        provider, _ = split_name(name)
        if provider != "vllm" and not self.environ.get(KEY_ENV[provider]):
            raise ValueError(f"{name} needs the environment variable {KEY_ENV[provider]} (the API key)")
        if provider == "vllm" and not self.base_url("vllm"):
            raise ValueError(f"{name} needs the server's address: --vllm-url http://HOST:8000/v1")
        _import_sdk(provider)

    def base_url(self, provider: str) -> str | None:
        return self.settings.urls.get(provider) or self.environ.get(URL_ENV[provider]) or None

    def _limit(self, table: dict[str, float], provider: str, model: str) -> float | None:
        return table.get(f"{provider}:{model}", table.get(provider))

    def _client(self, provider: str) -> Any:
        client = self._clients.get(provider)
        if client is None:
            sdk = _import_sdk(provider)
            limits_module = __import__("httpx2")
            connections = max(self.settings.max_in_flight, self.settings.vllm_max_seqs * 2) + 16
            http_client = sdk.DefaultAioHttpClient(
                limits=limits_module.Limits(max_connections=connections, max_keepalive_connections=connections)
            )
            key = self.environ.get(KEY_ENV[provider]) or ("EMPTY" if provider == "vllm" else None)
            kwargs: dict[str, Any] = {"api_key": key, "max_retries": 0, "http_client": http_client}
            if self.base_url(provider):
                kwargs["base_url"] = self.base_url(provider)
            client = (sdk.AsyncAnthropic if provider == "anthropic" else sdk.AsyncOpenAI)(**kwargs)
            self._clients[provider] = client
        return client

    def backend(self, name: str) -> Backend:
        backend = self._backends.get(name)
        if backend is not None:
            return backend
        provider, model = split_name(name)
        settings = self.settings
        if provider == "vllm":
            seqs = settings.vllm_max_seqs
            limiter = Limiter(
                name, rpm=self._limit(settings.rpm, provider, model), tpm=self._limit(settings.tpm, provider, model),
                max_in_flight=seqs * 2, initial_in_flight=seqs + vllm_headroom(seqs), learn_limits=False,
                adaptive=False,
            )
            self._watch_vllm(name, limiter)
        else:
            rpm = self._limit(settings.rpm, provider, model)
            tpm = self._limit(settings.tpm, provider, model)
            shared = None
            if provider in settings.shared_limits:  # one limit for the provider's models, learned once
                rpm, tpm = settings.rpm.get(provider), settings.tpm.get(provider)
                shared = self._shared.get(provider)
                if shared is None:
                    shared = self._shared[provider] = (Bucket(rpm, DEFAULT_BURST, time.monotonic), Bucket(tpm, DEFAULT_BURST, time.monotonic))
            # With no limit given, start low and let the headers and the cap's growth find the limit.
            start = settings.max_in_flight if rpm is not None else min(settings.max_in_flight, 16)
            limiter = Limiter(
                name, rpm=rpm, tpm=tpm, max_in_flight=settings.max_in_flight, initial_in_flight=start, shared=shared,
            )
        backend = _BACKENDS[provider](
            self._client(provider), _import_sdk(provider), model, limiter, settings.options,
            self.tokenizer, self.prices, self.secrets,
        )
        self._backends[name] = backend
        return backend

    def backends(self) -> list[Backend]:
        return list(self._backends.values())

    def _watch_vllm(self, name: str, limiter: Limiter) -> None:
        url = self.base_url("vllm")
        load = self.loads.setdefault(name, ServerLoad())
        if self._task_group is not None and url:
            self._task_group.start_soon(self._poll_vllm, _metrics_url(url), limiter, load)

    async def _poll_vllm(self, url: str, limiter: Limiter, load: ServerLoad, every: float = 0.25) -> None:
        """Keep calls in flight near the server's batch size: a few more than it runs at once, fewer if
        its own queue grows (another client shares it), more if it runs below its batch with nothing waiting."""
        import aiohttp

        seqs = self.settings.vllm_max_seqs
        headroom = vllm_headroom(seqs)
        last_change = -math.inf
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
            while True:
                try:
                    async with session.get(url) as response:
                        metrics = read_vllm_metrics(await response.text())
                    load.error = None
                except (aiohttp.ClientError, TimeoutError, UnicodeDecodeError) as exc:
                    load.error = f"{type(exc).__name__}: {exc}"
                    metrics = {}
                if "running" in metrics:
                    load.running, load.waiting = metrics["running"], metrics.get("waiting", 0.0)
                    load.samples += 1
                    load.running_sum += load.running
                    # A change shows in the server's queue only once the calls sent before it are done:
                    # change at most once per call's latency.
                    stats = limiter.stats
                    settle = max(1.0, stats.latency_sum / stats.calls if stats.calls else 1.0)
                    now = time.monotonic()
                    if now - last_change >= settle:
                        if load.waiting > 2 * headroom and limiter.running >= limiter.cap - headroom:
                            limiter.set_cap(max(seqs // 4, min(limiter.cap, limiter.running) - int(load.waiting - headroom)))
                            last_change = now
                        elif load.waiting == 0 and load.running < seqs and limiter.running >= limiter.cap:
                            limiter.set_cap(limiter.cap + int(seqs - load.running))
                            last_change = now
                await anyio.sleep(every)

    async def __aenter__(self) -> ModelHub:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, *exc_info) -> bool | None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        try:
            return await self._task_group.__aexit__(*exc_info)
        finally:
            self._task_group = None
            with anyio.CancelScope(shield=True):
                for client in self._clients.values():
                    await client.close()
                self._clients.clear()

    def summary(self) -> dict[str, Any]:
        """How calls were made (temperature, max tokens, seed, structured output, timeouts) and, per model:
        calls, attempts, failures by cause, tokens, cost; written to usage.json."""
        options = msgspec.to_builtins(self.settings.options)
        result: dict[str, Any] = {"tokenizer": self.tokenizer.name, "options": options, "models": {}}
        for name, backend in self._backends.items():
            s = backend.limiter.stats
            result["models"][name] = {
                "calls": s.calls, "attempts": s.attempts, "rate_limited": s.rate_limited,
                "server_errors": s.server_errors, "timeouts": s.timeouts,
                "connection_errors": s.connection_errors, "malformed": s.malformed, "failed": s.failed,
                "prompt_tokens": s.prompt_tokens, "completion_tokens": s.completion_tokens,
                "cached_tokens": s.cached_tokens,
                "cost_usd": None if s.cost_usd is None else round(s.cost_usd, 6),
                "mean_latency": round(s.latency_sum / s.calls, 4) if s.calls else None,
                "in_flight_cap": backend.limiter.cap,
                "rpm_limit": backend.limiter.requests.per_minute,
                "tpm_limit": backend.limiter.tokens.per_minute,
            }
        return result


def vllm_headroom(max_num_seqs: int) -> int:
    """Calls beyond the batch kept waiting at the server, so a finished sequence is replaced at once."""
    return max(4, math.ceil(max_num_seqs / 8))


def _import_sdk(provider: str):
    try:
        if provider == "anthropic":
            import anthropic

            return anthropic
        import openai

        return openai
    except ImportError as exc:  # pragma: no cover - both are dependencies
        raise ValueError(f"the {provider} backend needs its SDK: pip install {exc.name}") from exc
