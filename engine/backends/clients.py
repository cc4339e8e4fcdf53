"""The run's model clients: one client per provider (the lean client or the provider's SDK), one
backend and limiter per model, and the polling of vLLM servers' load.

The pieces live apart: ``settings`` (what a run says about its calls), ``base`` (the call every
client shares: limiter, retries, failures, usage), ``wire`` (the APIs' formats), ``lean`` and ``sdk``
(the clients), ``vllm`` (a server's load), ``cache`` (the response cache, put in front of each
backend's call by ``ModelHub.backend`` when the run asks for it), ``batch`` (batch mode, put in front
of the backends of models with a batch API with ``--batch``: ``batch_queue``, ``batch_log``,
``batch_openai``, ``batch_anthropic``). The names other modules import
from here stay here.

The clients themselves (``lean``, ``sdk``, ``replicas``: aiohttp, yarl, the providers' SDKs) and
the cache (sqlite3, with ``--cache``) are imported when a model's backend is built, so that a run
whose agents are all scripted imports no HTTP client (``tests/engine/test_startup.py``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from engine.backends.base import Backend, Completion, InfraError, RequestError, Secrets, StatusError
from engine.backends.limiter import COUNTERS, DEFAULT_BURST, Bucket, Limiter
from engine.backends.prices import Price, PriceTable
from engine.backends.endpoints import known
from engine.backends.settings import (
    CALL_GAME, CALL_HEADER, GAME_HEADER, KEY_ENV, PROVIDERS, BackendSettings, History, ModelOptions, chat_turns,
    endpoint_limits, split_name,
)
from engine.backends.tokens import Tokenizer
from engine.backends.vllm import ServerLoad, metrics_url, poll_vllm, read_vllm_metrics, vllm_headroom
from engine.backends.wire import MalformedReply

if TYPE_CHECKING:  # loaded with the first backend of a run with --cache
    from engine.backends.cache import ResponseStore

_DEFAULT_URL = {"openai": "https://api.openai.com/v1"}


def served_schema_bounds(max_tokens: int) -> tuple[int, int]:
    """(characters per string, items per array) in the schema a llama.cpp server gets: small enough
    that a whole reply at its bounds fits within ``max_tokens`` even at one token per character of
    its text (a model repeating digits and commas) and about 30 tokens per small action object, so
    the grammar always closes it: a quarter of the tokens for each string, a sixty-fourth as items;
    at most 600 characters and 24 items."""
    return max(16, min(600, max_tokens // 4)), max(1, min(24, max_tokens // 64))

# Names once imported here from the client modules, loaded on first use (``engine.backends.lean``,
# ``engine.backends.sdk``, ``engine.backends.replicas``): each imports aiohttp.
_LAZY = {
    "LeanBackend": "lean", "LeanClient": "lean",
    "AnthropicBackend": "sdk", "OpenAIBackend": "sdk", "SDKBackend": "sdk", "VLLMBackend": "sdk",
    "import_sdk": "sdk", "sdk_client": "sdk",
    "ReplicaSet": "replicas", "ReplicatedBackend": "replicas", "split_urls": "replicas",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"engine.backends.{module}"), name)


def _sdk_backend(form: str) -> type[Backend]:
    from engine.backends.sdk import AnthropicBackend, OpenAIBackend, VLLMBackend

    return {"openai": OpenAIBackend, "anthropic": AnthropicBackend, "vllm": VLLMBackend}[form]


def _awaiting(backend: Backend, after_call: Callable[[], Awaitable[None]]) -> None:
    """Make each of ``backend``'s calls await ``after_call`` as it ends, answered or failed, before
    returning; a cancelled call is left to stop."""
    call = backend.complete

    async def complete(*args: Any, **kwargs: Any) -> Completion:
        try:
            completion = await call(*args, **kwargs)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception:
            await after_call()
            raise
        await after_call()
        return completion

    backend.complete = complete  # type: ignore[method-assign]


class ModelHub:
    """The run's model clients and limiters: one client per provider, one limiter per model.

    Use as ``async with hub:``; it polls each vLLM server's /metrics while open and closes the clients
    at the end. ``backend(name)`` is cheap after the first call for a model.
    """

    def __init__(self, settings: BackendSettings | None = None, environ: Mapping[str, str] | None = None) -> None:
        self.settings = endpoint_limits(settings or BackendSettings())
        self.environ = os.environ if environ is None else environ
        self.tokenizer = Tokenizer()
        self.prices = PriceTable(self.settings.prices, batch=self.settings.batch.factors)
        self._clients: dict[str, Any] = {}
        self._backends: dict[str, Backend] = {}
        self.loads: dict[str, ServerLoad] = {}
        self._shared: dict[str, tuple[Bucket, Bucket]] = {}  # provider -> its one limit's buckets
        # A worker of a cluster draws on the cluster's limits: limit key -> its buckets, and
        # ``leases.drawing(key, limiter)`` (``engine.executors.leases``); None in one process.
        self.leases: Any = None
        # Awaited as each call ends, before its reply or failure is returned: a worker's report of its
        # usage (``engine.executors.tally``). None, and nothing wraps the calls, in one process.
        self.after_call: Callable[[], Awaitable[None]] | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        # Models served by servers the engine starts (``engine.serving``): name -> what to serve, as
        # ``check`` found them; their URLs once started; where their logs go (the run directory).
        self.served: dict[str, Any] = {}
        self.served_urls: dict[str, str] = {}
        self.log_dir: Any = None
        self._servers: Any = None
        # The response cache (``--cache``): its file, opened on the first call; the models whose calls
        # it leaves alone (sampled ones, unless the run caches those too).
        self.responses: ResponseStore | None = None
        self.uncached: list[str] = []
        # Batch mode (``--batch``, ``engine.backends.batch``): made with the first model's backend; the
        # run directory that keeps the run's batches, and which games the run plays (again), set by the run.
        self.batches: Any = None
        self.run_dir: Any = None
        self.replayed: Any = None
        keys = {*KEY_ENV.values(), *(e.key_env for e in known(self.settings.endpoints).values() if e.key_env)}
        self.secrets = Secrets([self.environ.get(v, "") for v in sorted(keys)])

    def explicit_url(self, provider: str) -> bool:
        """Whether the run names the provider's server itself (a flag or its environment variable)."""
        endpoint = self.settings.endpoint(provider)
        return bool(self.settings.urls.get(provider) or (endpoint.url_env and self.environ.get(endpoint.url_env)))

    def _served(self, name: str) -> Any:
        """What the engine must serve for ``name`` (``engine.serving.ServedModel``), or None."""
        provider, model = split_name(name)
        if provider not in ("llamacpp", "vllm"):
            return None
        from engine.serving import served_model

        return served_model(provider, model, self.explicit_url(provider))

    def check(self, name: str) -> None:
        """Raise ValueError with a one-line reason if ``name`` cannot be played (unknown provider, no key,
        a model file or server program the engine cannot serve)."""
        provider, _ = split_name(name)
        endpoint = self.settings.endpoint(provider)
        served = self._served(name)
        if served is not None:
            from engine.serving import ServeError

            try:
                served.check()
            except ServeError as exc:
                raise ValueError(f"{name}: {exc}") from None
            self.served[name] = served
            if self.prices.price(*split_name(name)) is None:  # a server of this machine: no bill (--price sets one)
                self.prices.prices[name] = Price(0.0, 0.0, 0.0)
            if provider not in PROVIDERS and provider not in self.settings.endpoints:  # saved with the run
                self.settings = msgspec.structs.replace(self.settings, endpoints={**self.settings.endpoints, provider: endpoint})
            return
        if endpoint.kind != "vllm" and endpoint.key_env and not self.environ.get(endpoint.key_env):
            raise ValueError(f"{name} needs the environment variable {endpoint.key_env} (the API key)")
        if provider == "vllm" and not self.base_url("vllm"):
            raise ValueError(f"{name} needs the server's address: --vllm-url http://HOST:8000/v1")
        if provider not in PROVIDERS and not self.base_url(provider):
            raise ValueError(f"{name}: the endpoint {provider} has no url")
        if provider == "vllm" and self.settings.client("vllm") != "lean":
            from engine.backends.replicas import split_urls

            if len(split_urls(self.base_url("vllm"))) > 1:  # replicas
                raise ValueError("several vLLM servers are spread over by the lean client only; drop --client vllm=sdk")
        if self.settings.client(provider) == "sdk":
            from engine.backends.sdk import import_sdk

            import_sdk(endpoint.kind)
        if provider not in PROVIDERS and provider not in self.settings.endpoints:  # a built-in entry: saved with the run
            self.settings = msgspec.structs.replace(self.settings, endpoints={**self.settings.endpoints, provider: endpoint})

    def base_url(self, provider: str) -> str | None:
        endpoint = self.settings.endpoint(provider)
        from_env = self.environ.get(endpoint.url_env) if endpoint.url_env else None
        return self.settings.urls.get(provider) or from_env or endpoint.url or None

    def _limit(self, table: dict[str, float], provider: str, model: str) -> float | None:
        return table.get(f"{provider}:{model}", table.get(provider))

    def _client(self, provider: str) -> Any:
        client = self._clients.get(provider)
        if client is None:
            connections = max(self.settings.max_in_flight, self.settings.vllm_max_seqs * 2) + 16
            endpoint = self.settings.endpoint(provider)
            key = self.environ.get(endpoint.key_env) if endpoint.key_env else None
            key = key or ("EMPTY" if endpoint.kind == "vllm" or not endpoint.key_env else None)
            url = self.base_url(provider)
            if self.settings.client(provider) == "lean":
                from engine.backends.lean import LeanClient

                client = LeanClient(url or _DEFAULT_URL["openai"], key, connections, self.settings.options.timeout)
            else:
                from engine.backends.sdk import sdk_client

                client = sdk_client(endpoint.kind, key, url, connections)
            self._clients[provider] = client
        return client

    def backend(self, name: str) -> Backend:
        backend = self._backends.get(name)
        if backend is None:
            backend = self._backends[name] = self._new_backend(name)
            if self.settings.batch.enabled:  # before the cache: a hit makes no call, batched or not
                if self.batches is None:
                    from engine.backends.batch import Batches

                    self.batches = Batches(self)
                self.batches.install(name, backend)
            if self.settings.cache.mode != "off":
                self._cache_calls(name, backend)
            if self.after_call is not None:  # around the cache: a hit is counted too
                _awaiting(backend, self.after_call)
        return backend

    def _new_backend(self, name: str) -> Backend:
        provider, model = split_name(name)
        settings = self.settings
        kind = settings.endpoint(provider).kind
        if name in self.served or self._served(name) is not None:
            return self._served_backend(name, model)
        if kind == "vllm":
            seqs = settings.vllm_max_seqs
            limiter = Limiter(
                name, rpm=self._limit(settings.rpm, provider, model), tpm=self._limit(settings.tpm, provider, model),
                max_in_flight=seqs * 2, initial_in_flight=seqs + vllm_headroom(seqs), learn_limits=False,
                adaptive=False,
            )
            from engine.backends.replicas import split_urls

            urls = split_urls(self.base_url(provider))
            if len(urls) > 1:  # replicas: the model's calls spread over its servers
                return self._replicated(name, model, limiter, urls)
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
            key = provider if provider in settings.shared_limits else name
            if self.leases is not None:  # the limit is the cluster's
                shared = self.leases(key)
            # With no limit given, start low and let the headers and the cap's growth find the limit.
            start = settings.max_in_flight if rpm is not None else min(settings.max_in_flight, 16)
            limiter = Limiter(
                name, rpm=rpm, tpm=tpm, max_in_flight=settings.max_in_flight, initial_in_flight=start, shared=shared,
            )
            if self.leases is not None:
                self.leases.drawing(key, limiter)
        client = self._client(provider)
        parts = (model, limiter, settings.options, self.tokenizer, self.prices, self.secrets)
        # OpenAI's own API caps a reply with max_completion_tokens; vLLM and the other OpenAI-compatible
        # servers (every named endpoint of kind openai) take max_tokens, which the vLLM backends send.
        form = "vllm" if kind == "openai" and provider not in PROVIDERS else kind
        if settings.client(provider) == "lean":
            from engine.backends.lean import LeanBackend

            backend: Backend = LeanBackend(client, None, *parts, provider=form, stream=settings.stream)
        else:
            from engine.backends.sdk import import_sdk

            backend = _sdk_backend(form)(client, import_sdk(kind), *parts, stream=settings.stream)
        backend.provider = provider  # the name the run knows the model by: usage, prices, errors
        return backend

    def _served_backend(self, name: str, model: str) -> Backend:
        """The backend of a model on a server the engine started: the lean client at its URL, calls in
        flight kept near its slots from its /metrics, as for a vLLM server."""
        url = self.served_urls.get(name)
        if url is None:
            raise ValueError(f"{name} is served by a server the engine starts: check it (hub.check) before "
                             "entering the hub, which starts it")
        settings = self.settings
        slots = settings.serve_slots
        limiter = Limiter(name, rpm=None, tpm=None, max_in_flight=slots * 2, initial_in_flight=slots + vllm_headroom(slots),
                          learn_limits=False, adaptive=False)
        from engine.backends.lean import LeanBackend, LeanClient

        client = self._clients[name] = LeanClient(url, "EMPTY", slots * 2 + 16, settings.options.timeout)
        load = self.loads.setdefault(name, ServerLoad())
        if self._task_group is not None:
            self._task_group.start_soon(poll_vllm, metrics_url(url), limiter, load, slots)
        parts = (model, limiter, settings.options, self.tokenizer, self.prices, self.secrets)
        # llama.cpp turns the schema into a grammar: bounded strings and arrays keep a looping small
        # model's reply whole (``wire.bounded``); vLLM's guided decoding is left the schema as given.
        served = self.served.get(name) or self._served(name)
        bound = served_schema_bounds(settings.options.max_tokens) if served is not None and served.kind == "llamacpp" else None
        backend = LeanBackend(client, None, *parts, provider="vllm", stream=settings.stream, bound_schema=bound)
        backend.provider = split_name(name)[0]
        return backend

    def _replicated(self, name: str, model: str, limiter: Limiter, urls: list[str]) -> Backend:
        from engine.backends.replicas import ReplicaSet, ReplicatedBackend

        settings = self.settings
        key = self.environ.get(KEY_ENV["vllm"]) or "EMPTY"
        connections = settings.vllm_max_seqs * 2 + 16
        replicas = ReplicaSet(urls, key, connections, settings.options.timeout, settings.vllm_max_seqs, limiter)
        self._clients[name] = replicas  # closed with the clients
        if self._task_group is not None:
            replicas.watch(self._task_group)
        parts = (model, limiter, settings.options, self.tokenizer, self.prices, self.secrets)
        return ReplicatedBackend(replicas, None, *parts, provider="vllm", stream=settings.stream)

    def _cache_calls(self, name: str, backend: Backend) -> None:
        """Put the response cache in front of ``backend`` (``engine.backends.cache``), unless its calls
        are sampled and the run caches only the calls whose reply the request fixes."""
        from engine.backends.cache import CachedCalls, ResponseStore, cache_file, default_server, sampled, server_identity

        cache = self.settings.cache
        provider = split_name(name)[0]
        kind = self.settings.endpoint(provider).kind
        if sampled(kind, self.settings.options) and not cache.sampled:
            self.uncached.append(name)
            return
        if self.responses is None:
            self.responses = ResponseStore(cache_file(cache), expiry=cache.expiry, writable=cache.mode == "on")
        if name in self.served:  # the engine's own server, at a new address each start: known by its model
            server = f"served:{provider}"
        else:
            urls = (self.base_url(provider) or default_server(kind)).split(",")
            server = ",".join(sorted(server_identity(url) for url in urls if url.strip()))
        CachedCalls(backend, self.responses, kind=kind, server=server).install(backend)

    def backends(self) -> list[Backend]:
        return list(self._backends.values())

    def _watch_vllm(self, name: str, limiter: Limiter) -> None:
        url = self.base_url(split_name(name)[0])
        load = self.loads.setdefault(name, ServerLoad())
        if self._task_group is not None and url:
            self._task_group.start_soon(poll_vllm, metrics_url(url), limiter, load, self.settings.vllm_max_seqs)

    async def __aenter__(self) -> ModelHub:
        if self.served:
            import tempfile
            from pathlib import Path

            from engine.serving import Servers

            log_dir = Path(self.log_dir) if self.log_dir is not None else Path(tempfile.mkdtemp(prefix="asymgames-servers-"))
            self._servers = Servers(dict(self.served), log_dir, slots=self.settings.serve_slots, context=self.settings.serve_context)
            self.served_urls = await self._servers.__aenter__()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        if self._servers is not None:
            self._task_group.start_soon(self._servers.watch)
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
                if self.responses is not None:
                    await anyio.to_thread.run_sync(self.responses.close)
                if self.batches is not None:
                    self.batches.close()
                if self._servers is not None:
                    servers, self._servers = self._servers, None
                    await servers.__aexit__(None, None, None)

    def summary(self) -> dict[str, Any]:
        """How calls were made (temperature, max tokens, seed, structured output, timeouts) and, per model:
        its client, calls, attempts, failures by cause, tokens, cost; written to usage.json."""
        options = msgspec.to_builtins(self.settings.options)
        if self.settings.cache.mode != "off":
            cache = self.settings.cache
            options["cache"] = {"mode": cache.mode, "sampled": cache.sampled, "expiry": cache.expiry, "uncached_models": self.uncached}
            if self.responses is not None:
                options["cache"] |= self.responses.summary()
        if self.settings.batch.enabled:
            options["batch"] = self.batches.summary() if self.batches is not None else msgspec.to_builtins(self.settings.batch)
        result: dict[str, Any] = {"tokenizer": self.tokenizer.name, "options": options, "models": {}}
        # Only a run that built replicas imported their module (and only then can a client be one).
        replicas = sys.modules.get("engine.backends.replicas")
        for name, backend in self._backends.items():
            s = backend.limiter.stats
            result["models"][name] = {
                "client": backend.client_kind,
                **{counter: getattr(s, counter) for counter in COUNTERS},
                "cost_usd": None if s.cost_usd is None else round(s.cost_usd, 6),
                "mean_latency": round(s.latency_sum / s.calls, 4) if s.calls else None,
                "in_flight_cap": backend.limiter.cap,
                "rpm_limit": backend.limiter.requests.per_minute,
                "tpm_limit": backend.limiter.tokens.per_minute,
            }
            if replicas is not None and isinstance(backend.client, replicas.ReplicaSet):
                result["models"][name]["servers"] = backend.client.summary()
        return result


__all__ = [
    "CALL_GAME", "CALL_HEADER", "GAME_HEADER", "PROVIDERS", "Backend", "BackendSettings", "Completion", "History", "InfraError",
    "MalformedReply", "ModelHub", "ModelOptions", "RequestError", "Secrets", "ServerLoad", "StatusError",
    "chat_turns", "read_vllm_metrics", "split_name", "vllm_headroom",
]
