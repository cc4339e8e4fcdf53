"""Named endpoints: where a model is served, how to reach it and which API it speaks.

A model is named ``ENDPOINT:MODEL``. ``openai``, ``anthropic`` and ``vllm`` are the engine's own (their
URLs from ``--openai-url`` and the like); ``endpoints.toml`` beside this module adds common services
(OpenRouter, Together, Gemini, a LiteLLM proxy, local vLLM and llama.cpp servers); a user adds or
replaces entries with a file of the same form (``--endpoints FILE``) or one flag each
(``--endpoint NAME=KIND,URL[,KEY_ENV]``). A run saves the entries it was given with its model
settings, so a resume reaches the same servers. An entry names the environment variable of its key,
never the key.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Literal

import msgspec

from engine.backends.tomlfile import read_toml

BUILT_IN = Path(__file__).with_name("endpoints.toml")
Kind = Literal["openai", "anthropic", "vllm"]
KINDS: tuple[Kind, ...] = ("openai", "anthropic", "vllm")
ENDPOINT_NAME = re.compile(r"[a-z][a-z0-9_-]*")  # no dot: a dotted name before ":" is a module (a policy class)
ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Endpoint(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """One place models are served. ``url`` empty: the provider's own (the engine's three)."""

    kind: Kind
    url: str = ""
    url_env: str | None = None  # an environment variable that replaces ``url`` when set
    key_env: str | None = None  # the environment variable holding the key; None: no key is needed
    rpm: float | None = None
    tpm: float | None = None
    client: Literal["lean", "sdk"] | None = None
    batches: bool = False  # it serves its kind's batch API (openai or anthropic): --batch sends its calls there
    # How it returns a call's token ids and log-probabilities (``wire.TokenForm``): vllm or llamacpp;
    # None: vLLM's form for kind vllm, none for the others.
    tokens: Literal["vllm", "llamacpp"] | None = None

    def __post_init__(self) -> None:
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {self.url!r}")
        for field in ("url_env", "key_env"):
            value = getattr(self, field)
            if value is not None and not ENV.fullmatch(value):
                raise ValueError(f"{field} must name an environment variable, got {value!r}")
        for field in ("rpm", "tpm"):
            value = getattr(self, field)
            if value is not None and value <= 0:
                raise ValueError(f"{field} must be above 0, got {value}")
        if self.batches and self.kind == "vllm":
            raise ValueError("batches = true needs kind openai or anthropic (the batch APIs the engine speaks)")
        if self.tokens is not None and self.kind == "anthropic":
            raise ValueError("tokens needs kind openai or vllm (an OpenAI-compatible vLLM or llama.cpp server)")
        if self.kind == "anthropic" and self.client == "lean":
            raise ValueError("the lean client speaks the OpenAI-compatible API only; an anthropic endpoint needs client = \"sdk\"")


# The engine's own providers, which the command line configures with its own flags.
ENGINE_ENDPOINTS = {
    "openai": Endpoint(kind="openai", url_env="OPENAI_BASE_URL", key_env="OPENAI_API_KEY", client="sdk"),
    "anthropic": Endpoint(kind="anthropic", url_env="ANTHROPIC_BASE_URL", key_env="ANTHROPIC_API_KEY", client="sdk"),
    "vllm": Endpoint(kind="vllm", url_env="VLLM_BASE_URL", key_env="VLLM_API_KEY", client="lean"),
}


def check_name(name: str) -> str:
    name = name.strip().lower()
    if not ENDPOINT_NAME.fullmatch(name):
        raise ValueError(f"an endpoint name is a lower-case word (letters, digits, - and _), got {name!r}")
    if name in ENGINE_ENDPOINTS:
        raise ValueError(f"{name} is the engine's own endpoint; set its address with --{name}-url")
    return name


def _entries(data: dict, where: str) -> dict[str, Endpoint]:
    table: dict[str, Endpoint] = {}
    for name, entry in data.items():
        try:
            if not isinstance(entry, dict):
                raise ValueError("expected a table [NAME] of kind, url, key_env, ...")
            if {"key", "api_key"} & set(entry):
                raise ValueError("keys are read from the environment only: name the variable with key_env")
            table[check_name(name)] = msgspec.convert(entry, Endpoint)
        except (msgspec.ValidationError, ValueError) as exc:
            raise ValueError(f"{where}, endpoint {name!r}: {exc}") from None
    return table


@cache
def built_in() -> dict[str, Endpoint]:
    """The entries of ``endpoints.toml``."""
    return _entries(tomllib.loads(BUILT_IN.read_text(encoding="utf-8")), f"the endpoint file {BUILT_IN}")


def read_endpoints(path: str | Path) -> dict[str, Endpoint]:
    """An endpoint file's ``[NAME]`` tables. Raises ValueError naming the file and the entry."""
    return _entries(read_toml(path, "endpoint file"), f"the endpoint file {path}")


def endpoint_entry(name: str, spec: str) -> tuple[str, Endpoint]:
    """One endpoint as the command line gives it: ``NAME`` and ``KIND,URL[,KEY_ENV]``. Raises ValueError."""
    text = f"{name}={spec}"
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) not in (2, 3) or not all(parts):
        raise ValueError(f"expected NAME=KIND,URL[,KEY_ENV] with KIND one of {', '.join(KINDS)}, got {text!r}")
    kind = next((k for k in KINDS if k == parts[0].lower()), None)
    if kind is None:
        raise ValueError(f"unknown kind {parts[0]!r} in {text!r}; use {', '.join(KINDS)}")
    try:
        return check_name(name), Endpoint(kind=kind, url=parts[1], key_env=parts[2] if len(parts) == 3 else None)
    except ValueError as exc:
        raise ValueError(f"{exc} (in {text!r})") from None


def known(extra: dict[str, Endpoint]) -> dict[str, Endpoint]:
    """Every endpoint a run can name: the engine's, the built-in entries, then ``extra`` over them."""
    return {**ENGINE_ENDPOINTS, **built_in(), **extra}
