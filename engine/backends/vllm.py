"""A vLLM server's load: its /metrics read four times a second, and the in-flight cap of its model's
limiter kept near the server's batch size."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import Protocol

import anyio

from engine.backends.limiter import LimiterStats

# vLLM's queue, and llama.cpp's server's (its requests processing and deferred) read as the same two.
_METRIC = re.compile(
    r"^(vllm:num_requests_(?:running|waiting)|llamacpp:requests_(?:processing|deferred))(?:\{[^}]*\})?\s+([0-9.eE+-]+)", re.M
)
_LOAD_NAMES = {"vllm:num_requests_running": "running", "vllm:num_requests_waiting": "waiting",
               "llamacpp:requests_processing": "running", "llamacpp:requests_deferred": "waiting"}


def metrics_url(base_url: str) -> str:
    return re.sub(r"/v1/?$", "", base_url.rstrip("/")) + "/metrics"


def read_vllm_metrics(text: str) -> dict[str, float]:
    """Sum ``vllm:num_requests_running`` and ``..._waiting`` over their label sets."""
    found: dict[str, float] = {}
    for name, value in _METRIC.findall(text):
        key = _LOAD_NAMES[name]
        found[key] = found.get(key, 0.0) + float(value)
    return found


def vllm_headroom(max_num_seqs: int) -> int:
    """Calls beyond the batch kept waiting at the server, so a finished sequence is replaced at once."""
    return max(4, math.ceil(max_num_seqs / 8))


class ServerLoad:
    """The vLLM server's queue as its /metrics last said."""

    def __init__(self) -> None:
        self.running = 0.0
        self.waiting = 0.0
        self.samples = 0
        self.running_sum = 0.0
        self.error: str | None = None


class Steered(Protocol):
    """What ``poll_vllm`` steers: a limiter, or one server of several (``replicas.Replica``)."""

    @property
    def stats(self) -> LimiterStats: ...

    @property
    def cap(self) -> int: ...

    @property
    def running(self) -> int: ...

    def set_cap(self, value: int) -> None: ...


async def poll_vllm(
    url: str, limiter: Steered, load: ServerLoad, seqs: int, every: float = 0.25,
    heard: Callable[[bool], None] | None = None,
) -> None:
    """Keep calls in flight near the server's batch size: a few more than it runs at once, fewer if
    its own queue grows (another client shares it), more if it runs below its batch with nothing
    waiting. ``limiter`` is anything with ``cap``, ``running``, ``set_cap`` and ``stats`` (a
    limiter, or one server of several); ``heard`` learns whether each read was answered."""
    import aiohttp  # only a run that calls a vLLM server needs the HTTP client

    headroom = vllm_headroom(seqs)
    last_change = -math.inf
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
        while True:
            try:
                async with session.get(url) as response:
                    response.raise_for_status()
                    metrics = read_vllm_metrics(await response.text())
                load.error = None
            except (aiohttp.ClientError, TimeoutError, UnicodeDecodeError) as exc:
                load.error = f"{type(exc).__name__}: {exc}"
                metrics = {}
            if heard is not None:
                heard(load.error is None)
            if "running" in metrics:
                load.running, load.waiting = metrics["running"], metrics.get("waiting", 0.0)
                load.samples += 1
                load.running_sum += load.running
                # A change shows in the server's queue only once the calls sent before it are done:
                # change at most once per call's latency.
                stats = limiter.stats
                settle = max(1.0, stats.latency_sum / stats.calls if stats.calls else 1.0)
                now = time.monotonic()
                if now - last_change >= settle:
                    if load.waiting > 2 * headroom and limiter.running >= limiter.cap - headroom:
                        limiter.set_cap(max(seqs // 4, min(limiter.cap, limiter.running) - int(load.waiting - headroom)))
                        last_change = now
                    elif load.waiting == 0 and load.running < seqs and limiter.running >= limiter.cap:
                        limiter.set_cap(limiter.cap + int(seqs - load.running))
                        last_change = now
            await anyio.sleep(every)
