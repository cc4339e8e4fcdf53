"""A local model server for dry runs and tests: speaks the OpenAI and Anthropic APIs and vLLM's extras.

    python -m runners.fake_llm --port 8000 --rpm 600 --latency 0.2
    OPENAI_API_KEY=x python -m runners.concurrent --alice openai:share_everything \\
        --bob openai:share_everything --openai-url http://127.0.0.1:8000/v1 --games 100

Endpoints: ``POST /v1/chat/completions`` (plain and streaming), ``POST /v1/messages`` (Anthropic, plain
and streaming), ``GET /health``, ``GET /v1/models``, ``GET /metrics`` (``vllm:num_requests_running``,
``vllm:num_requests_waiting``), ``POST /tokenize``, and ``GET /fake/stats`` (what it served).

Replies play the game: the server reads the AsymPuzl prompt it is sent (``puzzles.prompts``) and answers
as a scripted strategy would: the one named by the model (``openai:one_piece``), else ``--strategy``.
Each agent of each game keeps its own strategy object, found by its clues, so strategies that
remember earlier turns play as they do in process. Prompts it cannot read get a reply without JSON.

It enforces requests and tokens per minute with real 429 replies, ``retry-after`` and the providers'
rate-limit headers; ``--max-num-seqs`` makes it a continuously batching server (that many requests
run at once, the rest wait); ``--fault KIND=P`` injects faults (429, 500, 503, 529, timeout,
incomplete, truncated) and ``--storm START:SECONDS`` answers 429 to everything for a while.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import uuid
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from typing import Any

import msgspec
from aiohttp import web

from actors.agent import ChatLine, TurnContext
from actors.scripted import SCRIPTED
from engine.backends.limiter import Bucket
from engine.backends.tokens import estimate_tokens
from puzzles.prompts import UnreadablePrompt, read_prompt

from ._args import bounded

FAULT_KINDS = ("400", "429", "500", "503", "529", "timeout", "malformed", "incomplete", "truncated")
MAX_MODEL_LEN = 32768
MAX_AGENTS_KEPT = 100_000


class FakeConfig(msgspec.Struct, kw_only=True):
    strategy: str = "share_everything"
    latency: float = 0.05  # seconds per request, plus jitter
    jitter: float = 0.0  # uniform extra seconds
    rpm: float | None = None
    tpm: float | None = None
    burst: float = 1.0  # seconds of the per-minute limits a burst may use
    max_num_seqs: int | None = None  # continuous batching: requests running at once
    faults: dict[str, float] = msgspec.field(default_factory=dict)  # kind -> probability per request
    storms: list[tuple[float, float]] = msgspec.field(default_factory=list)  # (start, seconds) after the first request: everything 429
    retry_after: float = 1.0  # seconds asked for by injected 429/503 and storms
    hang: float = 600.0  # how long a "timeout" fault keeps the request open
    api_key: str | None = None  # if set, the only key accepted
    seed: int = 0
    models: list[str] = msgspec.field(default_factory=lambda: ["fake"])


class _Refused(Exception):
    def __init__(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.headers = status, kind, message, headers or {}


class FakeStats:
    def __init__(self) -> None:
        self.requests = 0
        self.served = 0
        self.refused: dict[str, int] = {}
        self.running = 0
        self.waiting = 0
        self.max_running = 0
        self.samples: list[tuple[float, int, int, int]] = []  # (wall time, running, waiting, served)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests, "served": self.served, "refused": self.refused,
            "running": self.running, "waiting": self.waiting, "max_running": self.max_running,
            "samples": self.samples,
        }


class FakeServer:
    def __init__(self, config: FakeConfig | None = None) -> None:
        self.config = config or FakeConfig()
        for kind in self.config.faults:
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault {kind!r}; choose from {', '.join(FAULT_KINDS)}")
        if self.config.strategy not in SCRIPTED:
            raise ValueError(f"unknown strategy {self.config.strategy!r}; choose from {', '.join(sorted(SCRIPTED))}")
        self.rng = random.Random(self.config.seed)
        clock = time.monotonic
        self.requests_bucket = Bucket(self.config.rpm, self.config.burst, clock)
        self.tokens_bucket = Bucket(self.config.tpm, self.config.burst, clock)
        self.batch = asyncio.Semaphore(self.config.max_num_seqs) if self.config.max_num_seqs else None
        self.stats = FakeStats()
        self.agents: OrderedDict[tuple, Any] = OrderedDict()
        self.seen_systems: set[str] = set()
        self.started: float | None = None
        self.last_body: dict | None = None  # the last request body (for tests)
        self.app = web.Application()
        self.app.add_routes([
            web.post("/v1/chat/completions", self.chat_completions),
            web.post("/v1/messages", self.messages),
            web.get("/health", self.health),
            web.get("/v1/models", self.models),
            web.get("/metrics", self.metrics),
            web.post("/tokenize", self.tokenize),
            web.get("/fake/stats", self.fake_stats),
        ])
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
            raise _Refused(401, "authentication_error", "No API key provided.")
        wanted = self.config.api_key
        if wanted is not None and key != wanted:
            shown = f"{key[:8]}****{key[-4:]}" if len(key) > 12 else "****"
            raise _Refused(401, "authentication_error", f"Incorrect API key provided: {shown}.")

    def _storming(self) -> bool:
        if self.started is None:
            return False
        elapsed = time.monotonic() - self.started
        return any(start <= elapsed < start + length for start, length in self.config.storms)

    def _draw_fault(self) -> str | None:
        for kind, probability in self.config.faults.items():
            if self.rng.random() < probability:
                return kind
        return None

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

    def _admit(self, tokens: int, anthropic: bool) -> None:
        if self._storming():
            after = self.config.retry_after
            headers = {"retry-after": f"{max(1, round(after))}", "retry-after-ms": f"{int(after * 1000)}"}
            raise _Refused(429, "rate_limit_error", "Rate limit reached (storm).", headers)
        wait = max(self.requests_bucket.wait_time(1), self.tokens_bucket.wait_time(tokens))
        if wait > 0:
            headers = self._limit_headers(anthropic)
            headers["retry-after"] = str(max(1, round(wait + 0.5)))
            headers["retry-after-ms"] = str(int(wait * 1000) + 1)
            raise _Refused(429, "rate_limit_error", "Rate limit reached for requests or tokens per minute.", headers)
        self.requests_bucket.take(1)
        self.tokens_bucket.take(tokens)

    # ---- the model ----

    def _strategy(self, model: str) -> str:
        name = model.rsplit("/", 1)[-1].strip().lower().replace("-", "_")
        return name if name in SCRIPTED else self.config.strategy

    async def _play(self, model: str, system: str, user: str) -> str:
        try:
            state = read_prompt(system, user)
        except UnreadablePrompt as exc:
            return f"I cannot read this prompt ({exc})."
        strategy = self._strategy(model)
        key = (strategy, state.role, system, tuple(state.clues))
        policy = self.agents.get(key)
        if policy is None:
            policy = SCRIPTED[strategy](state.role, random.Random(repr(key)))
            self.agents[key] = policy
            if len(self.agents) > MAX_AGENTS_KEPT:
                self.agents.popitem(last=False)
        else:
            self.agents.move_to_end(key)
        context = TurnContext(
            game_id=0, role=state.role, turn=state.turn, max_turns=state.max_turns, size=state.size,
            clues=state.clues, hypothesis=state.hypothesis, feedback=state.feedback,
            conversation=tuple(ChatLine(t, s, x) for t, s, x in state.conversation), notices=state.notices,
            partners=state.partners, directed=state.directed,
        )
        return await policy.reply(context)

    async def _serve(self, request: web.Request, anthropic: bool) -> tuple[dict, str, int, int, int, dict[str, str]]:
        """Admit and answer one call: (body, text, prompt tokens, cached tokens, completion tokens, headers)."""
        stats = self.stats
        stats.requests += 1
        if self.started is None:
            self.started = time.monotonic()
        self._check_key(request, anthropic)
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _Refused(400, "invalid_request_error", "The body is not valid JSON.") from None
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            raise _Refused(400, "invalid_request_error", "The body must be an object with a model.")
        self.last_body = body
        system, user = _prompt_parts(body, anthropic)
        prompt_tokens = estimate_tokens(system) + estimate_tokens(user)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 4096
        fault = self._draw_fault()
        if fault in ("400", "429", "500", "503", "529"):
            status = int(fault)
            kinds = {400: "invalid_request_error", 429: "rate_limit_error", 500: "api_error", 503: "overloaded_error", 529: "overloaded_error"}
            after = self.config.retry_after
            headers = {"retry-after": f"{max(1, round(after))}", "retry-after-ms": f"{int(after * 1000)}"} if status in (429, 503) else {}
            raise _Refused(status, kinds[status], f"Injected {status}.", headers)
        self._admit(prompt_tokens + min(int(max_tokens), 400), anthropic)
        if fault == "timeout":
            stats.refused["timeout"] = stats.refused.get("timeout", 0) + 1
            await asyncio.sleep(self.config.hang)
        if self.batch is not None:
            stats.waiting += 1
            try:
                await self.batch.acquire()
            finally:
                stats.waiting -= 1
        stats.running += 1
        stats.max_running = max(stats.max_running, stats.running)
        try:
            await asyncio.sleep(self.config.latency + self.rng.uniform(0, self.config.jitter))
            if fault in ("malformed", "incomplete", "truncated"):
                raise _Broken(fault)  # before playing: an agent's strategy only sees replies it sends
            text = await self._play(body["model"], system, user)
        finally:
            stats.running -= 1
            if self.batch is not None:
                self.batch.release()
        cached = estimate_tokens(system) if system in self.seen_systems else 0
        self.seen_systems.add(system)
        if len(self.seen_systems) > MAX_AGENTS_KEPT:
            self.seen_systems.clear()
        completion_tokens = max(1, estimate_tokens(text))
        stats.served += 1
        return body, text, prompt_tokens, cached, completion_tokens, self._limit_headers(anthropic)

    async def _handle(self, request: web.Request, anthropic: bool) -> web.StreamResponse:
        try:
            body, text, prompt, cached, completion, headers = await self._serve(request, anthropic)
        except _Refused as refusal:
            self.stats.refused[str(refusal.status)] = self.stats.refused.get(str(refusal.status), 0) + 1
            return _error(refusal, anthropic)
        except _Broken as broken:
            self.stats.refused[broken.kind] = self.stats.refused.get(broken.kind, 0) + 1
            return await _broken_reply(request, broken.kind)
        model = body["model"]
        if body.get("stream"):
            if anthropic:
                return await _anthropic_stream(request, model, text, prompt, cached, completion, headers)
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return await _openai_stream(request, model, text, prompt, cached, completion, headers, include_usage)
        if anthropic:
            reply = _anthropic_message(model, text, prompt, cached, completion)
        else:
            reply = _openai_completion(model, text, prompt, cached, completion)
        return web.json_response(reply, headers=headers)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, anthropic=False)

    async def messages(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, anthropic=True)

    # ---- vLLM's extras ----

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def models(self, request: web.Request) -> web.Response:
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake", "max_model_len": MAX_MODEL_LEN}
            for m in self.config.models
        ]
        return web.json_response({"object": "list", "data": data})

    async def metrics(self, request: web.Request) -> web.Response:
        model = self.config.models[0]
        lines = [
            "# HELP vllm:num_requests_running Number of requests in model execution batches.",
            "# TYPE vllm:num_requests_running gauge",
            f'vllm:num_requests_running{{model_name="{model}"}} {float(self.stats.running)}',
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
            "# TYPE vllm:num_requests_waiting gauge",
            f'vllm:num_requests_waiting{{model_name="{model}"}} {float(self.stats.waiting)}',
            "# HELP vllm:request_success_total Count of successfully processed requests.",
            "# TYPE vllm:request_success_total counter",
            f'vllm:request_success_total{{model_name="{model}"}} {float(self.stats.served)}',
        ]
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")

    async def tokenize(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return web.json_response({"error": {"message": "The body is not valid JSON."}}, status=400)
        if "prompt" in body:
            text = str(body["prompt"])
        else:
            text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
        count = estimate_tokens(text)
        tokens = [hash(i) % 100_000 for i in range(count)]
        return web.json_response({"count": count, "max_model_len": MAX_MODEL_LEN, "tokens": tokens})

    async def fake_stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.to_dict())


class _Broken(Exception):
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def _prompt_parts(body: dict, anthropic: bool) -> tuple[str, str]:
    def text_of(content: Any) -> str:
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return ""

    messages = body.get("messages") or []
    system = text_of(body.get("system")) if anthropic else ""
    users = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "system":
            system += text_of(message.get("content"))
        elif message.get("role") == "user":
            users.append(text_of(message.get("content")))
    return system, "\n\n".join(users)


def _error(refusal: _Refused, anthropic: bool) -> web.Response:
    if anthropic:
        body = {"type": "error", "error": {"type": refusal.kind, "message": refusal.message}}
    else:
        code = "rate_limit_exceeded" if refusal.status == 429 else refusal.kind
        body = {"error": {"message": refusal.message, "type": refusal.kind, "param": None, "code": code}}
    return web.json_response(body, status=refusal.status, headers=refusal.headers)


async def _broken_reply(request: web.Request, kind: str) -> web.StreamResponse:
    if kind == "incomplete":  # valid JSON, but not a whole reply
        return web.json_response({"id": "chatcmpl-x", "object": "chat.completion", "choices": [], "usage": None,
                                  "type": "message", "content": [{"type": "text", "text": "x"}], "usage_": {}})
    if kind == "malformed":
        return web.Response(status=200, text='{"id": "chatcmpl-x", "choices": [{"index": 0, "mess', content_type="application/json")
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json", "Content-Length": "4096"})
    await response.prepare(request)
    await response.write(b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": [')
    request.transport.close()  # type: ignore[union-attr]  # cut short: fewer bytes than promised
    return response


def _openai_completion(model: str, text: str, prompt: int, cached: int, completion: int) -> dict:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop", "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def _anthropic_message(model: str, text: str, prompt: int, cached: int, completion: int) -> dict:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {
            "input_tokens": prompt - cached, "output_tokens": completion,
            "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0,
        },
    }


def _pieces(text: str, size: int = 24) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


async def _sse(request: web.Request, headers: dict[str, str]) -> web.StreamResponse:
    response = web.StreamResponse(status=200, headers={**headers, "Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    return response


async def _openai_stream(request, model, text, prompt, cached, completion, headers, include_usage) -> web.StreamResponse:
    response = await _sse(request, headers)
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    for i, piece in enumerate(_pieces(text)):
        delta = {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
        chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
    await response.write(f"data: {json.dumps({**base, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})}\n\n".encode())
    if include_usage:
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                 "prompt_tokens_details": {"cached_tokens": cached}}
        await response.write(f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def _anthropic_stream(request, model, text, prompt, cached, completion, headers) -> web.StreamResponse:
    response = await _sse(request, headers)

    async def event(name: str, data: dict) -> None:
        await response.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

    start = _anthropic_message(model, "", prompt, cached, 1)
    start["content"], start["stop_reason"] = [], None
    await event("message_start", {"type": "message_start", "message": start})
    await event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    for piece in _pieces(text):
        await event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})
    await event("content_block_stop", {"type": "content_block_stop", "index": 0})
    await event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": completion}})
    await event("message_stop", {"type": "message_stop"})
    await response.write_eof()
    return response


# ---- command line ----


def _fault(text: str) -> tuple[str, float]:
    kind, sep, value = text.partition("=")
    try:
        probability = float(value)
    except ValueError:
        probability = -1.0
    if not sep or kind not in FAULT_KINDS or not 0 <= probability <= 1:
        raise argparse.ArgumentTypeError(f"expected KIND=P with KIND one of {', '.join(FAULT_KINDS)} and P in [0, 1], got {text!r}")
    return kind, probability


def _storm(text: str) -> tuple[float, float]:
    start, sep, length = text.partition(":")
    try:
        values = (float(start), float(length))
    except ValueError:
        values = (-1.0, -1.0)
    if not sep or values[0] < 0 or values[1] <= 0:
        raise argparse.ArgumentTypeError(f"expected START:SECONDS (after the first request), got {text!r}")
    return values


_positive = bounded(float, 0.0, what="a number >= 0")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m runners.fake_llm", description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0 picks a free port (default 8000)")
    p.add_argument("--strategy", default="share_everything", choices=sorted(SCRIPTED), help="how replies play when the model name is not a strategy")
    p.add_argument("--latency", type=_positive, default=0.05, help="seconds per request (default 0.05)")
    p.add_argument("--jitter", type=_positive, default=0.0, help="uniform extra seconds per request")
    p.add_argument("--rpm", type=_positive, help="requests per minute, enforced with 429s")
    p.add_argument("--tpm", type=_positive, help="tokens per minute, enforced with 429s")
    p.add_argument("--burst", type=_positive, default=1.0, help="seconds of the per-minute limits one burst may use (default 1)")
    p.add_argument("--max-num-seqs", type=int, help="continuous batching: requests running at once (like vLLM)")
    p.add_argument("--fault", type=_fault, action="append", default=[], metavar="KIND=P", help=f"inject a fault with probability P; KIND: {', '.join(FAULT_KINDS)}")
    p.add_argument("--storm", type=_storm, action="append", default=[], metavar="START:SECONDS", help="answer 429 to everything for SECONDS, START seconds after the first request")
    p.add_argument("--retry-after", type=_positive, default=1.0, metavar="SEC", help="seconds injected 429/503s and storms ask clients to wait (default 1)")
    p.add_argument("--api-key", help="accept only this key (default: any non-empty key)")
    p.add_argument("--model", action="append", default=[], help="a model name /v1/models lists (default: fake)")
    p.add_argument("--seed", type=int, default=0)
    return p


def config_from_args(args: argparse.Namespace) -> FakeConfig:
    return FakeConfig(
        strategy=args.strategy, latency=args.latency, jitter=args.jitter, rpm=args.rpm, tpm=args.tpm,
        burst=args.burst, max_num_seqs=args.max_num_seqs, faults=dict(args.fault), storms=args.storm,
        retry_after=args.retry_after,
        api_key=args.api_key, seed=args.seed, models=args.model or ["fake"],
    )


async def serve(config: FakeConfig, host: str, port: int) -> None:
    server = FakeServer(config)
    url = await server.start(host, port)
    print(f"fake model server on {url}  (OpenAI: {url}/v1  Anthropic: {url}  vLLM metrics: {url}/metrics)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = config_from_args(args)
        FakeServer(config)  # check the config before binding
    except ValueError as exc:
        print(f"python -m runners.fake_llm: error: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(config, args.host, args.port))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
