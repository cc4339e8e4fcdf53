"""A stand-in for ``llama-server`` in router mode (``--models-preset FILE ... --port P ...``): the
local model server on that port, playing whatever model a request names, with llama.cpp's router
endpoints. ``POST /models/load`` starts a process for the model, as the router starts an instance (a
``llama-server`` of its own, in the router's process group, which it does not leave); ``GET /models``
lists the models loaded; ``POST /models/unload`` stops one. An instance does nothing; its command line
holds ``stand-in instance``, the model's name and the router's arguments, so that tests find it."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from aiohttp import web

from runners.fake_llm.server import FakeConfig, FakeServer


class Instances:
    def __init__(self, args: list[str]) -> None:
        self.args = args
        self.running: dict[str, subprocess.Popen] = {}

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/models", self.models), web.post("/models/load", self.load), web.post("/models/unload", self.unload)]

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": name, "status": {"value": "loaded"}} for name in self.running]})

    async def load(self, request: web.Request) -> web.Response:
        name = (await request.json())["model"]
        if name not in self.running:
            command = [sys.executable, "-c", "import time; time.sleep(10 ** 6)", "stand-in instance", "--alias", name, *self.args]
            self.running[name] = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        return web.json_response({"success": True})

    async def unload(self, request: web.Request) -> web.Response:
        instance = self.running.pop((await request.json())["model"], None)
        if instance is None:
            return web.json_response({"error": {"message": "model is not loaded"}}, status=400)
        instance.terminate()
        instance.wait()
        return web.json_response({"success": True})


async def serve(args: list[str]) -> None:
    server = FakeServer(FakeConfig(latency=0.01))
    server.app.add_routes(Instances(args).routes())
    await server.start("127.0.0.1", int(args[args.index("--port") + 1]))
    await asyncio.Event().wait()


def main(args: list[str]) -> int:
    asyncio.run(serve(args))
    return 0
