"""What the project's local web servers (the viewer's, the seats') accept from a browser.

They listen on 127.0.0.1 for pages on this machine, and a page elsewhere must not reach them through
the browser:

- **Host** must name this machine and the server's port (``127.0.0.1:PORT``, ``localhost:PORT``,
  ``[::1]:PORT``): a web page that rebinds its own name to 127.0.0.1 (DNS rebinding) sends its own
  name, and is refused.
- A request that changes something (POST) must come from one of those origins if the browser says
  where it comes from (``Origin``), and carry JSON (``Content-Type: application/json``): a form or a
  ``text/plain`` request from another site, which browsers send without asking, is refused; a JSON
  one from another origin needs a preflight these servers never grant.

Hand-written: two header checks, the same for the standard library's server and aiohttp's.
"""

from __future__ import annotations

from urllib.parse import urlsplit

LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")


def local_host(host: str | None, port: int) -> bool:
    """Whether a ``Host`` header names this machine at ``port``."""
    if not host:
        return False
    name, _, given = host.strip().lower().rpartition(":")
    if not name or "]" in given:  # no port given
        name, given = host.strip().lower(), ""
    return name in LOCAL_NAMES and given == str(port)


def local_origin(origin: str | None, port: int) -> bool:
    """Whether an ``Origin`` header (if any) is a page of this machine at ``port``."""
    if origin is None:
        return True
    parts = urlsplit(origin.strip())
    return parts.scheme == "http" and local_host(parts.netloc, port)


def refusal(method: str, headers, port: int) -> str | None:
    """Why a request is refused (one line), or None to serve it. ``headers``: a mapping with ``get``."""
    if not local_host(headers.get("Host"), port):
        return "this server answers only pages of this machine (Host)"
    if method.upper() not in ("GET", "HEAD"):
        if not local_origin(headers.get("Origin"), port):
            return "this server answers only pages of this machine (Origin)"
        kind = (headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            return "send JSON (Content-Type: application/json)"
    return None
