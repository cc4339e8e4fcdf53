"""``Servers``: the model servers of one run, started together, watched, stopped together (see
``engine.serving``)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from engine.serving.kinds import ServedModel
from engine.serving.process import READY_TIMEOUT, ServeError, ServerProcess, free_port

WATCH_EVERY = 1.0  # seconds between looks at the servers' processes


class Servers:
    """``async with Servers(models, log_dir, slots=, context=) as urls``: ``urls`` maps each model
    name to its server's base URL (``http://127.0.0.1:PORT/v1``). ``watch()`` (run it in a task
    group inside) starts a server that died again, once. ``ready_timeout``: seconds each server
    may take to answer its health URL; ``starting(now)`` says which are still starting (the status
    line's)."""

    def __init__(self, models: dict[str, ServedModel], log_dir: Path, *, slots: int, context: int,
                 ready_timeout: float = READY_TIMEOUT) -> None:
        self.models = models
        self.log_dir = log_dir
        self.slots = slots
        self.context = context
        self.ready_timeout = ready_timeout
        self.running: dict[str, ServerProcess] = {}
        self.restarts: dict[str, int] = {}
        self._starting: dict[str, float] = {}  # name -> when its server was started, until it is ready

    async def __aenter__(self) -> dict[str, str]:
        try:
            for n, (name, model) in enumerate(sorted(self.models.items()), start=1):
                port = free_port()
                server = ServerProcess(model.label, model.command(port, self.slots, self.context), port,
                                       self.log_dir / f"server-{n}.log", env=model.environment(self.slots, self.context))
                server.start()  # from this thread: the server dies with it
                self.running[name] = server
                self._starting[name] = time.monotonic()
            for name, server in self.running.items():
                await server.wait_ready(self.ready_timeout)
                self._starting.pop(name, None)
        except BaseException:
            await self._stop_all()
            raise
        return {name: server.url + "/v1" for name, server in self.running.items()}

    def starting(self, now: float) -> list[str]:
        """A line for each server not yet serving: what it is, for how long it has been starting, its log."""
        return [f"starting the {self.running[name].name}: {now - since:.0f} s of up to {self.ready_timeout:.0f} "
                f"(its log: {self.running[name].log})" for name, since in self._starting.items()]

    async def watch(self) -> None:
        while True:
            await anyio.sleep(WATCH_EVERY)
            for name, server in self.running.items():
                if not server.alive() and self.restarts.get(name, 0) == 0:
                    self.restarts[name] = 1
                    server.start()  # the same port and command; its calls meanwhile fail and are retried
                    self._starting[name] = time.monotonic()
                    try:
                        await server.wait_ready(self.ready_timeout)
                    except ServeError:
                        pass  # left dead: the calls to it fail, the run counts them and gives up
                    finally:
                        self._starting.pop(name, None)

    async def _stop_all(self) -> None:
        with anyio.CancelScope(shield=True):
            for server in self.running.values():
                await server.stop()

    async def __aexit__(self, *exc_info: object) -> bool | None:
        await self._stop_all()
        return None
