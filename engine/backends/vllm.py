"""A vLLM server's load: its /metrics read four times a second, and the in-flight cap of its model's
limiter kept near the server's batch size.

The names read (checked against vLLM's own /metrics, ``tests/data/vllm``): ``vllm:num_requests_running``,
``vllm:num_requests_waiting``, of the waiting ``vllm:num_requests_waiting_by_reason{reason="deferred"}``
(requests not yet ready to run: a reply schema being compiled), and ``vllm:kv_cache_usage_perc``; llama.cpp's
server's ``llamacpp:requests_processing`` and ``llamacpp:requests_deferred`` read as running and waiting.
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

import anyio

from engine.backends.limiter import LimiterStats

_METRIC = re.compile(r"^((?:vllm|llamacpp):[a-z_]+)(\{[^}]*\})?\s+([0-9.eE+-]+)\s*$", re.M)
_SUMMED = {"vllm:num_requests_running": "running", "vllm:num_requests_waiting": "waiting",
           "llamacpp:requests_processing": "running", "llamacpp:requests_deferred": "waiting"}
_DEFERRED = re.compile(r'reason="deferred"')


def metrics_url(base_url: str) -> str:
    return re.sub(r"/v1/?$", "", base_url.rstrip("/")) + "/metrics"


def read_vllm_metrics(text: str) -> dict[str, float]:
    """The server's load from its /metrics: ``running`` and ``waiting`` summed over their label sets
    (engines, models), ``deferred`` (of the waiting, those not ready to run) where it says, and
    ``kv_cache`` (the fullest engine's KV-cache usage, 0 to 1) where it says."""
    found: dict[str, float] = {}
    for name, labels, value in _METRIC.findall(text):
        key = _SUMMED.get(name)
        if key is None and name == "vllm:num_requests_waiting_by_reason" and _DEFERRED.search(labels):
            key = "deferred"
        if key is not None:
            found[key] = found.get(key, 0.0) + float(value)
        elif name == "vllm:kv_cache_usage_perc":
            found["kv_cache"] = max(found.get("kv_cache", 0.0), float(value))
    return found


def vllm_headroom(max_num_seqs: int) -> int:
    """Calls beyond the batch kept waiting at the server, so a finished sequence is replaced at once."""
    return max(4, math.ceil(max_num_seqs / 8))


class ServerLoad:
    """The vLLM server's queue as its /metrics last said, and how many of its requests are another
    client's (``others``)."""

    def __init__(self) -> None:
        self.running = 0.0
        self.waiting = 0.0
        self.deferred = 0.0
        self.others = 0.0
        self.kv_cache: float | None = None
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


class Steering:
    """The cap on our calls in flight to one server, from what its /metrics said.

    The server counts our calls among its running and waiting ones, except those it has not yet
    taken in (still being sent or read): so the requests that are another client's are at least
    its running and waiting less our calls in flight. That is ``others``, taken as the least over
    the last ``settle`` seconds, so that our calls already answered but still in a read of the
    metrics taken before, which look like another client's for a moment, do not count. The cap
    is the batch plus ``headroom`` (calls waiting to replace a finished sequence at once) less
    ``others``, at least a quarter of the batch: our own calls, queued, deferred (a reply schema
    compiling) or not yet counted, never lower it. (Raising it by our deferred calls, which hold no
    place in the batch yet, kept more schemas compiling at once on a CPU server and no more sequences
    running: ``benchmarks/bench_vllm.py``.)"""

    def __init__(self, seqs: int) -> None:
        self.seqs = seqs
        self.headroom = vllm_headroom(seqs)
        self._seen: deque[tuple[float, float]] = deque()  # (when, others) of the reads of the last settle seconds

    def cap(self, load: ServerLoad, ours: int, now: float, settle: float) -> int:
        seen = self._seen
        seen.append((now, max(0.0, load.running + load.waiting - ours)))
        while seen[0][0] < now - settle:
            seen.popleft()
        load.others = min(others for _, others in seen)
        return int(max(max(1, self.seqs // 4), self.seqs + self.headroom - load.others))


async def poll_vllm(
    url: str, limiter: Steered, load: ServerLoad, seqs: int, every: float = 0.25,
    heard: Callable[[bool], None] | None = None,
) -> None:
    """Keep calls in flight near the server's batch size (``Steering``). ``limiter`` is anything with
    ``cap``, ``running``, ``set_cap`` and ``stats`` (a limiter, or one server of several); ``heard``
    learns whether each read was answered."""
    import aiohttp  # only a run that calls a vLLM server needs the HTTP client

    steering = Steering(seqs)
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
                load.deferred, load.kv_cache = metrics.get("deferred", 0.0), metrics.get("kv_cache")
                load.samples += 1
                load.running_sum += load.running
                stats = limiter.stats
                settle = max(1.0, stats.latency_sum / stats.calls if stats.calls else 1.0)
                cap = steering.cap(load, limiter.running, time.monotonic(), settle)
                if cap != limiter.cap:
                    limiter.set_cap(cap)
            await anyio.sleep(every)
