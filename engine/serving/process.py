"""One model server the engine starts for a run: started on 127.0.0.1 at a free port, its output
written to a log file, ready when its health URL answers 200, stopped when the run ends however it
ends, and never outliving the engine: neither the server nor any process it spawned (vLLM's
engine core and workers, the model instances of llama-server's router mode).

The engine starts a small watchdog (``engine.serving.watchdog``), which starts the server in a
process group of its own and stops that whole group when told to or when the engine dies. It is
hand-written around ``subprocess.Popen`` rather than anyio's process API: the watchdog must be asked
to hear of its parent's death (Linux's ``PR_SET_PDEATHSIG``, set between fork and exec, which anyio
does not offer), so that a run killed with SIGKILL leaves nothing behind. The signal follows the
thread that started the child, so servers are started from the event loop's own thread, never a
worker's.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import anyio

PR_SET_PDEATHSIG = 1
READY_TIMEOUT = 900.0  # seconds a server may take to load its model and answer its health URL (a cold vLLM on a CPU: 4-11 min)
STOP_TIMEOUT = 10.0  # seconds a server has to exit after SIGTERM before it and its processes are killed
WATCHDOG = Path(__file__).with_name("watchdog.py")


class ServeError(Exception):
    """A server could not be started; the message says why in one line."""


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent(parent: int) -> None:
    """In the watchdog, before exec: SIGTERM when the engine dies (it then stops the server's whole
    group), and exit at once if the engine already has."""
    import ctypes  # here, in the child: a run that starts no server never loads it

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(1)


ERROR_LINE = re.compile(r"\b(\w*Error|error)\b[:,]")  # "ValueError: ...", "Value error, ...", "error: ..."


def last_lines(path: Path, count: int = 3) -> str:
    """What a failed server said of why, on one line: its last line that names an error (vLLM's
    traceback ends with the pydantic page to visit, after the reason), else its last lines."""
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    errors = [line for line in lines if ERROR_LINE.search(line)]
    if errors:
        return errors[-1][:400]
    return " | ".join(lines[-count:])[-400:]


class ServerProcess:
    """``command`` run as a server reachable at ``http://127.0.0.1:{port}``; ``health`` is the path
    that answers 200 once it serves."""

    def __init__(self, name: str, command: list[str], port: int, log: Path, *, health: str = "/health",
                 env: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.command = command
        self.port = port
        self.log = log
        self.health = health
        self.env = env
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the server behind its watchdog (a server program that cannot be run makes the
        watchdog exit at once with status 127, saying why in the log)."""
        parent = os.getpid()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        watched = [sys.executable, "-I", str(WATCHDOG), str(parent), str(STOP_TIMEOUT), *self.command]
        with self.log.open("ab") as log:
            try:
                self.process = subprocess.Popen(
                    watched, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    preexec_fn=lambda: _die_with_parent(parent), env=None if self.env is None else dict(self.env),
                )
            except OSError as exc:
                raise ServeError(f"cannot start {self.name} ({self.command[0]}): {exc.strerror or exc}") from None

    async def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        """Until the health URL answers 200; ServeError if the server exits first or takes too long."""
        import aiohttp

        assert self.process is not None
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
            while True:
                status = self.process.poll()
                if status is not None:
                    raise ServeError(f"{self.name} exited with status {status} before it served: {last_lines(self.log)} "
                                     f"(its log: {self.log})")
                try:
                    async with session.get(self.url + self.health) as response:
                        if response.status == 200:
                            return
                except (aiohttp.ClientError, TimeoutError, OSError):
                    pass
                if time.monotonic() > deadline:
                    await self.stop()
                    raise ServeError(f"{self.name} did not answer {self.health} within {timeout:.0f} s (--serve-timeout; its log: {self.log})")
                await anyio.sleep(0.2)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    async def stop(self) -> int | None:
        """SIGTERM to the watchdog, which stops the server's group (SIGKILL after ``STOP_TIMEOUT``);
        SIGKILL to the watchdog itself if it has not exited a while after that. The exit status
        (None if never started)."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            process.terminate()
            with anyio.move_on_after(STOP_TIMEOUT + 5):
                while process.poll() is None:
                    await anyio.sleep(0.05)
            if process.poll() is None:
                process.kill()
                process.wait()
        return process.returncode
