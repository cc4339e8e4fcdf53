"""The wire formats of the local model server: OpenAI chat completions and Anthropic messages, plain
and streamed (server-sent events), their error bodies, and the broken replies injected as faults."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from aiohttp import web

from runners.fake_llm.tokens import Sampled, TokenForm


class Refused(Exception):
    """A call the server turns down: the HTTP status, the provider's error type, the message, headers;
    ``param``, the request's field at fault, as vLLM names it in its own refusals (whose ``code`` is
    the status)."""

    def __init__(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None,
                 param: str | None = None, vllm: bool = False) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.headers = status, kind, message, headers or {}
        self.param, self.vllm = param, vllm


class Broken(Exception):
    """A call answered with a broken reply of ``kind`` (malformed, incomplete, truncated)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def prompt_parts(body: dict, anthropic: bool) -> tuple[str, list[str]]:
    """(system, users) of a request: the system text and the user messages in order (the last is
    the turn's prompt; earlier ones belong to a chat's history)."""
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
    return system, users or [""]


def error_reply(refusal: Refused, anthropic: bool) -> web.Response:
    if anthropic:
        body = {"type": "error", "error": {"type": refusal.kind, "message": refusal.message}}
    else:
        code: int | str = refusal.status if refusal.vllm else "rate_limit_exceeded" if refusal.status == 429 else refusal.kind
        body = {"error": {"message": refusal.message, "type": refusal.kind, "param": refusal.param, "code": code}}
    return web.json_response(body, status=refusal.status, headers=refusal.headers)


async def broken_reply(request: web.Request, kind: str) -> web.StreamResponse:
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


FINGERPRINT = "vllm-0.32.0-fake"


def _usage(prompt: int, cached: int, completion: int) -> dict:
    return {"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion,
            "prompt_tokens_details": {"cached_tokens": cached, "created_cache_tokens": prompt - cached}}


class Returned:
    """What of a call's tokens the reply carries: ``sampled`` (None: nothing), vLLM's token id fields
    (``ids``), the logprobs (``logprobs``), in the server's ``form``."""

    def __init__(self, sampled: Sampled | None, ids: bool, logprobs: bool, form: TokenForm) -> None:
        self.sampled, self.ids, self.logprobs, self.form = sampled, ids, logprobs, form

    def content(self, places: range) -> dict | None:
        if self.sampled is None or not self.logprobs:
            return None
        return {"content": [self.sampled.entry(place, self.form) for place in places]}

    def token_ids(self, places: range) -> list[int] | None:
        return None if self.sampled is None or not self.ids else [self.sampled.ids[p] for p in places]

    def prompt_ids(self) -> list[int] | None:
        return None if self.sampled is None or not self.ids else self.sampled.prompt_ids


NOTHING = Returned(None, False, False, "none")


def openai_completion(model: str, text: str, prompt: int, cached: int, completion: int, cut: bool = False,
                      returned: Returned = NOTHING) -> dict:
    """A chat completion with every field vLLM 0.32 writes (``tests/data/vllm/exchange.json``), and
    where the request asked for them the call's tokens in the server's form (``tokens``)."""
    every = range(len(returned.sampled.ids)) if returned.sampled is not None else range(0)
    message = {"role": "assistant", "content": text, "refusal": None, "annotations": None, "audio": None, "function_call": None,
               "reasoning": None}
    usage = _usage(prompt, cached, completion)
    usage["prompt_tokens_details"]["multimodal_tokens"] = None
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": returned.content(every), "finish_reason": "length" if cut else "stop",
                     "stop_reason": None, "token_ids": returned.token_ids(every), "routed_experts": None}],
        "service_tier": None, "system_fingerprint": FINGERPRINT,
        "usage": {**usage, "completion_tokens_details": None},
        "prompt_logprobs": None, "prompt_token_ids": returned.prompt_ids(), "prompt_text": None, "kv_transfer_params": None,
        "ec_transfer_params": None, "metrics": None,
    }


def anthropic_message(model: str, text: str, prompt: int, cached: int, completion: int, cut: bool = False) -> dict:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": "max_tokens" if cut else "end_turn", "stop_sequence": None,
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


async def openai_stream(request, model, text, prompt, cached, completion, headers, include_usage, cut=False,
                        returned: Returned = NOTHING) -> web.StreamResponse:
    """A streamed chat completion as vLLM 0.32 writes it: the role first, the text in pieces, the last
    piece with the finish reason, then (if asked) the usage in a chunk of its own. With the call's
    tokens, a piece is a token, with its id and logprob in the server's form (vLLM's prompt ids in the
    first chunk; llama.cpp's end-of-turn token left out, as its server leaves it)."""
    response = await _sse(request, headers)
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    async def chunk(data: dict) -> None:
        await response.write(f"data: {json.dumps({**base, **data})}\n\n".encode())

    await chunk({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}],
                 "prompt_token_ids": returned.prompt_ids(), "prompt_text": None})
    sampled = returned.sampled
    if sampled is not None:  # a token a piece: its text, id and logprob
        count = len(sampled.ids) - (1 if returned.form == "llamacpp" and not cut else 0)
        pieces = ["" if t == "<|im_end|>" else t for t in sampled.texts[:count]] or [""]
    else:
        pieces = _pieces(text)
    for i, piece in enumerate(pieces):
        places = range(i, i + 1) if sampled is not None and sampled.ids else range(0)
        choice: dict[str, Any] = {"index": 0, "delta": {"content": piece}, "logprobs": returned.content(places), "finish_reason": None}
        if i == len(pieces) - 1:
            choice.update(finish_reason="length" if cut else "stop", stop_reason=None)
        await chunk({"choices": [{**choice, "token_ids": returned.token_ids(places)}]})
    if include_usage:
        await chunk({"choices": [], "usage": _usage(prompt, cached, completion), "system_fingerprint": FINGERPRINT})
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def anthropic_stream(request, model, text, prompt, cached, completion, headers, cut=False) -> web.StreamResponse:
    response = await _sse(request, headers)

    async def event(name: str, data: dict) -> None:
        await response.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

    start = anthropic_message(model, "", prompt, cached, 1)
    start["content"], start["stop_reason"] = [], None
    await event("message_start", {"type": "message_start", "message": start})
    await event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    for piece in _pieces(text):
        await event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})
    await event("content_block_stop", {"type": "content_block_stop", "index": 0})
    stop = "max_tokens" if cut else "end_turn"
    await event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": completion}})
    await event("message_stop", {"type": "message_stop"})
    await response.write_eof()
    return response
