"""``Servers``: the model servers of one run, started together, watched, stopped together (see
``engine.serving``)."""

from __future__ import annotations

from pathlib import Path

import anyio

from engine.serving.kinds import ServedModel
from engine.serving.process import ServeError, ServerProcess, free_port

WATCH_EVERY = 1.0  # seconds between looks at the servers' processes


class Servers:
    """``async with Servers(models, log_dir, slots=, context=) as urls``: ``urls`` maps each model
    name to its server's base URL (``http://127.0.0.1:PORT/v1``). ``watch()`` (run it in a task
    group inside) starts a server that died again, once."""

    def __init__(self, models: dict[str, ServedModel], log_dir: Path, *, slots: int, context: int) -> None:
        self.models = models
        self.log_dir = log_dir
        self.slots = slots
        self.context = context
        self.running: dict[str, ServerProcess] = {}
        self.restarts: dict[str, int] = {}

    async def __aenter__(self) -> dict[str, str]:
        try:
            for n, (name, model) in enumerate(sorted(self.models.items()), start=1):
                port = free_port()
                server = ServerProcess(model.label, model.command(port, self.slots, self.context), port,
                                       self.log_dir / f"server-{n}.log")
                server.start()  # from this thread: the server dies with it
                self.running[name] = server
            for server in self.running.values():
                await server.wait_ready()
        except BaseException:
            await self._stop_all()
            raise
        return {name: server.url + "/v1" for name, server in self.running.items()}

    async def watch(self) -> None:
        while True:
            await anyio.sleep(WATCH_EVERY)
            for name, server in self.running.items():
                if not server.alive() and self.restarts.get(name, 0) == 0:
                    self.restarts[name] = 1
                    server.start()  # the same port and command; its calls meanwhile fail and are retried
                    try:
                        await server.wait_ready()
                    except ServeError:
                        pass  # left dead: the calls to it fail, the run counts them and gives up

    async def _stop_all(self) -> None:
        with anyio.CancelScope(shield=True):
            for server in self.running.values():
                await server.stop()

    async def __aexit__(self, *exc_info: object) -> bool | None:
        await self._stop_all()
        return None
