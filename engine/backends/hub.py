"""The run's models: which it may call (``check``), each one's backend by name (built once by
``build.Builder``), the servers the engine starts for them, and what ``usage.json`` says of them.

The pieces live apart: ``base`` (the contract: request, completion, backend, errors), ``settings``
(what a run says about its calls), ``provider`` (the call every client shares: limiter, retries,
failures, usage), ``wire`` (the APIs' formats), ``lean`` and ``sdk`` (the clients), ``vllm`` (a
server's load), ``build`` (one model's backend, and the backends around it in their order),
``wrappers``, ``cache`` (the response cache) and ``batch`` (batch mode).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import msgspec

from engine.backends.base import Backend, Secrets
from engine.backends.build import Builder, HubContext
from engine.backends.endpoints import Endpoint, known
from engine.backends.limiter import COUNTERS
from engine.backends.prices import PriceTable
from engine.backends.provider import ProviderBackend
from engine.backends.settings import KEY_ENV, PROVIDERS, BackendSettings, endpoint_limits, split_name
from engine.backends.tokens import Tokenizer
from engine.backends.vllm import ServerLoad
from engine.backends.wire import GrammarForm, vllm_grammar_form

if TYPE_CHECKING:
    from engine.backends.batch import Batches
    from engine.backends.wire import TokenForm
    from engine.serving import Servers, ServedModel


class ModelHub:
    """The run's model clients and limiters: one client per provider, one limiter per model.

    Use as ``async with hub:``; it starts the servers the engine serves models on, polls each
    server's /metrics while open and closes the clients at the end. ``backend(name)`` is cheap
    after the first call for a model. ``context`` is what the run tells the hub (``HubContext``).
    """

    def __init__(self, settings: BackendSettings | None = None, environ: Mapping[str, str] | None = None,
                 context: HubContext = HubContext()) -> None:
        self._settings = endpoint_limits(settings or BackendSettings())
        self.environ = os.environ if environ is None else environ
        self.context = context
        self.tokenizer = Tokenizer()
        self._named: dict[str, Endpoint] = {}  # endpoints the checked models name, saved with the run
        # Models served by servers the engine starts (``engine.serving``): name -> what to serve, as
        # ``check`` found them; their URLs once started.
        self.served: dict[str, ServedModel] = {}
        self.served_urls: dict[str, str] = {}
        # Models on vLLM servers the run names: name -> (its name there, the servers' URLs), whose
        # context is asked before any game (``engine.serving.context``).
        self.sized: dict[str, tuple[str, list[str]]] = {}
        # Models on vLLM servers, under --structured: how their servers take a reply grammar, by the
        # version each says before any game (``wire.vllm_grammar_form``).
        self.grammar_forms: dict[str, GrammarForm] = {}
        # A model served on this machine has no bill, unless a price is given.
        self.prices = PriceTable(self._settings.prices, batch=self._settings.batch.factors, local=self.served.__contains__)
        keys = {*KEY_ENV.values(), *(e.key_env for e in known(self._settings.endpoints).values() if e.key_env)}
        self.secrets = Secrets([self.environ.get(v, "") for v in sorted(keys)])
        self._backends: dict[str, Backend] = {}
        self._providers: dict[str, ProviderBackend] = {}
        self._builder: Builder | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._servers: Servers | None = None

    def for_run(self, context: HubContext) -> ModelHub:
        """A hub for a run: the models checked here, what the run tells it (``context``). Made before
        any backend is built."""
        if self._backends:
            raise RuntimeError("the hub has built backends already; make the run's hub before")
        hub = ModelHub(self.settings, self.environ, context)
        hub.served.update(self.served)
        hub.sized.update(self.sized)
        return hub

    @property
    def settings(self) -> BackendSettings:
        """The run's model settings, with the endpoints its checked models name (saved with the run)."""
        if not self._named:
            return self._settings
        return msgspec.structs.replace(self._settings, endpoints={**self._settings.endpoints, **self._named})

    @property
    def builder(self) -> Builder:
        if self._builder is None:
            self._builder = Builder(
                self.settings, self.environ, self.context, tokenizer=self.tokenizer, prices=self.prices,
                secrets=self.secrets, served=self.served, served_urls=self.served_urls, task_group=lambda: self._task_group,
                grammar_forms=self.grammar_forms,
            )
        return self._builder

    @property
    def loads(self) -> dict[str, ServerLoad]:
        """Each served model's load, as its server's /metrics said (the dashboard's)."""
        return self._builder.loads if self._builder is not None else {}

    @property
    def batches(self) -> Batches | None:
        """Batch mode, once a model's calls go through it."""
        return self._builder.batches if self._builder is not None else None

    def explicit_url(self, provider: str) -> bool:
        """Whether the run names the provider's server itself (a flag or its environment variable)."""
        endpoint = self._settings.endpoint(provider)
        return bool(self._settings.urls.get(provider) or (endpoint.url_env and self.environ.get(endpoint.url_env)))

    def _served(self, name: str) -> ServedModel | None:
        """What the engine must serve for ``name`` (``engine.serving.ServedModel``), or None."""
        provider, model = split_name(name)
        if provider not in ("llamacpp", "vllm"):
            return None
        from engine.serving import served_model

        return served_model(provider, model, self.explicit_url(provider))

    def takes_grammar(self, name: str) -> bool:
        """Whether ``name``'s server constrains a reply by a grammar (a llama.cpp or vLLM server, the
        engine's own or one the run names): where ``--structured`` can hold a game whose replies are
        not JSON (``puzzles.base.ReplyGrammar``) to its format."""
        if name in self.served:
            return True
        return self._settings.endpoint(split_name(name)[0]).kind == "vllm"

    def token_form(self, name: str) -> TokenForm | None:
        """How ``name``'s server returns a call's token ids and log-probabilities (``wire.TokenForm``),
        or None where it returns none (an API provider's; a llama.cpp server through the SDK client,
        which cannot ask its ``/tokenize``): where ``--tokens`` can be played. Known once ``check``
        has seen the model."""
        served = self.served.get(name)
        if served is not None:
            return "llamacpp" if served.kind == "llamacpp" else "vllm"
        return self._settings.token_form(split_name(name)[0])

    def check(self, name: str, calls: bool = True) -> None:
        """Raise ValueError with a one-line reason if ``name`` cannot be played (unknown provider, no key,
        a model file or server program the engine cannot serve). A model it must serve is noted, to be
        started with the hub. ``calls=False``: nothing will be sent (a forecast), so no key is needed and no
        adapter is converted."""
        provider, _ = split_name(name)
        endpoint = self._settings.endpoint(provider)
        served = self._served(name)
        if served is not None:
            from engine.serving import ServeError

            try:
                served.check(prepare=calls)
            except ServeError as exc:
                raise ValueError(f"{name}: {exc}") from None
            max_tokens, context = self._settings.options.max_tokens, self._settings.serve_context
            limit = served.context_limit()
            if limit is not None and context > limit:
                raise ValueError(f"{name}: --serve-context {context} is more than the model takes, {limit} tokens "
                                 f"(max_position_embeddings in its config.json): give --serve-context {limit} or less")
            if max_tokens >= context:
                from engine.serving.context import refusal

                raise ValueError(refusal(name, max_tokens, context, "the server the engine starts", " or a larger --serve-context"))
            self.served[name] = served
        else:
            self._check_called(name, provider, endpoint, calls)
            if endpoint.kind == "vllm":
                urls = (self._settings.base_url(provider, self.environ) or "").split(",")
                self.sized[name] = (split_name(name)[1], [u.strip() for u in urls if u.strip()])
        if provider not in PROVIDERS and provider not in self._settings.endpoints:  # a built-in entry: saved with the run
            self._named[provider] = endpoint

    def _check_called(self, name: str, provider: str, endpoint: Endpoint, calls: bool = True) -> None:
        """The checks of a model on a server the run names (its key only if ``calls``)."""
        if calls and endpoint.kind != "vllm" and endpoint.key_env and not self.environ.get(endpoint.key_env):
            raise ValueError(f"{name} needs the environment variable {endpoint.key_env} (the API key)")
        url = self._settings.base_url(provider, self.environ)
        if provider == "vllm" and not url:
            raise ValueError(f"{name} needs the server's address: --vllm-url http://HOST:8000/v1")
        if provider not in PROVIDERS and not url:
            raise ValueError(f"{name}: the endpoint {provider} has no url")
        if provider == "vllm" and self._settings.client("vllm") != "lean" and "," in (url or "").strip(", "):
            raise ValueError("several vLLM servers are spread over by the lean client only; drop --client vllm=sdk")
        if self._settings.client(provider) == "sdk":
            from engine.backends.sdk import import_sdk

            import_sdk(endpoint.kind)

    def backend(self, name: str) -> Backend:
        """The backend ``name``'s calls go through (``build.compose``), built on first use."""
        backend = self._backends.get(name)
        if backend is None:
            served = self._served(name) if name not in self.served else None
            if served is not None:  # unchecked: served if ``served_urls`` knows its server, else refused by the builder
                self.served[name] = served
            backend, self._providers[name] = self.builder.backend(name)
            self._backends[name] = backend
        return backend

    def backends(self) -> list[Backend]:
        return list(self._backends.values())

    def provider(self, name: str) -> ProviderBackend:
        """The provider's backend inside ``name``'s (its client, its settings), built on first use."""
        self.backend(name)
        return self._providers[name]

    async def __aenter__(self) -> ModelHub:
        if self.served:
            import tempfile
            from pathlib import Path

            from engine.serving import Servers

            run_dir = self.context.run_dir
            log_dir = run_dir if run_dir is not None else Path(tempfile.mkdtemp(prefix="asymgames-servers-"))
            self._servers = Servers(dict(self.served), log_dir, slots=self._settings.serve_slots,
                                    context=self._settings.serve_context, ready_timeout=self._settings.serve_timeout)
            self.served_urls.update(await self._servers.__aenter__())
        if self.sized:
            from engine.serving.context import check_context

            try:
                await check_context(self.sized, self._settings.options.max_tokens)
            except BaseException:
                if self._servers is not None:
                    servers, self._servers = self._servers, None
                    await servers.__aexit__(None, None, None)
                raise
        if self._settings.options.structured:
            await self._ask_grammar_forms()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        if self._servers is not None:
            self._task_group.start_soon(self._servers.watch)
        return self

    async def _ask_grammar_forms(self) -> None:
        """How each vLLM server of the run takes a reply grammar, from the version it says."""
        from engine.serving.context import server_versions

        servers = {name: urls for name, (_, urls) in self.sized.items()}
        servers |= {name: [url] for name, url in self.served_urls.items() if self.served[name].kind == "vllm"}
        for name, version in (await server_versions(servers)).items():
            self.grammar_forms[name] = vllm_grammar_form(version)

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        try:
            return await self._task_group.__aexit__(*exc_info)
        finally:
            self._task_group = None
            with anyio.CancelScope(shield=True):
                if self._builder is not None:
                    await self._builder.close()
                if self._servers is not None:
                    servers, self._servers = self._servers, None
                    await servers.__aexit__(None, None, None)

    def starting(self, now: float) -> list[str]:
        """A line for each server the engine is still starting (the status line's and the dashboard's)."""
        return self._servers.starting(now) if self._servers is not None else []

    def cache_notes(self, names: Iterable[str]) -> list[str]:
        """With the response cache on, a line for each way it will not save what a run expects of it:
        models ``names`` whose calls it does not take, a file it cannot use (opened here to know)."""
        if self.settings.cache.mode == "off":
            return []
        builder = self.builder
        models = list(dict.fromkeys(names))
        notes = []
        uncovered = [name for name in models if not builder.cache_covers(name)]
        if uncovered:
            notes.append(f"The response cache takes no call of {', '.join(uncovered)}: sampled calls (temperature above 0 "
                         "with no --model-seed, or Anthropic's API) are made and paid in full (--cache-sampled caches them).")
        if len(uncovered) < len(models):
            store = builder.response_store()
            problem = store.check()
            store.close()
            if problem is not None:
                notes.append(f"The response cache cannot be used ({problem}): every call is made and paid in full.")
        return notes

    def summary(self) -> dict[str, Any]:
        """How calls were made (temperature, max tokens, seed, structured output, timeouts) and, per model:
        its client, calls, attempts, failures by cause, tokens, cost; written to usage.json."""
        settings = self._settings
        options = msgspec.to_builtins(settings.options)
        builder = self._builder
        if settings.cache.mode != "off":
            cache = settings.cache
            options["cache"] = {"mode": cache.mode, "sampled": cache.sampled, "expiry": cache.expiry,
                                "uncached_models": builder.uncached if builder is not None else []}
            if builder is not None and builder.responses is not None:
                options["cache"] |= builder.responses.summary()
        if settings.batch.enabled:
            batches = self.batches
            options["batch"] = batches.summary() if batches is not None else msgspec.to_builtins(settings.batch)
        result: dict[str, Any] = {"tokenizer": self.tokenizer.name, "options": options, "models": {}}
        # Only a run that built replicas imported their module (and only then can a client be one).
        replicas = sys.modules.get("engine.backends.replicas")
        for name, backend in self._providers.items():
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


__all__ = ["HubContext", "ModelHub"]
