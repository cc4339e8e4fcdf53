"""Command-line flags for the model backends: how calls are made and paced.

The settings are saved with the run (``models.json``) and used again on ``--resume``. There, a
sampling flag (temperature, top-p, max tokens, seed, structured output, tokens) that differs from the saved
one is an error naming it, since it would change how the rest of the games are played; the pacing
and connection flags (rates, URLs, clients, limits, timeouts, attempts, prices) replace the saved ones,
and so does ``--cache`` with its companions (the response cache: ``engine.backends.cache``), and
``--batch`` with its (batch mode: ``engine.backends.batch``; a price file's ``[batch]`` factors too).
Endpoints given on a resume are added to the saved ones (a name given again replaces its entry).

Names of providers in ``--rpm``, ``--tpm``, ``--client`` and ``--shared-limit`` are checked once the
whole command line is read, since ``--endpoint``/``--endpoints`` may name them after.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import msgspec

from engine.backends import (
    CACHE_MODES, CLIENTS, ENDPOINT_NAME, PROVIDERS, BackendSettings, BatchSettings, CacheSettings, ModelOptions, endpoint_entry, known,
    price_entry, price_numbers, read_endpoints, read_price_file,
)

from runners.args import bounded, checked, key_value, pair


def _rate(text: str) -> tuple[str, float]:
    """``N`` (every provider), ``PROVIDER=N`` or ``PROVIDER:MODEL=N``."""
    form = "N, PROVIDER=N or PROVIDER:MODEL=N with N > 0"
    try:
        target, number = key_value(text, form, optional_key=True, last=True)
        value = float(number)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected {form}, got {text!r}")
    if target is None:
        return "*", value
    provider, colon, model = target.partition(":")
    provider = provider.strip().lower()
    if not ENDPOINT_NAME.fullmatch(provider):
        raise argparse.ArgumentTypeError(f"unknown provider {provider!r} in {text!r}; use {', '.join(PROVIDERS)} or an endpoint's name")
    return (f"{provider}:{model.strip()}" if colon else provider), value


def _provider(text: str) -> str:
    provider = text.strip().lower()
    if not ENDPOINT_NAME.fullmatch(provider):
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(PROVIDERS)} or an endpoint's name, got {text!r}")
    return provider


def _client_entry(provider: str, client: str) -> tuple[str, str]:
    """``PROVIDER=lean`` or ``PROVIDER=sdk``."""
    provider, client = provider.lower(), client.lower()
    if not ENDPOINT_NAME.fullmatch(provider) or client not in CLIENTS:
        raise ValueError(f"expected PROVIDER=lean or PROVIDER=sdk with PROVIDER one of {', '.join(PROVIDERS)} or an endpoint's name, got {provider}={client}")
    if provider == "anthropic" and client == "lean":
        raise ValueError("the lean client speaks the OpenAI-compatible API only; anthropic=sdk")
    return provider, client


_client = pair("PROVIDER=lean or PROVIDER=sdk", _client_entry)


def _positive(kind):
    return bounded(kind, 0, above=True, what="a number > 0")


_temperature = bounded(float, 0.0, 2.0, what="a temperature between 0 and 2")


def _cache_mode(text: str) -> str:
    mode = text.strip().lower().replace("_", "-")
    if mode not in CACHE_MODES:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(CACHE_MODES)}, got {text!r}")
    return mode


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _duration(text: str) -> float:
    """``never`` (infinity) or a positive number with a unit: ``90s``, ``30m``, ``12h``, ``7d``, ``2w``."""
    word = text.strip().lower()
    if word == "never":
        return float("inf")
    try:
        value = float(word[:-1]) * _UNITS[word[-1:]]
    except (KeyError, ValueError):
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a duration such as 12h, 7d or 2w (s, m, h, d, w), or never, got {text!r}")
    return value


_price = pair("MODEL=INPUT,CACHED,OUTPUT[,CACHE_WRITE] dollars per million tokens", price_entry)
_endpoint = pair("NAME=KIND,URL[,KEY_ENV]", endpoint_entry)
_endpoint_file = checked(read_endpoints)
_price_file = checked(lambda text: (lambda read: (price_numbers(read[0]), read[1]))(read_price_file(text)))


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags; each defaults to None (not given), so that a resume can tell what was given."""
    g = parser.add_argument_group(
        "model backends (policies openai:MODEL, anthropic:MODEL, vllm:MODEL or ENDPOINT:MODEL; keys from the environment: "
        "OPENAI_API_KEY, ANTHROPIC_API_KEY, an endpoint's key_env)"
    )
    g.add_argument("--endpoints", type=_endpoint_file, action="append", metavar="FILE", help="a TOML file of named endpoints over the built-in ones (engine/backends/endpoints.toml shows the form); saved with the run")
    g.add_argument("--endpoint", type=_endpoint, action="append", metavar="NAME=KIND,URL[,KEY_ENV]", help="one named endpoint: KIND openai (any OpenAI-compatible server), anthropic or vllm; the key is read from the variable KEY_ENV; saved with the run")
    g.add_argument("--rpm", type=_rate, action="append", metavar="[PROVIDER[:MODEL]=]N", help="requests per minute (default: learned from the provider's rate-limit headers)")
    g.add_argument("--tpm", type=_rate, action="append", metavar="[PROVIDER[:MODEL]=]N", help="tokens per minute (default: learned from the headers)")
    g.add_argument("--openai-url", metavar="URL", help="OpenAI-compatible base URL (default: OPENAI_BASE_URL or api.openai.com)")
    g.add_argument("--anthropic-url", metavar="URL", help="Anthropic base URL (default: ANTHROPIC_BASE_URL or api.anthropic.com)")
    g.add_argument("--vllm-url", metavar="URL", action="append", help="the vLLM server, e.g. http://HOST:8000/v1; several servers of one model (replicas): repeat the flag or separate with commas")
    g.add_argument("--vllm-max-seqs", type=_positive(int), metavar="S", help="the vLLM server's --max-num-seqs (default 256)")
    g.add_argument("--serve-slots", type=_positive(int), metavar="N", help="sequences at once of a server the engine starts itself (llamacpp:PATH.gguf, llamacpp:smollm2, vllm:MODEL with no --vllm-url; default 4)")
    g.add_argument("--serve-context", type=_positive(int), metavar="TOKENS", help="context of each of those sequences (default 8192; the server gets slots x this)")
    g.add_argument("--serve-timeout", type=_positive(float), metavar="SECONDS", help="how long such a server may take to start and answer its health check (default 900: a cold vLLM on a CPU takes minutes)")
    g.add_argument("--shared-limit", type=_provider, action="append", metavar="PROVIDER", help="the provider's models draw on one rate limit (one account's) instead of one each; --rpm/--tpm PROVIDER=N set it")
    g.add_argument("--client", type=_client, action="append", metavar="PROVIDER=lean|sdk", help="the lean aiohttp client or the provider's SDK (default: lean for vllm, the SDK for openai and anthropic; anthropic is SDK only)")
    g.add_argument("--max-in-flight", type=_positive(int), metavar="K", help="most calls in flight per model, OpenAI and Anthropic (default 512)")
    g.add_argument("--temperature", type=_temperature, metavar="X", help="sampling temperature (default 0)")
    g.add_argument("--top-p", type=bounded(float, 0.0, 1.0, above=True, what="a number above 0, at most 1"), metavar="P", help="nucleus sampling, OpenAI and vLLM (default: the provider's)")
    g.add_argument("--max-tokens", type=_positive(int), metavar="K", help=f"most output tokens per reply (default {ModelOptions().max_tokens}; reasoning models need more, 8192 say)")
    g.add_argument("--model-seed", type=int, metavar="S", help="sampling seed sent to providers that take one")
    g.add_argument("--structured", action="store_const", const=True, help="ask the backend for structured output (JSON following the reply schema)")
    g.add_argument("--tokens", action="store_const", const=True, help="bring back each model call's token ids and log-probabilities and keep them with each model turn of the transcripts (training trajectories; a vLLM or llama.cpp server only)")
    g.add_argument("--stream", action="store_const", const=True, help="receive replies as server-sent events (the same replies; usage from the stream's last event)")
    g.add_argument("--request-timeout", type=_positive(float), metavar="SEC", help="seconds per attempt (default 120)")
    g.add_argument("--max-attempts", type=_positive(int), metavar="K", help="attempts per call before the game is an infrastructure error (default 8)")
    g.add_argument("--prices", type=_price_file, metavar="FILE", help="a TOML price table over the built-in one (engine/backends/prices.toml shows the form)")
    g.add_argument("--price", type=_price, action="append", metavar="MODEL=IN,CACHED,OUT[,WRITE]", help="dollars per million tokens for one model (cache writes default to input)")
    g.add_argument("--cache", type=_cache_mode, metavar="off|on|read-only", help="the response cache: on answers a call made before from disk, at no cost, and keeps every new reply; read-only answers but keeps nothing (default off). Only calls the request fixes (temperature 0, or --model-seed) unless --cache-sampled; saved with the run")
    g.add_argument("--cache-sampled", action="store_const", const=True, help="with --cache: sampled calls too (temperature above 0 with no seed, and Anthropic's), answered with the same sample again")
    g.add_argument("--cache-dir", metavar="DIR", help="with --cache: the cache's folder, on a local disk (default $ASYMGAMES_CACHE, else ~/.cache/asymgames)")
    g.add_argument("--batch", action="store_const", const=True, help="send the calls of openai: and anthropic: models through the providers' batch APIs, at their batch price (half): slower, the same games; raises the default --concurrency to the batch size; saved with the run")
    g.add_argument("--batch-size", type=_positive(int), metavar="N", help="with --batch: most calls per batch (default 2000)")
    g.add_argument("--batch-wait", type=_positive(float), metavar="SEC", help="with --batch: a batch is sent SEC seconds after its first call, if not full before (default 5)")
    g.add_argument("--batch-poll", type=_positive(float), metavar="SEC", help="with --batch: a batch is first looked at SEC seconds after it is sent, then 1.5 times less often each time, at least every 120 s (default 10)")
    g.add_argument("--cache-expiry", type=_duration, metavar="AGE", help="with --cache: entries older than AGE (30m, 12h, 7d, 2w, or never) are misses (default never)")


def _per_provider(pairs: list[tuple[str, float]], names: dict, flag: str) -> dict[str, float]:
    table: dict[str, float] = {}
    for target, value in pairs:
        if target == "*":
            for provider in names:
                table.setdefault(provider, value)
        else:
            _known(target.partition(":")[0], names, flag)
            table[target] = value
    return table


def _known(provider: str, names: dict, flag: str) -> str:
    if provider not in names:
        raise ValueError(f"argument {flag}: unknown provider {provider!r}; use {', '.join(names)} (or define it with --endpoint)")
    return provider


# (flag, ModelOptions field, argparse dest): flags that change the replies, fixed for a run.
SAMPLING = (
    ("--temperature", "temperature", "temperature"), ("--top-p", "top_p", "top_p"),
    ("--max-tokens", "max_tokens", "max_tokens"), ("--model-seed", "seed", "model_seed"),
    ("--structured", "structured", "structured"), ("--tokens", "tokens", "tokens"),
)
# Flags of how calls are paced and sent: given on a resume, they replace the saved ones.
PACING = (("request_timeout", "timeout"), ("max_attempts", "max_attempts"))


def settings_from_args(args: argparse.Namespace, saved: BackendSettings | None = None) -> BackendSettings:
    """The run's model settings: the flags given, else the saved settings (on a resume), else the
    defaults. ValueError (its message names the flag) if a sampling flag contradicts the saved run."""
    base = saved or BackendSettings()
    options = base.options
    changes: dict = {}
    for flag, field, dest in SAMPLING:
        given = getattr(args, dest, None)
        if given is None:
            continue
        have = getattr(options, field)
        if saved is not None and given != have:
            shown = "not set" if have is None else have
            raise ValueError(
                f"argument {flag}: the run being resumed was played with {field} {shown}, got {given}; "
                "a run keeps its sampling settings (start a new run to change them)"
            )
        changes[field] = given
    for dest, field in PACING:
        given = getattr(args, dest, None)
        if given is not None:
            changes[field] = given
    fields: dict = {"options": msgspec.structs.replace(options, **changes)}
    endpoints = dict(base.endpoints)
    for table in args.endpoints or []:
        endpoints.update(table)
    endpoints.update(dict(args.endpoint or []))
    if endpoints != base.endpoints:
        fields["endpoints"] = endpoints
    names = known(endpoints)
    if args.rpm:
        fields["rpm"] = _per_provider(args.rpm, names, "--rpm")
    if args.tpm:
        fields["tpm"] = _per_provider(args.tpm, names, "--tpm")
    urls = {p: u for p, u in (("openai", args.openai_url), ("anthropic", args.anthropic_url), ("vllm", ",".join(args.vllm_url or ()))) if u}
    if urls:
        fields["urls"] = {**base.urls, **urls}
    for provider in [*(args.shared_limit or []), *(p for p, _ in args.client or [])]:
        _known(provider, names, "--shared-limit" if provider in (args.shared_limit or []) else "--client")
    for provider, client in args.client or []:
        if client == "lean" and names[provider].kind == "anthropic":
            raise ValueError(f"argument --client: the lean client speaks the OpenAI-compatible API only; {provider}=sdk")
    if args.shared_limit:
        fields["shared_limits"] = sorted(set(base.shared_limits) | set(args.shared_limit))
    if args.client:
        fields["clients"] = {**base.clients, **dict(args.client)}
    for dest in ("max_in_flight", "vllm_max_seqs", "serve_slots", "serve_context", "serve_timeout"):
        if getattr(args, dest, None) is not None:
            fields[dest] = getattr(args, dest)
    if getattr(args, "stream", None):
        fields["stream"] = True
    file_prices, batch_factors = args.prices or ({}, {})
    if file_prices or args.price:
        fields["prices"] = {**base.prices, **file_prices, **dict(args.price or [])}
    batch = _batch_settings(args, base.batch, batch_factors)
    if batch != base.batch:
        fields["batch"] = batch
    cache = _cache_settings(args, base.cache)
    if cache != base.cache:
        fields["cache"] = cache
    settings = msgspec.structs.replace(base, **fields)
    if saved is not None:
        _refuse_changes(saved, settings)
    return settings


# The flags that set each model setting, for the line that refuses a change on a resume.
SETTING_FLAGS = {
    "rpm": "--rpm", "tpm": "--tpm", "urls": "--openai-url/--anthropic-url/--vllm-url", "max_in_flight": "--max-in-flight",
    "vllm_max_seqs": "--vllm-max-seqs", "shared_limits": "--shared-limit", "prices": "--price/--prices",
    "clients": "--client", "stream": "--stream", "endpoints": "--endpoint/--endpoints", "serve_slots": "--serve-slots",
    "serve_context": "--serve-context", "cache": "--cache and its companions", "batch": "--batch and its companions",
}
OPTION_FLAGS = {"timeout": "--request-timeout", "max_attempts": "--max-attempts"}


def _refuse_changes(saved: BackendSettings, given: BackendSettings) -> None:
    """A resumed run keeps every model setting it was saved with (``models.json``): a flag given
    again with the saved value is fine, one that would change it is refused (ValueError naming it)."""
    changed = [SETTING_FLAGS[f] for f in SETTING_FLAGS if getattr(given, f) != getattr(saved, f)]
    changed += [OPTION_FLAGS[f] for f in OPTION_FLAGS if getattr(given.options, f) != getattr(saved.options, f)]
    if changed:
        raise ValueError(
            f"argument {changed[0]}: the run being resumed was saved with other model settings (its models.json); "
            "a run keeps them, so that its games are played and paced as it began (start a new run to change them)"
        )


def _batch_settings(args: argparse.Namespace, saved: BatchSettings, factors: dict[str, float]) -> BatchSettings:
    """``--batch`` and its companions over the saved settings (a price file's ``[batch]`` factors
    too). ValueError for a companion with batch mode off."""
    given: dict[str, Any] = {"size": getattr(args, "batch_size", None), "wait": getattr(args, "batch_wait", None), "poll": getattr(args, "batch_poll", None)}
    given = {k: v for k, v in given.items() if v is not None}
    enabled = bool(getattr(args, "batch", None)) or saved.enabled
    if given and not enabled:
        flag = {"size": "--batch-size", "wait": "--batch-wait", "poll": "--batch-poll"}[next(iter(given))]
        raise ValueError(f"argument {flag}: batch mode is off; give it with --batch")
    if "poll" in given:
        given["poll_max"] = max(given["poll"], BatchSettings().poll_max)
    if factors:
        given["factors"] = {**saved.factors, **factors}
    return msgspec.structs.replace(saved, enabled=enabled, **given)


def _cache_settings(args: argparse.Namespace, saved: CacheSettings) -> CacheSettings:
    """``--cache`` and its companions: given ``--cache``, what the flags say (the others at their
    defaults); else the companions over the saved settings. ValueError for a companion with the cache off."""
    mode = getattr(args, "cache", None)
    directory = getattr(args, "cache_dir", None)
    given: dict[str, Any] = {"sampled": getattr(args, "cache_sampled", None), "expiry": getattr(args, "cache_expiry", None),
             "directory": None if directory is None else str(Path(directory).expanduser().absolute())}  # as saved: from anywhere
    given = {k: v for k, v in given.items() if v is not None}
    if "expiry" in given and given["expiry"] == float("inf"):
        given["expiry"] = None
    cache = CacheSettings(mode=mode, **given) if mode is not None else msgspec.structs.replace(saved, **given)
    if given and cache.mode == "off":
        flag = {"sampled": "--cache-sampled", "directory": "--cache-dir", "expiry": "--cache-expiry"}[next(iter(given))]
        raise ValueError(f"argument {flag}: the response cache is off; give it with --cache on or --cache read-only")
    return cache
