"""One model served by several vLLM servers (data-parallel replicas): each call goes to the server
with the most room, and a server that goes away is taken out and its calls sent to the others.

- Each server's /metrics is read four times a second (``vllm.poll_vllm``), which steers how many
  calls that server is given (its ``cap``, near its batch size, as for one server); the model's
  limiter holds the sum of the caps of the servers in service.
- A call goes to the server in service with the most room: its cap (which leaves room for another
  client's requests on it) less the calls we have on it.
- A server that refuses a connection, drops one, or does not answer /metrics twice in a row is taken
  out: the call is sent to another server at once (not counted as a failed attempt) and no more go
  to it. A server out of service comes back when its /metrics answers again.

Hand-written: no client library spreads calls by a vLLM server's own queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp
import anyio

from engine.backends.base import Request
from engine.backends.lean import LeanBackend, LeanClient
from engine.backends.limiter import Limiter, LimiterStats
from engine.backends.vllm import ServerLoad, metrics_url, poll_vllm, vllm_headroom
from engine.backends.wire import Reply

OUT_AFTER = 2  # /metrics failures in a row that take a server out

# Failures that mean the server is not there (as opposed to a slow or erring reply).
GONE = (aiohttp.ClientConnectionError, ConnectionError)


def split_urls(text: str | None) -> list[str]:
    """``--vllm-url`` as a list: several servers are comma-separated."""
    return [url.strip() for url in (text or "").split(",") if url.strip()]


class Replica:
    """One server: its client, what its /metrics said, and our calls on it. Steered by
    ``poll_vllm`` as a limiter is (``cap``, ``running``, ``set_cap``, ``stats``)."""

    def __init__(self, replicas: ReplicaSet, url: str, client: LeanClient, cap: int) -> None:
        self.replicas = replicas
        self.url = url
        self.client = client
        self.load = ServerLoad()
        self.cap = cap
        self.running = 0
        self.calls = 0
        self.out: str | None = None  # why the server is out of service; None while in
        self.failures_in_row = 0

    @property
    def stats(self) -> LimiterStats:
        return self.replicas.limiter.stats

    def set_cap(self, value: int) -> None:
        self.cap = max(1, value)
        self.replicas.share_caps()

    def room(self) -> int:
        return self.cap - self.running

    def heard(self, answered: bool) -> None:
        """What a read of /metrics found: the server answered or not."""
        if answered:
            self.failures_in_row = 0
            if self.out is not None:
                self.out = None
                self.replicas.share_caps()
            return
        self.failures_in_row += 1
        if self.failures_in_row >= OUT_AFTER:
            self.replicas.take_out(self, self.load.error or "/metrics did not answer")


class ReplicaSet:
    """The servers of one model, and the model's limiter whose cap they share."""

    def __init__(self, urls: list[str], key: str | None, connections: int, timeout: float, seqs: int, limiter: Limiter) -> None:
        self.limiter = limiter
        self.seqs = seqs
        start = seqs + vllm_headroom(seqs)
        self.replicas = [Replica(self, url, LeanClient(url, key, connections, timeout), start) for url in urls]
        self.share_caps()

    def share_caps(self) -> None:
        serving = [r for r in self.replicas if r.out is None]
        self.limiter.set_cap(sum(r.cap for r in serving) if serving else 1)

    def take_out(self, replica: Replica, reason: str) -> None:
        if replica.out is None:
            replica.out = reason
            self.share_caps()

    def pick(self, tried: set[Replica]) -> Replica | None:
        """The server in service with the most room, not yet tried for this call; None if none."""
        serving = [r for r in self.replicas if r.out is None and r not in tried]
        return max(serving, key=Replica.room, default=None)

    def watch(self, task_group: anyio.abc.TaskGroup) -> None:
        for replica in self.replicas:
            task_group.start_soon(poll_vllm, metrics_url(replica.url), replica, replica.load, self.seqs, 0.25, replica.heard)

    async def close(self) -> None:
        for replica in self.replicas:
            await replica.client.close()

    def summary(self) -> list[dict[str, Any]]:
        return [
            {"url": r.url, "calls": r.calls, "out_of_service": r.out,
             "mean_running": round(r.load.running_sum / r.load.samples, 2) if r.load.samples else None}
            for r in self.replicas
        ]


class ReplicatedBackend(LeanBackend):
    """An OpenAI-compatible model on a ``ReplicaSet``."""

    async def _send(self, request: Request, call: str) -> tuple[Reply, Mapping[str, str]]:
        replicas: ReplicaSet = self.client
        body = self._body(request)
        tried: set[Replica] = set()
        while True:
            replica = replicas.pick(tried)
            if replica is None:
                out = "; ".join(f"{r.url}: {r.out}" for r in replicas.replicas if r.out)
                raise aiohttp.ClientConnectionError(f"no server in service ({out or 'all tried'})")
            replica.running += 1
            try:
                reply = await self._post(replica.client, body, call)
            except GONE as exc:
                if isinstance(exc, TimeoutError):
                    raise  # slow, not gone: retried as any timeout (a stalled server fails its /metrics)
                tried.add(replica)
                replicas.take_out(replica, f"{type(exc).__name__}: {exc}")
                continue
            finally:
                replica.running -= 1
            replica.calls += 1
            return await self._with_prompt_ids(replica.client, request, reply[0]), reply[1]
