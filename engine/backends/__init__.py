"""Model backends (OpenAI, Anthropic, vLLM) behind per-model rate limiters."""

from .clients import (
    PROVIDERS, Backend, BackendSettings, Completion, InfraError, ModelHub, ModelOptions, RequestError, split_name,
)
from .limiter import Limiter
from .tokens import Tokenizer

__all__ = [
    "PROVIDERS", "Backend", "BackendSettings", "Completion", "InfraError", "Limiter", "ModelHub",
    "ModelOptions", "RequestError", "Tokenizer", "split_name",
]
