"""Model backends (OpenAI, Anthropic, vLLM, llama.cpp's server and named endpoints) behind per-model
rate limiters, through the lean client or the providers' SDKs: the public face of ``engine.backends``.

The names below are loaded on first use: the settings a run saves (``BackendSettings``) cost little,
and the clients (aiohttp, yarl, the SDKs) load only when a model's backend is built, so that a run with
scripted agents imports no HTTP client (``tests/engine/test_startup.py``)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.backends.base import (
        Backend, Completion, FinishReason, InfraError, Request, RequestError, Secrets, Tokens, finish_reason,
    )
    from engine.backends.build import HubContext, served_schema_bounds
    from engine.backends.hub import ModelHub
    from engine.backends.limiter import COUNTERS, Limiter
    from engine.backends.provider import ProviderBackend
    from engine.backends.settings import (
        CALL_GAME, CALL_HEADER, CLIENTS, GAME_HEADER, PROVIDERS, BackendSettings, History, ModelOptions, split_name,
    )
    from engine.backends.tokens import Tokenizer
    from engine.backends.vllm import read_vllm_metrics

_EXPORTS = {
    "Backend": "base", "Completion": "base", "FinishReason": "base", "InfraError": "base", "Request": "base",
    "RequestError": "base", "Secrets": "base", "Tokens": "base", "finish_reason": "base",
    "HubContext": "build", "served_schema_bounds": "build", "ModelHub": "hub", "COUNTERS": "limiter", "Limiter": "limiter",
    "ProviderBackend": "provider",
    "CALL_GAME": "settings", "CALL_HEADER": "settings", "CLIENTS": "settings", "GAME_HEADER": "settings",
    "PROVIDERS": "settings", "BackendSettings": "settings", "History": "settings", "ModelOptions": "settings",
    "split_name": "settings", "Tokenizer": "tokens", "read_vllm_metrics": "vllm",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"engine.backends.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
