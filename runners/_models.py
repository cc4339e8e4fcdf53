"""Command-line flags for the model backends (how calls are made and paced; not saved with the run)."""

from __future__ import annotations

import argparse

from engine.backends import PROVIDERS, BackendSettings, ModelOptions
from engine.backends.tokens import parse_price

from ._args import bounded


def _rate(text: str) -> tuple[str, float]:
    """``N`` (every provider), ``PROVIDER=N`` or ``PROVIDER:MODEL=N``."""
    target, sep, number = text.rpartition("=")
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected N, PROVIDER=N or PROVIDER:MODEL=N with N > 0, got {text!r}")
    provider = target.partition(":")[0].strip().lower()
    if sep and provider not in PROVIDERS:
        raise argparse.ArgumentTypeError(f"unknown provider {provider!r} in {text!r}; use {', '.join(PROVIDERS)}")
    if sep and ":" in target:
        target = f"{provider}:{target.partition(':')[2].strip()}"
    return (target if sep else "*"), value


def _positive(kind):
    return bounded(kind, 0, above=True, what="a number > 0")


_temperature = bounded(float, 0.0, 2.0, what="a temperature between 0 and 2")


def _price(text: str):
    try:
        return parse_price(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group(
        "model backends (policies openai:MODEL, anthropic:MODEL, vllm:MODEL; keys from OPENAI_API_KEY, ANTHROPIC_API_KEY)"
    )
    g.add_argument("--rpm", type=_rate, action="append", default=[], metavar="[PROVIDER[:MODEL]=]N", help="requests per minute (default: learned from the provider's rate-limit headers)")
    g.add_argument("--tpm", type=_rate, action="append", default=[], metavar="[PROVIDER[:MODEL]=]N", help="tokens per minute (default: learned from the headers)")
    g.add_argument("--openai-url", metavar="URL", help="OpenAI-compatible base URL (default: OPENAI_BASE_URL or api.openai.com)")
    g.add_argument("--anthropic-url", metavar="URL", help="Anthropic base URL (default: ANTHROPIC_BASE_URL or api.anthropic.com)")
    g.add_argument("--vllm-url", metavar="URL", help="the vLLM server, e.g. http://HOST:8000/v1")
    g.add_argument("--vllm-max-seqs", type=_positive(int), default=256, metavar="S", help="the vLLM server's --max-num-seqs (default 256)")
    g.add_argument("--max-in-flight", type=_positive(int), default=512, metavar="K", help="most calls in flight per model, OpenAI and Anthropic (default 512)")
    g.add_argument("--temperature", type=_temperature, default=0.0, metavar="X", help="sampling temperature (default 0)")
    g.add_argument("--top-p", type=bounded(float, 0.0, 1.0, above=True, what="a number above 0, at most 1"), metavar="P", help="nucleus sampling, OpenAI and vLLM (default: the provider's)")
    g.add_argument("--max-tokens", type=_positive(int), default=4096, metavar="K", help="most output tokens per reply (default 4096)")
    g.add_argument("--model-seed", type=int, metavar="S", help="sampling seed sent to providers that take one")
    g.add_argument("--structured", action="store_true", help="ask the backend for structured output (JSON following the reply schema)")
    g.add_argument("--request-timeout", type=_positive(float), default=120.0, metavar="SEC", help="seconds per attempt (default 120)")
    g.add_argument("--max-attempts", type=_positive(int), default=8, metavar="K", help="attempts per call before the game is an infrastructure error (default 8)")
    g.add_argument("--price", type=_price, action="append", default=[], metavar="MODEL=IN,CACHED,OUT", help="dollars per million tokens, for cost totals")


def _per_provider(pairs: list[tuple[str, float]]) -> dict[str, float]:
    table: dict[str, float] = {}
    for target, value in pairs:
        if target == "*":
            for provider in PROVIDERS:
                table.setdefault(provider, value)
        else:
            table[target] = value
    return table


def settings_from_args(args: argparse.Namespace) -> BackendSettings:
    options = ModelOptions(
        temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens, seed=args.model_seed,
        structured=args.structured, timeout=args.request_timeout, max_attempts=args.max_attempts,
    )
    urls = {p: u for p, u in (("openai", args.openai_url), ("anthropic", args.anthropic_url), ("vllm", args.vllm_url)) if u}
    return BackendSettings(
        options=options, rpm=_per_provider(args.rpm), tpm=_per_provider(args.tpm), urls=urls,
        max_in_flight=args.max_in_flight, vllm_max_seqs=args.vllm_max_seqs, prices=dict(args.price),
    )
