"""Model backends (OpenAI, Anthropic, vLLM) behind per-model rate limiters, through the lean client or
the providers' SDKs."""

from engine.backends.base import Backend, Completion, InfraError, RequestError
from engine.backends.clients import ModelHub
from engine.backends.limiter import Limiter
from engine.backends.settings import CLIENTS, PROVIDERS, BackendSettings, ModelOptions, split_name
from engine.backends.tokens import Tokenizer

__all__ = [
    "CLIENTS", "PROVIDERS", "Backend", "BackendSettings", "Completion", "InfraError", "Limiter", "ModelHub",
    "ModelOptions", "RequestError", "Tokenizer", "split_name",
]
