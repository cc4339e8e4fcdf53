"""Model backends (OpenAI, Anthropic, vLLM) behind per-model rate limiters, through the lean client or
the providers' SDKs."""

from .base import Backend, Completion, InfraError, RequestError
from .clients import ModelHub
from .limiter import Limiter
from .settings import CLIENTS, PROVIDERS, BackendSettings, ModelOptions, split_name
from .tokens import Tokenizer

__all__ = [
    "CLIENTS", "PROVIDERS", "Backend", "BackendSettings", "Completion", "InfraError", "Limiter", "ModelHub",
    "ModelOptions", "RequestError", "Tokenizer", "split_name",
]
