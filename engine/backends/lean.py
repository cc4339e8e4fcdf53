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
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import aiohttp
from yarl import URL

from engine.backends.base import Request, StatusError
from engine.backends.provider import ProviderBackend
from engine.backends.sdk import openai_fixed
from engine.backends.settings import chat_turns, game_headers
from engine.backends.wire import GrammarForm, Reply, bounded, bounded_grammar, openai_body, openai_reply, openai_stream


class LeanClient:
    """One server: its URL, key and connection pool. The session opens on the first call (inside the
    event loop) and closes with ``close``."""

    def __init__(self, base_url: str, key: str | None, connections: int, timeout: float) -> None:
        self.endpoint = URL(base_url.rstrip("/") + "/chat/completions")
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
                 grammar_form: GrammarForm | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stream = stream
        self.bound_schema = bound_schema  # (characters per string, items per array), or None: as given
        self.grammar_form = grammar_form  # how the server takes a reply grammar, or None: it takes none
        # OpenAI's own API caps a reply with max_completion_tokens; vLLM and the other OpenAI-compatible
        # servers (``form`` "vllm") with max_tokens.
        field = "max_tokens" if form == "vllm" else self.max_tokens_field
        self.fixed = openai_fixed(self.model, self.options, field, stream)

    def _body(self, request: Request) -> bytes:
        system, user, schema, history, sample, grammar = request
        messages = [{"role": "system", "content": system}, *chat_turns(history), {"role": "user", "content": user}]
        seed = None if self.options.seed is None else self.options.seed + sample
        if schema is not None and self.bound_schema is not None:
            schema = bounded(schema, *self.bound_schema)
        if grammar is not None and self.bound_schema is not None:
            grammar = bounded_grammar(grammar, *self.bound_schema)
        return openai_body(self.fixed, messages, seed, schema, grammar, self.grammar_form)

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
        return await self._post(self.client, self._body(request), call)
