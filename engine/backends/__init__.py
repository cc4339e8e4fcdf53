"""Model backends (OpenAI, Anthropic, vLLM) behind per-model rate limiters, through the lean client or
the providers' SDKs.

The names below are loaded on first use: the settings a run saves (``BackendSettings``) cost little,
and the clients (aiohttp, yarl, the SDKs) load only when a model's backend is built, so that a run with
scripted agents imports no HTTP client (``tests/engine/test_startup.py``)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.backends.base import Backend, Completion, InfraError, RequestError
    from engine.backends.clients import ModelHub
    from engine.backends.limiter import Limiter
    from engine.backends.settings import CLIENTS, PROVIDERS, BackendSettings, ModelOptions, split_name
    from engine.backends.tokens import Tokenizer

_EXPORTS = {
    "Backend": "base", "Completion": "base", "InfraError": "base", "RequestError": "base",
    "ModelHub": "clients", "Limiter": "limiter",
    "CLIENTS": "settings", "PROVIDERS": "settings", "BackendSettings": "settings", "ModelOptions": "settings",
    "split_name": "settings", "Tokenizer": "tokens",
}

__all__ = [
    "CLIENTS", "PROVIDERS", "Backend", "BackendSettings", "Completion", "InfraError", "Limiter", "ModelHub",
    "ModelOptions", "RequestError", "Tokenizer", "split_name",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"engine.backends.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
