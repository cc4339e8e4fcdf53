"""The lean client: the OpenAI-compatible chat-completions API (vLLM's server, or any other, OpenAI's
own included when asked) spoken directly over one aiohttp session per server, bodies encoded and
replies read with msgspec (``wire``).

Hand-written rather than the openai SDK for speed: the SDK spends several times the CPU of the HTTP
exchange itself on each call (its parameter transform, request building, pydantic parsing, the
httpx layer over aiohttp); against a batching server with hundreds of calls in flight that CPU is
what bounds a run. It speaks the same protocol as the SDK path: the same body, the bearer key and the
``X-Game-Id`` header, plain or streamed replies with their usage, the rate-limit headers for the
limiter; and its failures sort into the same kinds (HTTP status, malformed body, timeout,
connection error; see ``provider.ProviderBackend._classify``), with the SDK's wording of an error body.

A call that asks for its tokens (``Request.tokens``) asks the server in its form (``wire.TokenForm``).
llama.cpp's server leaves the prompt's token ids out of its reply: they are what its own
``/apply-template`` renders of the call's messages and its ``/tokenize`` makes of that (with the
special tokens, as its chat endpoint tokenizes a prompt), asked after the reply and checked against
the prompt tokens it counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp
import msgspec
from yarl import URL

from bus import Tokens

from engine.backends.base import Request, StatusError
from engine.backends.provider import ProviderBackend
from engine.backends.routes import with_route
from engine.backends.sdk import openai_fixed
from engine.backends.settings import chat_turns, game_headers
from engine.backends.wire import (
    GrammarForm, MalformedReply, Reply, TokenForm, bounded, bounded_grammar, encode, openai_body, openai_reply, openai_stream, reader,
)


class _Rendered(msgspec.Struct):
    prompt: str


class _Tokenized(msgspec.Struct):
    tokens: list[int]


_read_rendered = reader(_Rendered)
_read_tokenized = reader(_Tokenized)


def server_root(base_url: str) -> str:
    """The server's own address of an OpenAI-compatible base URL (``http://HOST:PORT/v1`` ->
    ``http://HOST:PORT``): where llama.cpp's server has its ``/apply-template`` and ``/tokenize``."""
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


class LeanClient:
    """One server: its URL, key and connection pool. The session opens on the first call (inside the
    event loop) and closes with ``close``."""

    def __init__(self, base_url: str, key: str | None, connections: int, timeout: float) -> None:
        self.endpoint = URL(base_url.rstrip("/") + "/chat/completions")
        self.root = server_root(base_url)
        self.headers = {"Content-Type": "application/json"}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"
        self.connections = connections
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self.connections, limit_per_host=0)
            self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def error_message(status: int, body: bytes) -> str:
    """What the SDKs say of an HTTP error: the code, and the message of a JSON error body."""
    text = f"Error code: {status}"
    try:
        data = json.loads(body)
    except ValueError:
        return text
    error = data.get("error", data) if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return f"{text} - {message}" if isinstance(message, str) and message else text


class LeanBackend(ProviderBackend):
    """An OpenAI-compatible model on a ``LeanClient``."""

    client_kind = "lean"

    max_tokens_field = "max_completion_tokens"

    def __init__(self, *args: Any, form: str = "vllm", stream: bool = False, bound_schema: tuple[int, int] | None = None,
                 grammar_form: GrammarForm | None = None, token_form: TokenForm | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stream = stream
        self.bound_schema = bound_schema  # (characters per string, items per array), or None: as given
        self.grammar_form = grammar_form  # how the server takes a reply grammar, or None: it takes none
        self.token_form = token_form  # how the server returns a call's tokens, or None: it returns none
        # OpenAI's own API caps a reply with max_completion_tokens; vLLM and the other OpenAI-compatible
        # servers (``form`` "vllm") with max_tokens.
        field = "max_tokens" if form == "vllm" else self.max_tokens_field
        self.fixed = openai_fixed(self.model, self.options, field, stream)

    @staticmethod
    def _messages(request: Request) -> list[dict[str, Any]]:
        return [{"role": "system", "content": request.system}, *chat_turns(request.history), {"role": "user", "content": request.user}]

    def _body(self, request: Request) -> bytes:
        schema, grammar = request.schema, request.grammar
        seed = None if self.options.seed is None else self.options.seed + request.sample
        if schema is not None and self.bound_schema is not None:
            schema = bounded(schema, *self.bound_schema)
        if grammar is not None and self.bound_schema is not None:
            grammar = bounded_grammar(grammar, *self.bound_schema)
        fixed = with_route(self.fixed, self.model)  # the game's weights, where a trainer swapped them in (``routes``)
        return openai_body(fixed, self._messages(request), seed, schema, grammar, self.grammar_form,
                           self.token_form if request.tokens else None)

    async def _with_prompt_ids(self, client: LeanClient, request: Request, reply: Reply) -> Reply:
        """``reply`` with the prompt's token ids as llama.cpp's server makes them (its ``/apply-template``
        of the call's messages, then its ``/tokenize`` of that), where the request asked for tokens
        and the reply has none. A count that is not the one the server gave for the call is a
        ``MalformedReply``: the ids would not be what the server consumed."""
        tokens = reply.tokens
        if not request.tokens or self.token_form != "llamacpp" or tokens is None or tokens.prompt_ids is not None:
            return reply
        rendered = _read_rendered(await self._post_json(client, "/apply-template", {"messages": self._messages(request)}))
        ids = _read_tokenized(await self._post_json(client, "/tokenize", {"content": rendered.prompt, "add_special": True,
                                                                          "parse_special": True})).tokens
        if len(ids) != reply.prompt:
            raise MalformedReply(f"the server counted {reply.prompt} prompt tokens, its /tokenize of the prompt gives {len(ids)}")
        return msgspec.structs.replace(reply, tokens=Tokens(tuple(ids), tokens.completion_ids, tokens.logprobs))

    async def _post_json(self, client: LeanClient, path: str, body: dict[str, Any]) -> bytes:
        body = with_route(body, self.model)  # a llama.cpp router sends it on to the game's weights
        async with client.session().post(client.root + path, data=encode(body), headers=client.headers) as response:
            data = await response.read()
            if not 200 <= response.status < 300:
                raise StatusError(response.status, error_message(response.status, data), response.headers)
        return data

    async def _post(self, client: LeanClient, body: bytes, call: str) -> tuple[Reply, Mapping[str, str]]:
        async with client.session().post(client.endpoint, data=body, headers=game_headers(client.headers, call)) as response:
            if not 200 <= response.status < 300:
                raise StatusError(response.status, error_message(response.status, await response.read()), response.headers)
            if self.stream:
                reply = await openai_stream(response.content, self.arriving)
            else:
                reply = openai_reply(await response.read())
            headers: Mapping[str, str] = response.headers
        return reply, headers

    async def _send(self, request: Request, call: str) -> tuple[Reply, Mapping[str, str]]:
        reply, headers = await self._post(self.client, self._body(request), call)
        return await self._with_prompt_ids(self.client, request, reply), headers
