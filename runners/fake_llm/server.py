"""The local model server itself: admission (keys, injected faults, rate limits, storms), continuous
batching, the endpoints, and what it served. Replies are played by ``players.Players``."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from datetime import datetime, timedelta, timezone
from typing import Any

import msgspec
from aiohttp import web

from engine.backends import CALL_HEADER, GAME_HEADER, Bucket, estimate_tokens
from puzzles import GAMES, Game

from runners.fake_llm.bad_replies import BAD_REPLY_KINDS, bad_reply
from runners.fake_llm.batches import BATCH_FAULT_KINDS, BatchService
from runners.fake_llm.grammar import GrammarError, grammar_regex
from runners.fake_llm.players import MAX_AGENTS_KEPT, Players
from runners.fake_llm.tokens import TOKEN_FORMS, Sampled, TokenForm, asked, render, tokenize
from runners.fake_llm.adapters import Adapters
from runners.fake_llm.vllm_checks import model_permission, prometheus_text, refuse_as_vllm
from runners.fake_llm.wire import (
    NOTHING, Broken, Refused, Returned, anthropic_message, anthropic_stream, broken_reply, error_reply, openai_completion,
    openai_stream, prompt_parts,
)

FAULT_KINDS = ("400", "429", "500", "503", "529", "timeout", "malformed", "incomplete", "truncated")
MAX_MODEL_LEN = 32768
VLLM_VERSION = "0.32.0"  # the vLLM whose wire it speaks unless told another (``/version``)
# The grammar fields of vLLM's requests, and the versions that take each: ``guided_grammar`` until
# 0.12 took it away, ``structured_outputs`` since 0.10.2. A field a version does not take is ignored,
# as vLLM does (its log lists the fields of a request it ignored).
VLLM_GRAMMAR_FIELDS = {"guided_grammar": ((0,), (0, 12)), "structured_outputs": ((0, 10, 2), (10**6,))}


def version_tuple(version: str) -> tuple[int, ...]:
    """``0.11.2+cpu`` -> (0, 11, 2): the leading numbers of a version."""
    found = re.match(r"v?(\d+(?:\.\d+)*)", version)
    return tuple(int(n) for n in found[1].split(".")) if found else ()


def cut_to(text: str, max_tokens: int) -> tuple[str, bool]:
    """``text`` as a server writes it under a limit of ``max_tokens``: whole, or its longest start
    within the limit (as counted here), and whether it was cut."""
    if estimate_tokens(text) <= max_tokens:
        return text, False
    low, high = 0, len(text)  # the longest start within the limit: low fits, high does not
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if estimate_tokens(text[:middle]) <= max_tokens else (low, middle)
    return text[:low], True


class FakeConfig(msgspec.Struct, kw_only=True):
    strategy: str = "share_everything"  # played when the model is not named after a strategy of the game
    latency: float = 0.05  # seconds per request, plus jitter
    jitter: float = 0.0  # uniform extra seconds
    rpm: float | None = None
    tpm: float | None = None
    burst: float = 1.0  # seconds of the per-minute limits a burst may use
    max_num_seqs: int | None = None  # continuous batching: requests running at once
    intake: float = 0.0  # seconds a request is read and tokenized before the scheduler counts it
    compile_delay: float = 0.0  # seconds a new reply schema compiles; its requests wait deferred meanwhile
    vllm_version: str = VLLM_VERSION  # what /version says, and which grammar fields requests are read by
    faults: dict[str, float] = msgspec.field(default_factory=dict)  # kind -> probability per request
    bad_replies: dict[str, float] = msgspec.field(default_factory=dict)  # kind -> probability per reply (bad_replies.py)
    storms: list[tuple[float, float]] = msgspec.field(default_factory=list)  # (start, seconds) after the first request: everything 429
    retry_after: float = 1.0  # seconds asked for by injected 429/503 and storms
    hang: float = 600.0  # how long a "timeout" fault keeps the request open
    api_key: str | None = None  # if set, the only key accepted
    seed: int = 0
    models: list[str] = msgspec.field(default_factory=lambda: ["fake"])
    only_models: bool = False  # answer a model not in ``models`` with a 404, as a real server does
    max_model_len: int = MAX_MODEL_LEN  # tokens of context: a longer prompt or max_tokens is refused, as vLLM does
    batch_delay: float = 0.5  # seconds from a batch's creation to its end (``batches``)
    batch_faults: dict[str, float] = msgspec.field(default_factory=dict)  # kind (expired, failed) -> probability per batch
    token_form: TokenForm = "vllm"  # how a call's token ids and logprobs are returned, where asked (``tokens``)
    lora_endpoints: bool = True  # the runtime adapter endpoints, as VLLM_ALLOW_RUNTIME_LORA_UPDATING=True gives vLLM (``adapters``)
    enable_lora: bool = True  # adapters can be loaded, as --enable-lora


@dataclass
class FakeStats:
    requests: int = 0
    served: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    running: int = 0
    waiting: int = 0  # the deferred ones too
    deferred: int = 0  # waiting for their reply schema to compile
    max_running: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    finished: dict[str, int] = field(default_factory=dict)  # finish reason -> requests
    # Calls by how their reply was constrained: "json_schema" (response_format), "grammar" (llama.cpp's
    # field), "structured_outputs" (vLLM's); and replies a grammar would not have let through.
    constrained: dict[str, int] = field(default_factory=dict)
    off_grammar: int = 0
    ignored: dict[str, int] = field(default_factory=dict)  # grammar fields of vLLM's that its version does not take
    samples: list[tuple[float, int, int, int]] = field(default_factory=list)  # (wall time, running, waiting, served)


class FakeServer:
    def __init__(self, config: FakeConfig | None = None, games: Mapping[str, Game] = GAMES) -> None:
        self.config = config or FakeConfig()
        for what, given, known in (("fault", self.config.faults, FAULT_KINDS), ("bad reply", self.config.bad_replies, BAD_REPLY_KINDS),
                                   ("batch fault", self.config.batch_faults, BATCH_FAULT_KINDS)):
            for kind in given:
                if kind not in known:
                    raise ValueError(f"unknown {what} {kind!r}; choose from {', '.join(known)}")
        if self.config.token_form not in TOKEN_FORMS:
            raise ValueError(f"unknown token form {self.config.token_form!r}; choose from {', '.join(TOKEN_FORMS)}")
        self.players = Players(self.config.strategy, games)
        self.rng = random.Random(self.config.seed)
        clock = time.monotonic
        self.requests_bucket = Bucket(self.config.rpm, self.config.burst, clock)
        self.tokens_bucket = Bucket(self.config.tpm, self.config.burst, clock)
        self.batch = asyncio.Semaphore(self.config.max_num_seqs) if self.config.max_num_seqs else None
        self.stats = FakeStats()
        version = version_tuple(self.config.vllm_version)
        self.grammar_fields = tuple(name for name, (since, until) in VLLM_GRAMMAR_FIELDS.items() if since <= version < until)
        self.seen_systems: set[str] = set()
        self.schemas: dict[str, asyncio.Task] = {}  # reply schema -> its compile (``compile_delay``)
        self.started: float | None = None
        self.last_body: dict | None = None  # the last request body (for tests)
        # A batch's input file may be as large as the providers take (OpenAI: 200 MB), not aiohttp's 1 MB.
        self.app = web.Application(client_max_size=200 * 1024 * 1024)
        self.adapters = Adapters(self.config.lora_endpoints, self.config.enable_lora)  # loaded at runtime, as vLLM's endpoints load them
        self.app.add_routes([
            web.post("/v1/chat/completions", partial(self._handle, anthropic=False)),
            web.post("/v1/messages", partial(self._handle, anthropic=True)),
            web.get("/health", self.health),
            web.get("/version", self.version),
            web.get("/v1/models", self.models),
            web.get("/metrics", self.metrics),
            web.post("/tokenize", self.tokenize),
            web.post("/apply-template", self.apply_template),
            web.get("/fake/stats", self.fake_stats),
            *self.adapters.routes(),
        ])
        self.batches = BatchService(self)  # the batch APIs: its own routes
        self.app.on_startup.append(self._start_sampler)
        self.app.on_cleanup.append(self._stop_sampler)
        self._runner: web.AppRunner | None = None
        self._sampler: asyncio.Task | None = None
        self.url = ""

    # ---- lifecycle ----

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        # Handlers end when their client hangs up (a timed-out call); shutting down waits for no one.
        self._runner = web.AppRunner(self.app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, backlog=4096)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://{host}:{port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _start_sampler(self, app: web.Application) -> None:
        self._sampler = asyncio.create_task(self._sample())

    async def _stop_sampler(self, app: web.Application) -> None:
        if self._sampler is not None:
            self._sampler.cancel()

    async def _sample(self, every: float = 0.1) -> None:
        s = self.stats
        while True:
            s.samples.append((time.time(), s.running, s.waiting, s.served))
            if len(s.samples) > 200_000:
                del s.samples[:100_000]
            await asyncio.sleep(every)

    # ---- admission: auth, faults, rate limits ----

    def _check_key(self, request: web.Request, anthropic: bool) -> None:
        # OpenAI sends "Authorization: Bearer"; Anthropic's SDK 2.x does too, older ones send x-api-key.
        key = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if anthropic and not key:
            key = request.headers.get("x-api-key", "")
        if not key:
            raise Refused(401, "authentication_error", "No API key provided.")
        wanted = self.config.api_key
        if wanted is not None and key != wanted:
            shown = f"{key[:8]}****{key[-4:]}" if len(key) > 12 else "****"
            raise Refused(401, "authentication_error", f"Incorrect API key provided: {shown}.")

    def _storming(self) -> bool:
        if self.started is None:
            return False
        elapsed = time.monotonic() - self.started
        return any(start <= elapsed < start + length for start, length in self.config.storms)

    def _draw_fault(self) -> str | None:
        return next((kind for kind, probability in self.config.faults.items() if self.rng.random() < probability), None)

    def _limit_headers(self, anthropic: bool) -> dict[str, str]:
        headers: dict[str, str] = {}
        for name, bucket in (("requests", self.requests_bucket), ("tokens", self.tokens_bucket)):
            if bucket.per_minute is None:
                continue
            bucket.wait_time(0)  # refill up to now
            remaining = max(0, int(bucket.level))  # what may be sent right now
            reset = max(0.0, (bucket.capacity - bucket.level) * 60.0 / bucket.per_minute)
            if anthropic:
                when = datetime.now(timezone.utc) + timedelta(seconds=reset)
                headers[f"anthropic-ratelimit-{name}-limit"] = str(int(bucket.per_minute))
                headers[f"anthropic-ratelimit-{name}-remaining"] = str(remaining)
                headers[f"anthropic-ratelimit-{name}-reset"] = when.isoformat().replace("+00:00", "Z")
            else:
                headers[f"x-ratelimit-limit-{name}"] = str(int(bucket.per_minute))
                headers[f"x-ratelimit-remaining-{name}"] = str(remaining)
                headers[f"x-ratelimit-reset-{name}"] = f"{reset:.3f}s"
        return headers

    def _retry_after(self) -> dict[str, str]:
        """The headers of a refusal that asks for ``retry_after`` seconds (an injected 429/503, a storm)."""
        after = self.config.retry_after
        return {"retry-after": f"{max(1, round(after))}", "retry-after-ms": f"{int(after * 1000)}"}

    def _admit(self, tokens: int, anthropic: bool) -> None:
        if self._storming():
            raise Refused(429, "rate_limit_error", "Rate limit reached (storm).", self._retry_after())
        wait = max(self.requests_bucket.wait_time(1), self.tokens_bucket.wait_time(tokens))
        if wait > 0:
            headers = self._limit_headers(anthropic)
            headers["retry-after"] = str(max(1, round(wait + 0.5)))
            headers["retry-after-ms"] = str(int(wait * 1000) + 1)
            raise Refused(429, "rate_limit_error", "Rate limit reached for requests or tokens per minute.", headers)
        self.requests_bucket.take(1)
        self.tokens_bucket.take(tokens)

    # ---- answering ----

    async def _serve(self, request: web.Request, anthropic: bool) -> tuple[dict, str, int, int, int, bool, dict[str, str]]:
        """Admit and answer one call: (body, text, prompt tokens, cached tokens, completion tokens, cut at
        the request's max tokens, headers)."""
        stats = self.stats
        stats.requests += 1
        if self.started is None:
            self.started = time.monotonic()
        self._check_key(request, anthropic)
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise Refused(400, "invalid_request_error", "The body is not valid JSON.") from None
        self._check_body(body)
        self.last_body = body
        system, users = prompt_parts(body, anthropic)
        prompt_tokens = estimate_tokens(system) + sum(estimate_tokens(user) for user in users)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 4096
        if not anthropic:
            refuse_as_vllm(body, prompt_tokens, int(max_tokens), self.config.max_model_len)
        fault = self._draw_fault()
        self._refuse_injected(fault)
        self._admit(prompt_tokens + min(int(max_tokens), 400), anthropic)
        if fault == "timeout":
            stats.refused["timeout"] = stats.refused.get("timeout", 0) + 1
            await asyncio.sleep(self.config.hang)
        if self.config.intake:
            await asyncio.sleep(self.config.intake)
        stats.waiting += 1
        try:
            await self._compiled(body)
            if self.batch is not None:
                await self.batch.acquire()
        finally:
            stats.waiting -= 1
        stats.running += 1
        stats.max_running = max(stats.max_running, stats.running)
        try:
            await asyncio.sleep(self.config.latency + self.rng.uniform(0, self.config.jitter))
            if fault in ("malformed", "incomplete", "truncated"):
                raise Broken(fault)  # before playing: an agent's strategy only sees replies it sends
            text, cut = await self._play(body, system, users, request.headers.get(GAME_HEADER), request.headers.get(CALL_HEADER))
        finally:
            stats.running -= 1
            if self.batch is not None:
                self.batch.release()
        cached, completion_tokens = self._counts(system, text)
        stats.served += 1
        stats.prompt_tokens += prompt_tokens
        stats.cached_tokens += cached
        stats.completion_tokens += completion_tokens
        finish = "length" if cut else "stop"
        stats.finished[finish] = stats.finished.get(finish, 0) + 1
        return body, text, prompt_tokens, cached, completion_tokens, cut, self._limit_headers(anthropic)

    async def _compiled(self, body: dict) -> None:
        """Wait, deferred, for the request's reply schema to compile (once per schema, as vLLM's
        structured output compiles a grammar once and keeps it)."""
        form = body.get("response_format")
        if not self.config.compile_delay or not isinstance(form, dict) or form.get("type") != "json_schema":
            return
        key = json.dumps(form.get("json_schema"), sort_keys=True)
        task = self.schemas.get(key)
        if task is None:
            task = self.schemas[key] = asyncio.ensure_future(asyncio.sleep(self.config.compile_delay))
        if task.done():
            return
        self.stats.deferred += 1
        try:
            await asyncio.shield(task)
        finally:
            self.stats.deferred -= 1

    def _check_body(self, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            raise Refused(400, "invalid_request_error", "The body must be an object with a model.")
        if self.config.only_models and body["model"] not in self.config.models and body["model"] not in self.adapters.loaded:
            raise Refused(404, "NotFoundError", f"The model `{body['model']}` does not exist. Valid aliases: "
                          f"{', '.join(self.config.models)}.", param="model", vllm=True)
        for name in VLLM_GRAMMAR_FIELDS:
            if name in body and name not in self.grammar_fields:
                self.stats.ignored[name] = self.stats.ignored.get(name, 0) + 1
        kinds = [kind for kind, there in (("json_schema", isinstance(body.get("response_format"), dict)), ("grammar", "grammar" in body),
                                           *((name, name in body) for name in self.grammar_fields)) if there]
        if len(kinds) > 1:  # as llama.cpp answers a schema and a grammar together
            raise Refused(400, "invalid_request_error", f"Either {' or '.join(kinds)} can be specified, but not both.")
        for kind in kinds:
            self.stats.constrained[kind] = self.stats.constrained.get(kind, 0) + 1
        grammar = self._grammar(body)
        if grammar is not None:
            try:
                grammar_regex(grammar)
            except GrammarError as exc:  # as a server answers a grammar it cannot parse
                raise Refused(400, "invalid_request_error", f"Failed to parse grammar: {exc}") from None

    def _grammar(self, body: dict) -> str | None:
        """The reply grammar a request sends, in llama.cpp's form or in a form its vLLM version takes."""
        outputs = body.get("structured_outputs") if "structured_outputs" in self.grammar_fields else None
        guided = body.get("guided_grammar") if "guided_grammar" in self.grammar_fields else None
        grammar = body.get("grammar", outputs.get("grammar") if isinstance(outputs, dict) else guided)
        return grammar if isinstance(grammar, str) else None

    def _refuse_injected(self, fault: str | None) -> None:
        if fault in ("400", "429", "500", "503", "529"):
            status = int(fault)
            kinds = {400: "invalid_request_error", 429: "rate_limit_error", 500: "api_error", 503: "overloaded_error", 529: "overloaded_error"}
            raise Refused(status, kinds[status], f"Injected {status}.", self._retry_after() if status in (429, 503) else {})

    async def _play(self, body: dict, system: str, users: list[str], game: str | None, call: str | None) -> tuple[str, bool]:
        """The reply to a call and whether the request's max tokens cut it; a bad reply (``--bad-reply``)
        stands for what a model wrote within the limit."""
        text = await self.players.reply(self.adapters.model(body["model"]), system, users, game, call)
        grammar = self._grammar(body)
        if grammar is not None and not grammar_regex(grammar).match(text):  # a constrained server never writes it
            self.stats.off_grammar += 1
        text, cut = cut_to(text, int(body.get("max_tokens") or body.get("max_completion_tokens") or 4096))
        for kind, probability in self.config.bad_replies.items():
            if self.rng.random() < probability:
                text = bad_reply(kind, text)
        return text, cut

    def _counts(self, system: str, text: str) -> tuple[int, int]:
        """(cached prompt tokens, completion tokens) of a reply: the system part is cached once seen."""
        cached = estimate_tokens(system) if system in self.seen_systems else 0
        self.seen_systems.add(system)
        if len(self.seen_systems) > MAX_AGENTS_KEPT:
            self.seen_systems.clear()
        return cached, max(1, estimate_tokens(text))

    async def answer_batched(self, body: Any, anthropic: bool, game: str | None, call: str | None) -> tuple[str, int, int, int, bool]:
        """One request of a batch: (text, prompt tokens, cached tokens, completion tokens, cut), or Refused
        (an injected status fault), Broken (a broken reply) or TimeoutError (a ``timeout`` fault: the
        request does not run before the batch ends). No rate limit, latency or storm applies."""
        self.stats.requests += 1
        self._check_body(body)
        system, users = prompt_parts(body, anthropic)
        prompt_tokens = estimate_tokens(system) + sum(estimate_tokens(user) for user in users)
        fault = self._draw_fault()
        self._refuse_injected(fault)
        if fault == "timeout":
            raise TimeoutError
        if fault in ("malformed", "incomplete", "truncated"):
            raise Broken(fault)
        text, cut = await self._play(body, system, users, game, call)
        cached, completion = self._counts(system, text)
        self.stats.served += 1
        return text, prompt_tokens, cached, completion, cut

    async def _handle(self, request: web.Request, anthropic: bool) -> web.StreamResponse:
        try:
            body, text, prompt, cached, completion, cut, headers = await self._serve(request, anthropic)
        except Refused as refusal:
            self.stats.refused[str(refusal.status)] = self.stats.refused.get(str(refusal.status), 0) + 1
            return error_reply(refusal, anthropic)
        except Broken as broken:
            self.stats.refused[broken.kind] = self.stats.refused.get(broken.kind, 0) + 1
            return await broken_reply(request, broken.kind)
        model = body["model"]
        returned = NOTHING
        ids, logprobs = (False, False) if anthropic else asked(body, self.config.token_form)
        if ids or logprobs:  # counted as the tokens returned are, as a real server counts them
            sampled = Sampled(body.get("messages") or [], text, cut)
            returned = Returned(sampled, ids, logprobs, self.config.token_form)
            prompt, completion = len(sampled.prompt_ids), len(sampled.ids)
            cached = min(cached, prompt)
        if body.get("stream"):
            if anthropic:
                return await anthropic_stream(request, model, text, prompt, cached, completion, headers, cut)
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return await openai_stream(request, model, text, prompt, cached, completion, headers, include_usage, cut, returned)
        if anthropic:
            reply = anthropic_message(model, text, prompt, cached, completion, cut)
        else:
            reply = openai_completion(model, text, prompt, cached, completion, cut, returned)
        return web.json_response(reply, headers=headers)

    # ---- vLLM's extras ----

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": self.config.vllm_version})

    async def models(self, request: web.Request) -> web.Response:
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake", "root": m, "parent": None,
             "max_model_len": self.config.max_model_len, "permission": [model_permission()]}
            for m in self.config.models
        ]
        return web.json_response({"object": "list", "data": data + self.adapters.cards(self.config.models[0])})

    async def metrics(self, request: web.Request) -> web.Response:
        """The families of vLLM's /metrics the engine and its benchmarks read, named and labelled as
        vLLM 0.32 writes them (``tests/data/vllm/metrics.txt``)."""
        stats, labels = self.stats, f'engine="0",model_name="{self.config.models[0]}"'
        seqs = self.config.max_num_seqs
        return web.Response(text=prometheus_text(labels, [
            ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", [("", stats.running)]),
            ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", [("", stats.waiting)]),
            ("vllm:num_requests_waiting_by_reason", "gauge", "Number of waiting requests by reason.",
             [('reason="capacity"', stats.waiting - stats.deferred), ('reason="deferred"', stats.deferred)]),
            ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
             [("", stats.running / seqs if seqs else 0.0)]),
            ("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.",
             [("", stats.prompt_tokens)]),
            ("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.",
             [("", stats.cached_tokens)]),
            ("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", [("", 0)]),
            ("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", [("", stats.prompt_tokens)]),
            ("vllm:prompt_tokens_cached_total", "counter", "Number of cached prompt tokens (local + external).",
             [("", stats.cached_tokens)]),
            ("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", [("", stats.completion_tokens)]),
            ("vllm:request_success_total", "counter", "Count of successfully processed requests.",
             [(f'finished_reason="{reason}"', stats.finished.get(reason, 0)) for reason in ("stop", "length", "abort", "error")]),
        ]), content_type="text/plain")

    async def tokenize(self, request: web.Request) -> web.Response:
        """vLLM's ``/tokenize`` (a ``prompt`` or ``messages``: its count), or llama.cpp's (``content``:
        the ids of the text, special tokens read as such, as ``tokens``)."""
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return web.json_response({"error": {"message": "The body is not valid JSON."}}, status=400)
        if isinstance(body, dict) and isinstance(body.get("content"), str):
            return web.json_response({"tokens": tokenize(body["content"])})
        if "prompt" in body:
            text = str(body["prompt"])
        else:
            text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
        count = estimate_tokens(text)
        tokens = [hash(i) % 100_000 for i in range(count)]
        return web.json_response({"count": count, "max_model_len": self.config.max_model_len, "tokens": tokens, "token_strs": None})

    async def apply_template(self, request: web.Request) -> web.Response:
        """llama.cpp's ``/apply-template``: the chat template of ``messages``, as ``prompt``."""
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return web.json_response({"error": {"message": "The body is not valid JSON."}}, status=400)
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list):
            return web.json_response({"error": {"code": 400, "message": "messages is required", "type": "invalid_request_error"}}, status=400)
        return web.json_response({"prompt": render(messages)})

    async def fake_stats(self, request: web.Request) -> web.Response:
        return web.json_response({**vars(self.stats), **self.batches.stats(), "served_models": self.adapters.served,
                                  "adapters": self.adapters.loaded})
