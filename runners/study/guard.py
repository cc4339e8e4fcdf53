"""What a study server, reached by strangers, accepts: the Host and Origin it is served under, JSON
for every change, and a limited rate of joins.

- **Host** must be the study's public address (``--url``) or this machine at the server's port (a
  page that rebinds its own name to the server's address, DNS rebinding, sends its own name).
- A **POST** must come from one of those origins if the browser says where it comes from, and carry
  ``Content-Type: application/json`` (a form or ``text/plain`` request from another site, which a
  browser sends without asking, is refused; a JSON one needs a preflight this server never grants).
- **Joins** are limited per address and in all (token buckets): a script cannot make participants
  faster than a study fills. The address is the connection's, or behind a reverse proxy, when the
  study file says ``trust_proxy = true``, the last one in ``X-Forwarded-For`` (the one the proxy
  saw; those before it are the client's to write). Without that key the header is never read, so a
  client cannot pick its own address.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from runners.local_http import LOCAL_NAMES


def allowed_hosts(url: str | None, port: int) -> frozenset[str]:
    """The Host headers the server answers: ``url``'s and this machine's at ``port``."""
    hosts = {f"{name}:{port}" for name in LOCAL_NAMES}
    if url:
        parts = urlsplit(url)
        netloc = parts.netloc.lower()
        hosts.add(netloc)
        default = {"http": 80, "https": 443}.get(parts.scheme)
        if parts.port is None and default is not None:
            hosts.add(f"{netloc}:{default}")
    return frozenset(hosts)


def refusal(method: str, headers, hosts: frozenset[str]) -> str | None:
    """Why a request is refused (one line), or None to serve it."""
    host = (headers.get("Host") or "").strip().lower()
    if host not in hosts:
        return "this server answers only under its own address (Host)"
    if method.upper() not in ("GET", "HEAD"):
        origin = headers.get("Origin")
        if origin is not None and urlsplit(origin.strip()).netloc.lower() not in hosts:
            return "this server answers only its own pages (Origin)"
        kind = (headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            return "send JSON (Content-Type: application/json)"
    return None


def client_address(headers, remote: str | None, trust_proxy: bool) -> str:
    """The joiner's address for the rate limit (the module's docstring says which)."""
    if trust_proxy:
        forwarded = [part.strip() for part in ",".join(headers.getall("X-Forwarded-For", [])).split(",") if part.strip()]
        if forwarded:
            return forwarded[-1]
    return remote or "?"


class Bucket:
    """``rate`` events a minute, in bursts of at most ``rate``."""

    def __init__(self, rate: int) -> None:
        self.rate = rate
        self.tokens = float(rate)
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.rate, self.tokens + (now - self.at) * self.rate / 60)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class JoinLimit:
    """Joins a minute per address and in all."""

    MAX_ADDRESSES = 10_000  # buckets kept; the oldest go first

    def __init__(self, per_address: int, overall: int) -> None:
        self.per_address = per_address
        self.overall = Bucket(overall)
        self.buckets: dict[str, Bucket] = {}

    def allow(self, address: str) -> bool:
        bucket = self.buckets.pop(address, None) or Bucket(self.per_address)
        self.buckets[address] = bucket  # most recent last
        while len(self.buckets) > self.MAX_ADDRESSES:
            del self.buckets[next(iter(self.buckets))]
        return bucket.take() and self.overall.take()
