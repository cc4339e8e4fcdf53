"""Model backends (OpenAI, Anthropic, vLLM, llama.cpp's server and named endpoints) behind per-model
rate limiters, through the lean client or the providers' SDKs: the public face of ``engine.backends``.

The names below are loaded on first use: the settings a run saves (``BackendSettings``) cost little,
and the clients (aiohttp, yarl, the SDKs) load only when a model's backend is built, so that a run with
scripted agents imports no HTTP client (``tests/engine/test_startup.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.lazy import lazy_exports

if TYPE_CHECKING:
    from engine.backends.base import (
        Backend, Completion, FinishReason, InfraError, Request, RequestError, Secrets, Tokens, TokensMissing, finish_reason,
    )
    from engine.backends.batch import parse_custom_id
    from engine.backends.build import HubContext, served_schema_bounds
    from engine.backends.cache import cache_file, prune, sampled, store_figures
    from engine.backends.endpoints import ENDPOINT_NAME, endpoint_entry, known, read_endpoints
    from engine.backends.hub import ModelHub
    from engine.backends.limiter import COUNTERS, Bucket, Limiter
    from engine.backends.prices import price_entry, price_numbers, read_price_file
    from engine.backends.provider import ProviderBackend
    from engine.backends.settings import (
        CACHE_MODES, CALL_GAME, CALL_HEADER, CLIENTS, GAME_HEADER, PROVIDERS, BackendSettings, BatchSettings,
        CacheSettings, History, ModelOptions, chat_turns, split_name,
    )
    from engine.backends.tokens import Tokenizer, estimate_tokens
    from engine.backends.trajectory import Boundary, Mismatch, TokenSequence, Trajectory, seat_trajectory, turn_prompt_ids
    from engine.backends.vllm import ServerLoad, read_vllm_metrics

_EXPORTS = {
    "Backend": ".base", "Completion": ".base", "FinishReason": ".base", "InfraError": ".base", "Request": ".base",
    "RequestError": ".base", "Secrets": ".base", "Tokens": ".base", "finish_reason": ".base",
    "parse_custom_id": ".batch", "HubContext": ".build", "served_schema_bounds": ".build",
    "cache_file": ".cache", "prune": ".cache", "sampled": ".cache", "store_figures": ".cache",
    "ENDPOINT_NAME": ".endpoints", "endpoint_entry": ".endpoints", "known": ".endpoints", "read_endpoints": ".endpoints",
    "ModelHub": ".hub", "COUNTERS": ".limiter", "Bucket": ".limiter", "Limiter": ".limiter",
    "price_entry": ".prices", "price_numbers": ".prices", "read_price_file": ".prices", "ProviderBackend": ".provider",
    "CACHE_MODES": ".settings", "CALL_GAME": ".settings", "CALL_HEADER": ".settings", "CLIENTS": ".settings",
    "GAME_HEADER": ".settings", "PROVIDERS": ".settings", "BackendSettings": ".settings", "BatchSettings": ".settings",
    "CacheSettings": ".settings", "History": ".settings", "ModelOptions": ".settings", "chat_turns": ".settings", "split_name": ".settings",
    "Tokenizer": ".tokens", "estimate_tokens": ".tokens", "read_vllm_metrics": ".vllm",
    "Boundary": ".trajectory", "Mismatch": ".trajectory", "TokenSequence": ".trajectory", "Trajectory": ".trajectory",
    "seat_trajectory": ".trajectory", "turn_prompt_ids": ".trajectory", "TokensMissing": ".base",
    "ServerLoad": ".vllm",
}

__all__ = [
    "CACHE_MODES", "CALL_GAME", "CALL_HEADER", "CLIENTS", "COUNTERS", "ENDPOINT_NAME", "GAME_HEADER", "PROVIDERS",
    "Backend", "BackendSettings", "BatchSettings", "Boundary", "Bucket", "CacheSettings", "Completion", "FinishReason", "History",
    "HubContext", "InfraError", "Limiter", "Mismatch", "ModelHub", "ModelOptions", "ProviderBackend", "Request", "RequestError",
    "Secrets", "ServerLoad", "TokenSequence", "Tokenizer", "Tokens", "TokensMissing", "Trajectory", "cache_file", "chat_turns", "endpoint_entry", "estimate_tokens", "finish_reason", "known",
    "parse_custom_id", "price_entry", "price_numbers", "prune", "read_endpoints", "read_price_file", "read_vllm_metrics",
    "sampled", "seat_trajectory", "served_schema_bounds", "split_name", "store_figures", "turn_prompt_ids",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
