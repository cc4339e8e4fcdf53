"""What a run's vLLM servers take, asked before any game: whether its replies fit their context (a
vLLM server refuses every call whose prompt and ``max_tokens`` pass its ``max_model_len``, a 400 for
each, every game a request error, and says that length in ``/v1/models``), and the field a reply
grammar goes in, by the version it says in ``/version`` (``engine.backends.wire.grammar_form``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from engine.serving.process import ServeError

ASK_TIMEOUT = 10.0  # seconds for a server's /v1/models or /version; a server that does not answer is left to the calls


def refusal(name: str, max_tokens: int, context: int, where: str, remedy: str = "") -> str:
    """The line that refuses a run whose ``max_tokens`` does not fit a server's ``context``."""
    return (f"{name}: --max-tokens {max_tokens} does not fit {where}, whose context is {context} tokens a sequence "
            f"(the prompt needs room too): give a smaller --max-tokens{remedy}")


async def _ask(url: str) -> object:
    """The JSON a server answers a GET of ``url`` with; None if it does not answer 200 in time."""
    import aiohttp

    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=ASK_TIMEOUT)) as session:
            async with session.get(url) as response:
                return await response.json(content_type=None) if response.status == 200 else None
    except (aiohttp.ClientError, TimeoutError, OSError, ValueError):
        return None


async def server_context(base_url: str, model: str) -> int | None:
    """The context ``base_url`` (``http://HOST:PORT/v1``) gives ``model`` (``max_model_len`` in its
    ``/v1/models``; the smallest given, if none is named ``model``), or None if it says none."""
    body = await _ask(base_url.rstrip("/") + "/models")
    entries = body.get("data") if isinstance(body, dict) else None
    lengths = {e.get("id"): e["max_model_len"] for e in entries or [] if isinstance(e, dict) and isinstance(e.get("max_model_len"), int)}
    if not lengths:
        return None
    return lengths.get(model, min(lengths.values()))


async def check_context(servers: Mapping[str, tuple[str, list[str]]], max_tokens: int) -> None:
    """``servers``: model name -> (its name on the server, the server URLs). ServeError, one line,
    if a server's context cannot hold ``max_tokens`` of reply."""
    for name, (model, urls) in servers.items():
        for url in urls:
            context = await server_context(url, model)
            if context is not None and max_tokens >= context:
                raise ServeError(refusal(name, max_tokens, context, f"the server at {url}"))


async def server_version(base_url: str) -> str | None:
    """The version ``base_url`` (``http://HOST:PORT/v1``) says it is (vLLM's ``/version``), or None."""
    body = await _ask(re.sub(r"/v1/?$", "", base_url.rstrip("/")) + "/version")
    version = body.get("version") if isinstance(body, dict) else None
    return version if isinstance(version, str) else None


async def server_versions(servers: Mapping[str, list[str]]) -> dict[str, str | None]:
    """``servers``: model name -> its vLLM servers' URLs; the version of each model's servers (that of
    the first, which a model's replicas share), None where it says none."""
    return {name: await server_version(urls[0]) for name, urls in servers.items() if urls}
