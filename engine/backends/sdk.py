"""The SDK clients: OpenAI (and any OpenAI-compatible server, vLLM's included, when asked) through
``openai.AsyncOpenAI``, Anthropic through ``anthropic.AsyncAnthropic``, on the SDKs' aiohttp transport
with the SDKs' own retries off, so that every attempt is counted and paced by ``base.Backend``.

The SDK sends each request (keys, headers, timeouts, the transport) and turns HTTP errors and network
failures into its exceptions, sorted here like the lean client's. Its per-call work that a run does
not need is left out: the request parameters of a model are built once and each call's body is
encoded with msgspec and posted through the client's documented ``post`` for custom requests (the
SDKs' ``create`` re-validates and transforms every parameter on every call), and the reply is read
with ``wire`` rather than into pydantic models. The SDKs are imported only when a backend is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp

from engine.backends.base import Failure, Request
from engine.backends.provider import ProviderBackend, network_failure, status_failure
from engine.backends.routes import with_route
from engine.backends.settings import History, ModelOptions, chat_turns, game_headers
from engine.backends.wire import (
    GrammarForm, Reply, TokenForm, anthropic_reply, anthropic_stream, encode, openai_body, openai_reply, openai_stream,
)

_JSON = {"Content-Type": "application/json"}


def import_sdk(provider: str):
    try:
        if provider == "anthropic":
            import anthropic

            return anthropic
        import openai

        return openai
    except ImportError as exc:  # pragma: no cover - both are dependencies
        raise ValueError(f"the {provider} backend needs its SDK: pip install {exc.name}") from exc


def sdk_client(provider: str, key: str | None, base_url: str | None, connections: int) -> Any:
    """One SDK client for ``provider``: its aiohttp transport with room for ``connections``."""
    sdk = import_sdk(provider)
    import httpx2

    http_client = sdk.DefaultAioHttpClient(
        limits=httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    )
    kwargs: dict[str, Any] = {"api_key": key, "max_retries": 0, "http_client": http_client}
    if base_url:
        kwargs["base_url"] = base_url
    return (sdk.AsyncAnthropic if provider == "anthropic" else sdk.AsyncOpenAI)(**kwargs)


def _network_cause(exc: BaseException) -> BaseException | None:
    """The aiohttp or OS exception under an SDK connection error, if any."""
    seen = exc.__cause__ or exc.__context__
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, (aiohttp.ClientError, OSError, TimeoutError)):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def sdk_failure(sdk: Any, exc: Exception) -> Failure | None:
    """How an SDK's exception is handled (None: not one of the SDK's)."""
    if isinstance(exc, sdk.APIStatusError):
        response = exc.response
        return status_failure(exc.status_code, exc.message, response.headers if response is not None else {})
    if isinstance(exc, sdk.APIResponseValidationError):
        return Failure(f"malformed reply: {exc.message}", True, None, False, "malformed")
    if isinstance(exc, sdk.APIConnectionError):
        # The SDKs' aiohttp transport reports every connection failure as a connect timeout; the
        # aiohttp exception underneath says what happened.
        cause = _network_cause(exc)
        return network_failure(cause, timed_out=cause is None and isinstance(exc, sdk.APITimeoutError))
    return None


class SDKBackend(ProviderBackend):
    """A backend on an SDK client: posts the body, reads the reply with ``wire``."""

    client_kind = "sdk"
    path = ""

    def _classify(self, exc: Exception) -> Failure | None:
        return sdk_failure(self.sdk, exc) or super()._classify(exc)

    async def _post(self, body: bytes, stream: bool, call: str) -> tuple[Reply, Mapping[str, str]]:
        import httpx2

        options = {"headers": game_headers(_JSON, call), "timeout": self.options.timeout}
        response = await self.client.post(self.path, cast_to=httpx2.Response, content=body, options=options, stream=stream)
        try:
            if stream:
                reply = await (anthropic_stream if isinstance(self, AnthropicBackend) else openai_stream)(response.aiter_lines(), self.arriving)
            else:
                reply = (anthropic_reply if isinstance(self, AnthropicBackend) else openai_reply)(response.content)
        except httpx2.TransportError as exc:  # the body was cut short
            raise self.sdk.APIConnectionError(request=response.request) from exc
        finally:
            if stream:
                await response.aclose()
        return reply, response.headers


class OpenAIBackend(SDKBackend):
    """OpenAI's API, or another OpenAI-compatible one; ``token_form``: how the server returns a
    call's tokens (None: it returns none; through the SDK, vLLM's form only); ``grammar_form``: how
    the server takes a reply grammar, where not the class's (a vLLM server, by its version)."""

    provider = "openai"
    grammar_form: GrammarForm | None = None  # OpenAI's API takes no reply grammar
    path = "/chat/completions"
    max_tokens_field = "max_completion_tokens"

    def __init__(self, *args: Any, stream: bool = False, token_form: TokenForm | None = None,
                 grammar_form: GrammarForm | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stream = stream
        self.token_form = token_form
        if grammar_form is not None:
            self.grammar_form = grammar_form
        self.fixed = openai_fixed(self.model, self.options, self.max_tokens_field, stream)

    async def _send(self, request: Request, call: str) -> tuple[Reply, Mapping[str, str]]:
        messages = [{"role": "system", "content": request.system}, *chat_turns(request.history), {"role": "user", "content": request.user}]
        seed = None if self.options.seed is None else self.options.seed + request.sample
        fixed = with_route(self.fixed, self.model)  # the game's weights, where a trainer swapped them in (``routes``)
        body = openai_body(fixed, messages, seed, request.schema, request.grammar, self.grammar_form,
                           self.token_form if request.tokens else None)
        return await self._post(body, self.stream, call)


class VLLMBackend(OpenAIBackend):
    provider = "vllm"
    max_tokens_field = "max_tokens"
    grammar_form = "vllm"


def openai_fixed(model: str, options: ModelOptions, max_tokens_field: str, stream: bool) -> dict[str, Any]:
    """The parameters every call of a model sends, built once."""
    fixed: dict[str, Any] = {"model": model, "temperature": options.temperature, max_tokens_field: options.max_tokens}
    if options.top_p is not None:
        fixed["top_p"] = options.top_p
    if stream:
        fixed["stream"] = True
        fixed["stream_options"] = {"include_usage": True}
    return fixed


def anthropic_params(fixed: dict[str, Any], system: str, user: str, schema: dict | None, history: History) -> dict[str, Any]:
    """A message request: the model's fixed parameters, the system prompt, the earlier turns (the
    last marked as a prompt-cache breakpoint), the prompt and the reply schema."""
    body = {**fixed, "system": system, "messages": [*chat_turns(history, cache_last=True), {"role": "user", "content": user}]}
    if schema is not None:
        body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    return body


class AnthropicBackend(SDKBackend):
    """Anthropic's API version 2026-10-21 (sent by SDK 2.x) refuses temperature, top_p and top_k with a
    400, so calls use the model's own sampling and ``--temperature`` does not apply; ``--model-seed``
    neither (the API takes no seed)."""

    provider = "anthropic"
    path = "/v1/messages"

    def __init__(self, *args: Any, stream: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stream = stream
        self.fixed: dict[str, Any] = {"model": self.model, "max_tokens": self.options.max_tokens}
        if stream:
            self.fixed["stream"] = True

    async def _send(self, request: Request, call: str) -> tuple[Reply, Mapping[str, str]]:
        params = anthropic_params(self.fixed, request.system, request.user, request.schema, request.history)
        return await self._post(encode(params), self.stream, call)


__all__ = ["AnthropicBackend", "OpenAIBackend", "SDKBackend", "VLLMBackend", "anthropic_params", "import_sdk", "sdk_client", "sdk_failure"]
