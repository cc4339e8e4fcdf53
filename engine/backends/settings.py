"""What a run says about its model calls (providers, sampling, pacing, which client speaks to which
server) and the small pieces every client shares: model names, chat turns and the game header."""

from __future__ import annotations

from contextvars import ContextVar
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from engine.backends.endpoints import ENDPOINT_NAME, Endpoint, known

PROVIDERS = ("openai", "anthropic", "vllm")  # the engine's own; named endpoints add more (endpoints.py)
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "vllm": "VLLM_API_KEY"}
CLIENTS = ("lean", "sdk")
DEFAULT_CLIENT = {"openai": "sdk", "anthropic": "sdk", "vllm": "lean"}  # by kind of API
LEAN_PROVIDERS = ("openai", "vllm")  # the lean client speaks the OpenAI-compatible API only

GAME_HEADER = "X-Game-Id"
CALL_GAME: ContextVar[str | None] = ContextVar("call_game", default=None)
"""The game the calls made in this context belong to, unique within the run and across runs; sent
as the ``X-Game-Id`` header so that a server playing scripted agents (``runners.fake_llm``) keeps
each game's agents apart. It names no person and no key."""

CALL_HEADER = "X-Call-Id"
"""One model call of a game, the same for every attempt at it: sent with the game's header, so that a
server playing scripted agents answers a retried call (say, after a timeout on this side while it was
answering) as it answered the first attempt, instead of playing on."""


# Output tokens per reply unless --max-tokens says otherwise. A game's reply is a message and an action
# or two: the scripted agents write about 100 tokens and SmolLM2's replies (tests/data/real_model) 112 at
# the median and 336 at most, so 1024 leaves three times the longest. A small local model that repeats
# itself runs to the limit on every call: at about 20 tokens a second on a laptop's CPU that is 50 s a
# call at 1024 and over three minutes at 4096. Reasoning models count their hidden reasoning against it
# and need more (--max-tokens 8192, say); a reply cut at the limit is counted as cut.
DEFAULT_MAX_TOKENS = 1024


class ModelOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How every model call of a run is made."""

    temperature: float = 0.0
    top_p: float | None = None  # nucleus sampling (OpenAI, vLLM); None: the provider's default
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = None  # passed to providers that take one (OpenAI, vLLM)
    structured: bool = False  # ask the backend for JSON that follows the reply schema
    tokens: bool = False  # bring back every call's token ids and log-probabilities (a vLLM or llama.cpp server)
    timeout: float = 120.0  # seconds per attempt
    max_attempts: int = 8
    backoff_base: float = 1.0  # seconds; doubles per attempt, full jitter
    backoff_max: float = 60.0

    def sampling(self) -> dict[str, Any]:
        """What the replies depend on (kept with every record a model played): temperature, top_p,
        max_tokens, seed and structured, those set."""
        fields = {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens,
                  "seed": self.seed, "structured": self.structured}
        return {k: v for k, v in fields.items() if v is not None}


CACHE_MODES = ("off", "on", "read-only")


class CacheSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The response cache (``engine.backends.cache``): ``on`` answers a call the cache holds from it
    and keeps the reply of every other; ``read-only`` answers from it but keeps nothing. Only calls
    whose reply is fixed by the request are cached (temperature 0, or a seed) unless ``sampled``."""

    mode: Literal["off", "on", "read-only"] = "off"
    sampled: bool = False  # cache sampled calls too (temperature > 0 and no seed; Anthropic's, which take neither)
    directory: str | None = None  # None: $ASYMGAMES_CACHE, else ~/.cache/asymgames, of the machine making the calls
    expiry: float | None = None  # seconds an entry answers for; None: for ever


class BatchSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Batch mode (``--batch``, ``engine.backends.batch``): the calls of OpenAI and Anthropic models
    go to the providers' batch APIs, at their batch price, a batch at a time. A batch is sent when
    it holds ``size`` calls or ``wait`` seconds after its first call; each batch is looked at
    ``poll`` seconds after it is sent, then less often (1.5 times longer each time, at most
    ``poll_max``). ``factors``: batch prices over those of ``prices.toml``'s ``[batch]`` table (a
    price file's ``[batch]`` table), as a share of the listed price."""

    enabled: bool = False
    size: int = 2000
    wait: float = 5.0
    poll: float = 10.0
    poll_max: float = 120.0
    factors: dict[str, float] = {}


class BackendSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Per-run settings of the model backends (none of them changes what a game is)."""

    options: ModelOptions = ModelOptions()
    rpm: dict[str, float] = {}  # provider or provider:model -> requests per minute
    tpm: dict[str, float] = {}  # provider or provider:model -> tokens per minute
    urls: dict[str, str] = {}  # provider -> base URL
    max_in_flight: int = 512  # per provider and model (OpenAI, Anthropic)
    vllm_max_seqs: int = 256  # the server's --max-num-seqs
    shared_limits: list[str] = []  # providers whose models draw on one limit (the account's), not one each
    prices: dict[str, tuple[float, ...]] = {}  # model -> (input, cached input, output[, cache write]) $/M tokens, over prices.toml
    clients: dict[str, Literal["lean", "sdk"]] = {}  # provider -> its client, over the endpoint's and DEFAULT_CLIENT
    stream: bool = False  # receive replies as server-sent events
    endpoints: dict[str, Endpoint] = {}  # named endpoints given to the run or named by it, over the built-in ones
    serve_slots: int = 4  # sequences at once of a server the engine starts (llamacpp:PATH.gguf, vllm:MODEL with no URL)
    serve_context: int = 8192  # tokens of context per sequence of such a server
    serve_timeout: float = 900.0  # seconds such a server may take to start (a cold vLLM on a CPU: minutes)
    cache: CacheSettings = CacheSettings()  # the response cache; off by default
    batch: BatchSettings = BatchSettings()  # batch mode; off by default
    # A run whose full transcripts answer again the model calls they recorded, each seat's in the game
    # its spec plays again (a branch run's: the run it branches; ``engine.play.recorded``); None: none.
    replay: str | None = None

    def endpoint(self, provider: str) -> Endpoint:
        """The endpoint ``provider`` names. ValueError with a one-line reason if there is none."""
        table = known(self.endpoints)
        found = table.get(provider)
        if found is None:
            raise ValueError(
                f"unknown model provider or endpoint {provider!r}; known: {', '.join(table)} "
                "(define one with --endpoint NAME=KIND,URL[,KEY_ENV] or --endpoints FILE)"
            )
        return found

    def base_url(self, provider: str, environ: Mapping[str, str]) -> str | None:
        """The server of ``provider``: the run's flag, else the endpoint's environment variable, else its URL."""
        endpoint = self.endpoint(provider)
        from_env = environ.get(endpoint.url_env) if endpoint.url_env else None
        return self.urls.get(provider) or from_env or endpoint.url or None

    def key(self, provider: str, environ: Mapping[str, str]) -> str | None:
        """The API key the calls to ``provider`` send: its environment variable's, else "EMPTY" for a
        server that needs none (vLLM's, an endpoint without a key variable)."""
        endpoint = self.endpoint(provider)
        key = environ.get(endpoint.key_env) if endpoint.key_env else None
        return key or ("EMPTY" if endpoint.kind == "vllm" or not endpoint.key_env else None)

    def token_form(self, provider: str) -> Literal["vllm", "llamacpp"] | None:
        """How ``provider``'s server returns a call's tokens (``wire.TokenForm``; a server the engine
        starts: ``ModelHub.token_form``): the endpoint's ``tokens``, else vLLM's for a vLLM server;
        None for a server that returns none, or a llama.cpp server through the SDK client (which
        cannot ask its ``/tokenize`` for the prompt's ids)."""
        endpoint = self.endpoint(provider)
        form = endpoint.tokens or ("vllm" if endpoint.kind == "vllm" else None)
        if form == "llamacpp" and self.client(provider) != "lean":
            return None
        return form

    def client(self, provider: str) -> str:
        """"lean" or "sdk": the client that speaks to ``provider``. ValueError for a lean Anthropic."""
        endpoint = self.endpoint(provider)
        client = self.clients.get(provider) or endpoint.client or DEFAULT_CLIENT[endpoint.kind]
        if client == "lean" and endpoint.kind not in LEAN_PROVIDERS:
            raise ValueError(f"the lean client speaks the OpenAI-compatible API only; {provider} needs --client {provider}=sdk")
        return client


def endpoint_limits(settings: BackendSettings) -> BackendSettings:
    """``settings`` with the named endpoints' own rpm and tpm as their providers' limits, where
    ``--rpm``/``--tpm`` set none (so they are saved, and divided among workers, like the flags)."""
    rpm, tpm = dict(settings.rpm), dict(settings.tpm)
    for name, endpoint in settings.endpoints.items():
        if endpoint.rpm is not None:
            rpm.setdefault(name, endpoint.rpm)
        if endpoint.tpm is not None:
            tpm.setdefault(name, endpoint.tpm)
    if rpm == settings.rpm and tpm == settings.tpm:
        return settings
    return msgspec.structs.replace(settings, rpm=rpm, tpm=tpm)


History = tuple[tuple[str, str], ...]
"""The earlier turns of a chat with a model: (user prompt, the model's reply) pairs, oldest first."""


def chat_turns(history: History, cache_last: bool = False) -> list[dict[str, Any]]:
    """``history`` as alternating user and assistant messages. ``cache_last`` marks the end of the
    history as a prompt-cache breakpoint (Anthropic caches the prefix up to it; OpenAI caches long
    prefixes on its own)."""
    messages: list[dict[str, Any]] = []
    for asked, answered in history:
        messages.append({"role": "user", "content": asked})
        messages.append({"role": "assistant", "content": answered})
    if cache_last and messages:
        last = messages[-1]
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": {"type": "ephemeral"}}]
    return messages


def split_name(name: str) -> tuple[str, str]:
    """``provider:model`` -> (provider, model); the model keeps its spelling. Raises ValueError. The
    provider is the engine's (openai, anthropic, vllm) or a named endpoint; whether it is known is
    for ``BackendSettings.endpoint`` to say."""
    provider, sep, model = name.partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    if not sep or not ENDPOINT_NAME.fullmatch(provider):
        raise ValueError(f"unknown model provider in {name!r}; use openai:MODEL, anthropic:MODEL, vllm:MODEL or ENDPOINT:MODEL")
    if not model:
        raise ValueError(f"{name!r} names no model; use {provider}:MODEL")
    return provider, model


def game_headers(base: dict[str, str], call: str) -> dict[str, str]:
    """``base`` plus the game and call headers of the call ``call``, if it belongs to a game."""
    game = CALL_GAME.get()
    return base if game is None else {**base, GAME_HEADER: game, CALL_HEADER: call}
