"""The wire formats: OpenAI chat completions and Anthropic messages, requests and replies, plain and
streamed as server-sent events. The lean client and the SDK clients both read replies here.

Hand-written msgspec structs rather than the SDKs' pydantic models, for speed: reading a reply
into them takes microseconds, the SDKs' parsing some ten times as long, which with hundreds of calls
in flight is CPU the run spends on nothing. They hold only what a call needs: the text, the token
counts, why the server stopped, and where a call asks for them its token ids and log-probabilities
(``TOKEN_FIELDS`` says how each server is asked; both forms are read the same way). A reply they do not fit (cut short, a count that is not a count, no usage) is a
``MalformedReply``: the provider failed, not the model. msgspec refuses half of a surrogate pair
escaped in a JSON string and bytes that are not UTF-8, which models do send and which a reply must
survive (they become U+FFFD where the reply is read); such a body is decoded again with the
standard library, as the SDKs decode it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Annotated, Any, Literal

import msgspec

from bus import Tokens

from engine.backends.base import FinishReason, finish_reason

Count = Annotated[int, msgspec.Meta(ge=0)]


class MalformedReply(ValueError):
    """The provider's reply is not the API's JSON (cut short, missing fields, wrong types)."""


class Reply(msgspec.Struct, frozen=True):
    """What a call brings back: the text, the token counts and why the server stopped. The prompt
    tokens include the cache reads and writes."""

    text: str
    prompt: int
    cached: int
    written: int
    completion: int
    finish: FinishReason = "stop"
    tokens: Tokens | None = None


# ---- OpenAI chat completions (and vLLM's OpenAI-compatible server) ----

TokenForm = Literal["vllm", "llamacpp"]
"""How a server returns a call's tokens on its OpenAI-compatible API. vLLM: ``return_token_ids``
brings the prompt's ids (``prompt_token_ids``) and the completion's (each choice's ``token_ids``),
``logprobs`` the log-probability of each sampled token. llama.cpp's server: ``logprobs`` with
``top_logprobs`` 1 (with 0 it leaves them out) brings each sampled token's ``id`` and ``logprob``;
the prompt's ids are not in its reply (the lean client asks its ``/apply-template`` and
``/tokenize`` for them)."""

TOKEN_FIELDS: dict[TokenForm, dict[str, Any]] = {
    "vllm": {"logprobs": True, "return_token_ids": True},
    "llamacpp": {"logprobs": True, "top_logprobs": 1},
}

class _Details(msgspec.Struct):
    cached_tokens: Count | None = None


class _OpenAIUsage(msgspec.Struct):
    prompt_tokens: Count
    completion_tokens: Count
    prompt_tokens_details: _Details | None = None


class _Text(msgspec.Struct):
    content: str | None = None


class _Sampled(msgspec.Struct):
    """One sampled token of ``logprobs.content``: its log-probability, and its id where the server
    gives it (llama.cpp's does; vLLM's gives ``token_ids`` instead)."""

    logprob: float
    id: int | None = None


class _Logprobs(msgspec.Struct):
    content: list[_Sampled] | None = None


class _ChunkChoice(msgspec.Struct, kw_only=True):
    delta: _Text | None = None
    finish_reason: str | None = None
    logprobs: _Logprobs | None = None
    token_ids: list[int] | None = None


class _Choice(_ChunkChoice, kw_only=True):
    message: _Text


class _Chunk(msgspec.Struct, kw_only=True):
    choices: Sequence[_ChunkChoice] = ()
    usage: _OpenAIUsage | None = None
    prompt_token_ids: list[int] | None = None


class _Completion(_Chunk, kw_only=True):
    choices: Sequence[_Choice]
    usage: _OpenAIUsage


encode = msgspec.json.Encoder().encode


def reader(kind: type) -> Callable[[bytes | str], Any]:
    """A decoder of ``kind`` that raises ``MalformedReply``, falling back on the standard library's
    JSON for what msgspec refuses (half of a surrogate pair, escaped)."""
    decode: Callable[[bytes | str], Any] = msgspec.json.Decoder(kind).decode

    def read(body: bytes | str) -> Any:
        try:
            return decode(body)
        except msgspec.ValidationError as exc:
            raise MalformedReply(str(exc)) from None
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body  # as the SDKs read bodies
            try:
                return msgspec.convert(json.loads(text), kind)
            except (ValueError, msgspec.ValidationError):
                raise MalformedReply(str(exc)) from None

    return read


_read_completion = reader(_Completion)
_read_chunk = reader(_Chunk)


def _openai_counts(text: str, usage: _OpenAIUsage, finish: str | None, tokens: Tokens | None = None) -> Reply:
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    return Reply(text, usage.prompt_tokens, cached, 0, usage.completion_tokens, finish_reason(finish), tokens)


def _tokens(prompt_ids: list[int] | None, token_ids: list[int] | None, sampled: list[_Sampled] | None) -> Tokens | None:
    """The call's tokens, from whichever fields the server filled (None: it filled none). The
    completion's ids are ``token_ids`` (vLLM), else the sampled tokens' ids (llama.cpp) if it gave
    every one."""
    if prompt_ids is None and token_ids is None and sampled is None:
        return None
    completion_ids = token_ids
    if completion_ids is None and sampled is not None and all(s.id is not None for s in sampled):
        completion_ids = [s.id for s in sampled]  # type: ignore[misc]
    return Tokens(
        None if prompt_ids is None else tuple(prompt_ids),
        None if completion_ids is None else tuple(completion_ids),
        None if sampled is None else tuple(s.logprob for s in sampled),
    )


def openai_reply(body: bytes) -> Reply:
    reply = _read_completion(body)
    if not reply.choices:
        raise MalformedReply("the reply has no choices")
    choice = reply.choices[0]
    logprobs = choice.logprobs
    tokens = _tokens(reply.prompt_token_ids, choice.token_ids, logprobs.content if logprobs is not None else None)
    return _openai_counts(choice.message.content or "", reply.usage, choice.finish_reason, tokens)


def _no_count(n: int) -> None:
    pass


async def openai_stream(lines: AsyncIterable[bytes | str], arriving: Callable[[int], None] = _no_count) -> Reply:
    """Read a streamed completion: the text of the first choice and the usage chunk (the request
    asks for one with ``stream_options.include_usage``). ``arriving(1)`` is called for each piece
    of text as it arrives (a server sends about one token a piece), ``arriving(-n)`` once at the end
    with the ``n`` it counted, whether the stream ends well or not."""
    parts: list[str] = []
    usage: _OpenAIUsage | None = None
    finish: str | None = None
    # The tokens, where the request asked for them: the prompt's ids come in one chunk (vLLM's
    # first), each chunk's sampled tokens with its piece of text.
    prompt_ids: list[int] | None = None
    token_ids: list[int] | None = None
    sampled: list[_Sampled] | None = None
    try:
        async for data in _events(lines):
            if data == b"[DONE]":
                break
            chunk = _read_chunk(data)
            if chunk.prompt_token_ids is not None:
                prompt_ids = chunk.prompt_token_ids
            if chunk.choices:
                choice = chunk.choices[0]
                delta = choice.delta
                if delta is not None and delta.content:
                    parts.append(delta.content)
                    arriving(1)
                finish = choice.finish_reason or finish
                if choice.token_ids is not None:
                    token_ids = token_ids or []
                    token_ids.extend(choice.token_ids)
                if choice.logprobs is not None and choice.logprobs.content is not None:
                    sampled = sampled or []
                    sampled.extend(choice.logprobs.content)
            if chunk.usage is not None:
                usage = chunk.usage
    finally:
        arriving(-len(parts))
    if usage is None:
        raise MalformedReply("the stream ended without its usage")
    return _openai_counts("".join(parts), usage, finish, _tokens(prompt_ids, token_ids, sampled))


# ---- Anthropic messages ----

class _AnthropicUsage(msgspec.Struct):
    input_tokens: Count
    output_tokens: Count
    cache_read_input_tokens: Count | None = None
    cache_creation_input_tokens: Count | None = None


class _Block(msgspec.Struct):
    type: str
    text: str = ""


class _AnthropicMessage(msgspec.Struct):
    content: list[_Block]
    usage: _AnthropicUsage
    stop_reason: str | None = None


class _Started(msgspec.Struct):
    usage: _AnthropicUsage


class _EventDelta(msgspec.Struct):
    type: str = ""
    text: str = ""
    stop_reason: str | None = None


class _OutputUsage(msgspec.Struct):
    output_tokens: Count


class _Event(msgspec.Struct):
    type: str
    message: _Started | None = None
    delta: _EventDelta | None = None
    usage: _OutputUsage | None = None


_read_message = reader(_AnthropicMessage)
_read_event = reader(_Event)


def _anthropic_counts(text: str, usage: _AnthropicUsage, output: int, stop: str | None) -> Reply:
    cached = usage.cache_read_input_tokens or 0
    written = usage.cache_creation_input_tokens or 0
    # Anthropic counts cache reads and writes apart from input_tokens; the prompt holds all three.
    return Reply(text, usage.input_tokens + cached + written, cached, written, output, finish_reason(stop))


def anthropic_reply(body: bytes) -> Reply:
    reply = _read_message(body)
    text = "".join(block.text for block in reply.content if block.type == "text")
    return _anthropic_counts(text, reply.usage, reply.usage.output_tokens, reply.stop_reason)


async def anthropic_stream(lines: AsyncIterable[bytes | str], arriving: Callable[[int], None] = _no_count) -> Reply:
    """Read a streamed message: the input usage of ``message_start``, the text deltas and the output
    tokens of the last ``message_delta``; ``arriving`` counts the deltas as ``openai_stream`` does."""
    parts: list[str] = []
    started: _AnthropicUsage | None = None
    output: int | None = None
    stop: str | None = None
    try:
        async for data in _events(lines):
            event = _read_event(data)
            if event.type == "message_start" and event.message is not None:
                started = event.message.usage
            elif event.type == "content_block_delta" and event.delta is not None and event.delta.type == "text_delta":
                parts.append(event.delta.text)
                arriving(1)
            elif event.type == "message_delta" and event.usage is not None:
                output = event.usage.output_tokens
                stop = event.delta.stop_reason if event.delta is not None else stop
            elif event.type == "error":
                raise MalformedReply(f"the stream reported an error: {data[:200]!r}")
    finally:
        arriving(-len(parts))
    if started is None or output is None:
        raise MalformedReply("the stream ended without its usage")
    return _anthropic_counts("".join(parts), started, output, stop)


async def _events(lines: AsyncIterable[bytes | str]) -> AsyncIterator[bytes]:
    """The data of each server-sent event (one ``data:`` line each, as both APIs send them)."""
    async for line in lines:
        if isinstance(line, str):
            line = line.encode()
        if line.startswith(b"data:"):
            yield line[5:].strip()


def bounded(schema: Any, chars: int, items: int) -> Any:
    """``schema`` with every string at most ``chars`` characters and every array at most ``items``
    items where it sets no bound of its own. A grammar-constrained server (llama.cpp's) then closes
    every string and array in time, where a small model would otherwise repeat itself inside one
    until its token limit and leave JSON the grammar never finished."""
    if isinstance(schema, list):
        return [bounded(s, chars, items) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bounded(v, chars, items) for k, v in schema.items()}
    if out.get("type") == "string":
        out.setdefault("maxLength", chars)
    elif out.get("type") == "array":
        out.setdefault("maxItems", items)
    return out


_REPEAT = re.compile(r"([\])])\{(\d+),(\d+)\}")


def bounded_grammar(grammar: str, chars: int, items: int) -> str:
    """``grammar`` (GBNF) with ``bounded``'s limits: a bounded repetition of a character class
    (``[^\\n]{0,600}``, text) at most ``chars``, of a group (``(", " action){0,11}``, a list) at most
    ``items`` (never below its lower bound)."""

    def cap(match: re.Match[str]) -> str:
        low, high = int(match[2]), int(match[3])
        return f"{match[1]}{{{low},{max(low, min(high, chars if match[1] == ']' else items))}}}"

    return _REPEAT.sub(cap, grammar)


GrammarForm = Literal["llamacpp", "vllm", "vllm_guided"]
"""How a server takes a reply grammar (GBNF) on its OpenAI-compatible API: llama.cpp's server as the
body's ``grammar``; vLLM 0.12 and later as ``structured_outputs: {"grammar": ...}`` (``vllm``);
vLLM before 0.12 as ``guided_grammar`` (``vllm_guided``: 0.10.2 to 0.11 take both, earlier ones only
this, later ones only the other; each ignores a field it does not take). ``engine.serving.context``
reads the server's ``/version`` before any game, and ``vllm_grammar_form`` tells them apart by it."""

STRUCTURED_OUTPUTS_SINCE = (0, 12)  # vLLM's version that took ``guided_grammar`` away (``structured_outputs`` came in 0.10.2)
_VERSION = re.compile(r"^v?(\d+)\.(\d+)")


def vllm_grammar_form(version: str | None) -> GrammarForm:
    """The form a vLLM server of ``version`` takes a reply grammar in: ``guided_grammar`` before 0.12,
    ``structured_outputs`` from then on, and when the version is not known (a server that gives none)."""
    found = _VERSION.match(version or "")
    if found is not None and (int(found[1]), int(found[2])) < STRUCTURED_OUTPUTS_SINCE:
        return "vllm_guided"
    return "vllm"


def openai_body(fixed: dict[str, Any], messages: list[dict[str, Any]], seed: int | None, schema: dict | None,
                grammar: str | None = None, grammar_form: GrammarForm | None = None, tokens: TokenForm | None = None) -> bytes:
    """The request: the parameters fixed for the model (built once), this call's messages, seed and
    reply schema, or its reply grammar in the server's form (a server that takes none is never sent
    one: ``ModelHub.takes_grammar``); ``tokens``: ask for the call's tokens in that server's form."""
    body = {**fixed, "messages": messages}
    if tokens is not None:
        body.update(TOKEN_FIELDS[tokens])
    if seed is not None:
        body["seed"] = seed
    if schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": True}}
    elif grammar is not None and grammar_form is not None:
        field, value = {"llamacpp": ("grammar", grammar), "vllm": ("structured_outputs", {"grammar": grammar}),
                        "vllm_guided": ("guided_grammar", grammar)}[grammar_form]
        body[field] = value
    return encode(body)
