"""The viewer served on 127.0.0.1, live: the page, the run as JSON (``/run.json``, read again as far
as the run's files grew) and each game's detail (``/game/ID.json``), built when asked. The standard
library's threading HTTP server is enough for one reader on this machine; the index is shared
under a lock. It queues up to 128 connections not yet accepted (a page opening many games at once), and
a client that hangs up before its answer is written is no error.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from runners.local_http import refusal
from runners.view.index import RunIndex
from runners.view.page import detail_or_failure, page_html


class ViewerServer(ThreadingHTTPServer):
    request_queue_size = 128  # the listen backlog (the standard library's 5 drops a burst of readers)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # the reader hung up (a closed tab, a reload)
            return
        super().handle_error(request, client_address)


def make_server(index: RunIndex, port: int = 8000, host: str = "127.0.0.1") -> ViewerServer:
    lock = threading.Lock()
    encoded: dict[tuple, bytes] = {}  # the run as JSON, by what it was made from: one entry

    def run_data() -> dict:
        with lock:
            index.refresh()
            return index.data()

    def run_json() -> bytes:
        """The run as JSON, encoded again only when the run's files have grown (many readers at once
        share one encoding)."""
        with lock:
            index.refresh()
            version = index.version()
            if version not in encoded:
                encoded.clear()
                encoded[version] = json.dumps(index.data(), ensure_ascii=False, separators=(",", ":")).encode()
            return encoded[version]

    class Handler(BaseHTTPRequestHandler):
        server: ViewerServer

        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            refused = refusal("GET", self.headers, self.server.server_port)
            if refused is not None:
                self.send_error(403, refused)
                return
            path = self.path.split("?", 1)[0]
            game = path[6:-5] if path.startswith("/game/") and path.endswith(".json") else ""
            if path in ("/", "/index.html"):
                self._send(page_html(run_data(), {}, served=True).encode(), "text/html; charset=utf-8")
            elif path == "/run.json":
                self._send(run_json(), "application/json")
            elif game.isascii() and game.isdigit():  # not str.isdigit alone: it takes "²", which int() refuses
                with lock:
                    index.refresh()
                    detail = detail_or_failure(index, int(game))
                if detail is None:
                    self.send_error(404, "no such game")
                else:
                    self._send(json.dumps(detail, ensure_ascii=False, separators=(",", ":")).encode(), "application/json")
            else:
                self.send_error(404)

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: the page polls
            pass

    return ViewerServer((host, port), Handler)
