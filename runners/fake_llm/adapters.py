"""LoRA adapters loaded into the local model server while it runs, as vLLM's runtime endpoints
load them (``POST /v1/load_lora_adapter`` with ``lora_name`` and ``lora_path``,
``/v1/unload_lora_adapter`` with ``lora_name``): a request that names a loaded adapter is played
as the strategy its folder is named after (``adapters/noisy`` plays ``noisy``), so that which weights
answered shows in the play. ``served`` counts the requests each model name was asked for."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web


class Adapters:
    def __init__(self) -> None:
        self.loaded: dict[str, str] = {}  # adapter name -> the strategy it plays
        self.served: dict[str, int] = {}  # model name asked -> requests

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/v1/load_lora_adapter", self.load), web.post("/v1/unload_lora_adapter", self.unload)]

    def model(self, name: str) -> str:
        """The model a request for ``name`` is played as: a loaded adapter's strategy, else the name."""
        self.served[name] = self.served.get(name, 0) + 1
        return self.loaded.get(name, name)

    async def load(self, request: web.Request) -> web.Response:
        body = await request.json()
        name, path = body.get("lora_name"), body.get("lora_path")
        if not isinstance(name, str) or not isinstance(path, str):
            return web.json_response({"error": {"message": "lora_name and lora_path are required"}}, status=400)
        if name in self.loaded:  # as vLLM answers a name already loaded
            return web.json_response({"error": {"message": f"The lora adapter '{name}' has already been loaded."}}, status=400)
        self.loaded[name] = Path(path).name
        return web.Response(text=f"Success: LoRA adapter '{name}' added successfully.")

    async def unload(self, request: web.Request) -> web.Response:
        name = (await request.json()).get("lora_name")
        if self.loaded.pop(name, None) is None:
            return web.json_response({"error": {"message": f"The lora adapter '{name}' cannot be found."}}, status=404)
        return web.Response(text=f"Success: LoRA adapter '{name}' removed successfully.")
