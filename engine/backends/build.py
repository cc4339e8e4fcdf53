"""How one model's backend is built from the run's settings: its client (one per provider, the lean
client or the provider's SDK), its limiter, the provider's backend, and the backends around it in
one fixed order (``compose``).

The clients themselves (``lean``, ``sdk``, ``replicas``: aiohttp, yarl, the providers' SDKs), the
cache (sqlite3, with ``--cache``) and batch mode (``--batch``) are imported when a model's backend is
built, so that a run whose agents are all scripted imports no HTTP client
(``tests/engine/test_startup.py``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio.abc

from engine.backends.base import Backend, Secrets
from engine.backends.limiter import DEFAULT_BURST, Bucket, Limiter
from engine.backends.prices import PriceTable
from engine.backends.provider import ProviderBackend
from engine.backends.settings import PROVIDERS, BackendSettings, split_name
from engine.backends.tokens import Tokenizer
from engine.backends.vllm import ServerLoad, metrics_url, poll_vllm, vllm_headroom
from engine.backends.wire import GrammarForm
from engine.backends.wrappers import OnePromptAtOnce, PacedCalls, ReportedCalls

if TYPE_CHECKING:
    from engine.backends.batch import Batches
    from engine.backends.cache import ResponseStore
    from engine.serving import ServedModel

_DEFAULT_URL = {"openai": "https://api.openai.com/v1"}


class ClusterLimits(Protocol):
    """A cluster's limits, as a worker draws on them (``engine.executors.leases.Leases``): the
    request and token buckets of a limit key, and the limiters drawing on each."""

    def __call__(self, key: str) -> tuple[Any, Any]: ...

    def drawing(self, key: str, limiter: Limiter) -> None: ...


@dataclass(frozen=True)
class HubContext:
    """What the run tells its model hub when it makes it.

    ``run_dir``: where servers the engine starts write their logs and batch mode keeps the run's
    batches (``batches.jsonl``); ``replayed(game_id)``: whether the run plays that game (again),
    so that a resume answers its batched calls; ``limits``: a cluster worker's share of the
    cluster's limits; ``after_call``: awaited as each call ends (a worker's usage report)."""

    run_dir: Path | None = None
    replayed: Callable[[int], bool] | None = None
    limits: ClusterLimits | None = None
    after_call: Callable[[], Awaitable[None]] | None = None


def served_schema_bounds(max_tokens: int) -> tuple[int, int]:
    """(characters per string, items per array) in the schema a llama.cpp server gets: small enough
    that a whole reply at its bounds fits within ``max_tokens`` even at one token per character of
    its text (a model repeating digits and commas) and about 30 tokens per small action object, so
    the grammar always closes it: a quarter of the tokens for each string, a sixty-fourth as items;
    at most 600 characters and 24 items."""
    return max(16, min(600, max_tokens // 4)), max(1, min(24, max_tokens // 64))


def compose(provider: Backend, *, batched: Callable[[Backend], Backend] | None = None,
            cached: Callable[[Backend], Backend] | None = None,
            after_call: Callable[[], Awaitable[None]] | None = None, one_prompt_at_once: bool = False) -> Backend:
    """The backend a model's calls go through, from the inside out: the provider's call; batch mode
    (a call becomes a request of a batch); calls of one prompt one after another, for a server that
    caches prompt prefixes (``OnePromptAtOnce``); the response cache (a hit makes no call, batched or
    not, and waits for none); the usage report (around the cache: a hit is counted too); the run's
    pacing (any call, a hit too, tells the run the game has called)."""
    backend = provider
    if batched is not None:
        backend = batched(backend)
    if one_prompt_at_once:
        backend = OnePromptAtOnce(backend)
    if cached is not None:
        backend = cached(backend)
    if after_call is not None:
        backend = ReportedCalls(backend, after_call)
    return PacedCalls(backend)


class Builder:
    """Builds the models' backends of one hub and keeps what they share: the clients (closed by the
    hub), the buckets of shared limits, the servers' loads, the response cache's file, batch mode."""

    def __init__(
        self, settings: BackendSettings, environ: Mapping[str, str], context: HubContext, *,
        tokenizer: Tokenizer, prices: PriceTable, secrets: Secrets, served: Mapping[str, ServedModel],
        served_urls: Mapping[str, str], task_group: Callable[[], anyio.abc.TaskGroup | None],
        grammar_forms: Mapping[str, GrammarForm] | None = None,
    ) -> None:
        self.settings = settings
        self.environ = environ
        self.context = context
        self.tokenizer, self.prices, self.secrets = tokenizer, prices, secrets
        self.served, self.served_urls = served, served_urls
        self.task_group = task_group
        self.grammar_forms = grammar_forms if grammar_forms is not None else {}  # vLLM models' grammar forms, by server version
        self.clients: dict[str, Any] = {}
        self.loads: dict[str, ServerLoad] = {}
        self._shared: dict[str, tuple[Bucket, Bucket]] = {}  # provider -> its one limit's buckets
        self.responses: ResponseStore | None = None
        self.uncached: list[str] = []  # models whose calls the cache leaves alone (sampled ones)
        self.batches: Batches | None = None

    def base_url(self, provider: str) -> str | None:
        return self.settings.base_url(provider, self.environ)

    def backend(self, name: str) -> tuple[Backend, ProviderBackend]:
        """(the backend the model's calls go through, the provider's backend inside it)."""
        provider = self._provider_backend(name)
        batched = cached = None
        if self.settings.batch.enabled:
            batched = self._batched(name, provider)
        if self.settings.cache.mode != "off":
            cached = self._cached(name, provider)
        return compose(provider, batched=batched, cached=cached, after_call=self.context.after_call,
                       one_prompt_at_once=self.caches_prefixes(name)), provider

    def caches_prefixes(self, name: str) -> bool:
        """Whether the model's server is llama.cpp's (one the engine starts, or the ``llamacpp``
        endpoint), which reuses a prompt it computed for a call after, not for one beside."""
        return (self.served[name].kind if name in self.served else split_name(name)[0]) == "llamacpp"

    def _limit(self, table: dict[str, float], provider: str, model: str) -> float | None:
        return table.get(f"{provider}:{model}", table.get(provider))

    def client(self, provider: str) -> Any:
        """The client of ``provider``, made on first use."""
        client = self.clients.get(provider)
        if client is None:
            connections = max(self.settings.max_in_flight, self.settings.vllm_max_seqs * 2) + 16
            key, url = self.settings.key(provider, self.environ), self.base_url(provider)
            if self.settings.client(provider) == "lean":
                from engine.backends.lean import LeanClient

                client = LeanClient(url or _DEFAULT_URL["openai"], key, connections, self.settings.options.timeout)
            else:
                from engine.backends.sdk import sdk_client

                client = sdk_client(self.settings.endpoint(provider).kind, key, url, connections)
            self.clients[provider] = client
        return client

    def sdk_client(self, provider: str) -> tuple[Any, Any]:
        """The SDK client of ``provider`` and the SDK: the model calls' own where they go through the
        SDK, else one of its own (batch mode's calls go through the SDK), closed with the clients."""
        from engine.backends.sdk import import_sdk, sdk_client

        endpoint = self.settings.endpoint(provider)
        if self.settings.client(provider) == "sdk":
            return self.client(provider), import_sdk(endpoint.kind)
        name = f"{provider}#sdk"
        if name not in self.clients:
            self.clients[name] = sdk_client(endpoint.kind, self.settings.key(provider, self.environ), self.base_url(provider), 16)
        return self.clients[name], import_sdk(endpoint.kind)

    def _provider_backend(self, name: str) -> ProviderBackend:
        provider, model = split_name(name)
        settings = self.settings
        kind = settings.endpoint(provider).kind
        if name in self.served:
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
            self._watch(name, self.base_url(provider), limiter, seqs)
        else:
            limiter = self._limiter(name, provider, model)
        parts = (self.client(provider), None, model, limiter, settings.options, self.tokenizer, self.prices, self.secrets)
        # OpenAI's own API caps a reply with max_completion_tokens; vLLM and the other OpenAI-compatible
        # servers (every named endpoint of kind openai) take max_tokens, which the vLLM backends send.
        form = "vllm" if kind == "openai" and provider not in PROVIDERS else kind
        if settings.client(provider) == "lean":
            from engine.backends.lean import LeanBackend

            return LeanBackend(*parts, provider=provider, form=form, stream=settings.stream,
                               grammar_form=self.grammar_forms.get(name, "vllm") if kind == "vllm" else None,
                               token_form=settings.token_form(provider))
        from engine.backends.sdk import AnthropicBackend, OpenAIBackend, VLLMBackend, import_sdk

        sdk_backend = {"openai": OpenAIBackend, "anthropic": AnthropicBackend, "vllm": VLLMBackend}[form]
        client, _, *rest = parts
        if sdk_backend is AnthropicBackend:
            return sdk_backend(client, import_sdk(kind), *rest, provider=provider, stream=settings.stream)
        return sdk_backend(client, import_sdk(kind), *rest, provider=provider, stream=settings.stream,
                           token_form=settings.token_form(provider),
                           grammar_form=self.grammar_forms.get(name, "vllm") if kind == "vllm" else None)  # as its version says

    def _limiter(self, name: str, provider: str, model: str) -> Limiter:
        """The limiter of a provider's model: its own limit, the provider's shared one, or the cluster's."""
        settings = self.settings
        rpm = self._limit(settings.rpm, provider, model)
        tpm = self._limit(settings.tpm, provider, model)
        shared = None
        if provider in settings.shared_limits:  # one limit for the provider's models, learned once
            rpm, tpm = settings.rpm.get(provider), settings.tpm.get(provider)
            shared = self._shared.get(provider)
            if shared is None:
                shared = self._shared[provider] = (Bucket(rpm, DEFAULT_BURST, time.monotonic), Bucket(tpm, DEFAULT_BURST, time.monotonic))
        key = provider if provider in settings.shared_limits else name
        limits = self.context.limits
        if limits is not None:  # the limit is the cluster's
            shared = limits(key)
        # With no limit given, start low and let the headers and the cap's growth find the limit.
        start = settings.max_in_flight if rpm is not None else min(settings.max_in_flight, 16)
        limiter = Limiter(name, rpm=rpm, tpm=tpm, max_in_flight=settings.max_in_flight, initial_in_flight=start, shared=shared)
        if limits is not None:
            limits.drawing(key, limiter)
        return limiter

    def _served_backend(self, name: str, model: str) -> ProviderBackend:
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

        client = self.clients[name] = LeanClient(url, "EMPTY", slots * 2 + 16, settings.options.timeout)
        self._watch(name, url, limiter, slots)
        model = self.served[name].requested or model  # a vLLM adapter: its name on the server
        parts = (client, None, model, limiter, settings.options, self.tokenizer, self.prices, self.secrets)
        # llama.cpp turns the schema into a grammar: bounded strings and arrays keep a looping small
        # model's reply whole (``wire.bounded``); vLLM's guided decoding is left the schema as given.
        bound = served_schema_bounds(settings.options.max_tokens) if self.served[name].kind == "llamacpp" else None
        llamacpp = self.served[name].kind == "llamacpp"
        grammar_form: GrammarForm = "llamacpp" if llamacpp else self.grammar_forms.get(name, "vllm")
        return LeanBackend(*parts, provider=split_name(name)[0], form="vllm", stream=settings.stream, bound_schema=bound,
                           grammar_form=grammar_form, token_form="llamacpp" if llamacpp else "vllm")

    def _replicated(self, name: str, model: str, limiter: Limiter, urls: list[str]) -> ProviderBackend:
        from engine.backends.replicas import ReplicaSet, ReplicatedBackend

        settings = self.settings
        key = self.settings.key("vllm", self.environ)
        connections = settings.vllm_max_seqs * 2 + 16
        replicas = ReplicaSet(urls, key, connections, settings.options.timeout, settings.vllm_max_seqs, limiter)
        self.clients[name] = replicas  # closed with the clients
        task_group = self.task_group()
        if task_group is not None:
            replicas.watch(task_group)
        parts = (model, limiter, settings.options, self.tokenizer, self.prices, self.secrets)
        return ReplicatedBackend(replicas, None, *parts, provider="vllm", form="vllm", stream=settings.stream,
                                 grammar_form=self.grammar_forms.get(name, "vllm"), token_form="vllm")

    def _watch(self, name: str, url: str | None, limiter: Limiter, slots: int) -> None:
        """Read the server's /metrics while the hub is open, steering ``limiter``'s cap by its load."""
        load = self.loads.setdefault(name, ServerLoad())
        task_group = self.task_group()
        if task_group is not None and url:
            task_group.start_soon(poll_vllm, metrics_url(url), limiter, load, slots)

    def _batched(self, name: str, provider: ProviderBackend) -> Callable[[Backend], Backend] | None:
        """Batch mode's backend for ``name``, or None where its provider has no batch API."""
        from engine.backends.batch import Batches

        if self.batches is None:
            context = self.context
            self.batches = Batches(self.settings, self.sdk_client, served=self.served, task_group=self.task_group,
                                   run_dir=context.run_dir, replayed=context.replayed)
        return self.batches.wrapper(name, provider)

    def _cached(self, name: str, provider: ProviderBackend) -> Callable[[Backend], Backend] | None:
        """The response cache's backend for ``name``, unless its calls are sampled and the run caches
        only the calls whose reply the request fixes (``engine.backends.cache``)."""
        from engine.backends.cache import CachedCalls, default_server, model_key, server_identity

        options = self.settings.options
        provider_name = split_name(name)[0]
        kind = self.settings.endpoint(provider_name).kind
        if not self.cache_covers(name):
            self.uncached.append(name)
            return None
        store = self.response_store()
        if name in self.served:  # the engine's own server, at a new address each start: known by its model
            server = f"served:{provider_name}"
        else:
            urls = (self.base_url(provider_name) or default_server(kind)).split(",")
            server = ",".join(sorted(server_identity(url) for url in urls if url.strip()))
        fixed = model_key(kind, server, provider.provider, provider.model, options, provider.bound_schema)
        return lambda inner: CachedCalls(inner, store, fixed, options.seed)

    def cache_covers(self, name: str) -> bool:
        """Whether the response cache takes ``name``'s calls: not when they are sampled and the run
        caches only the calls whose reply the request fixes."""
        from engine.backends.cache import sampled

        kind = self.settings.endpoint(split_name(name)[0]).kind
        return self.settings.cache.sampled or not sampled(kind, self.settings.options)

    def response_store(self) -> ResponseStore:
        """The response cache's file, one for the run's models."""
        from engine.backends.cache import ResponseStore, cache_file

        if self.responses is None:
            cache = self.settings.cache
            self.responses = ResponseStore(cache_file(cache), expiry=cache.expiry, writable=cache.mode == "on")
        return self.responses

    async def close(self) -> None:
        for client in self.clients.values():
            await client.close()
        self.clients.clear()
        if self.responses is not None:
            await anyio.to_thread.run_sync(self.responses.close)
        if self.batches is not None:
            self.batches.close()


__all__ = ["Builder", "ClusterLimits", "HubContext", "compose", "served_schema_bounds"]
