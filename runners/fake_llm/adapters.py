"""LoRA adapters loaded into the local model server while it runs, as vLLM's runtime endpoints
load them (``POST /v1/load_lora_adapter`` with ``lora_name`` and ``lora_path``,
``/v1/unload_lora_adapter`` with ``lora_name``): a request that names a loaded adapter is played
as the strategy its folder is named after (``adapters/noisy`` plays ``noisy``), so that which weights
answered shows in the play. ``served`` counts the requests each model name was asked for.

As vLLM 0.32 does: a path that is no adapter folder (no ``adapter_config.json``) is a 404 naming it,
a name already loaded a 400; a server started without ``--enable-lora`` (``enabled=False``) answers
every load with a 500 saying so, and one without ``VLLM_ALLOW_RUNTIME_LORA_UPDATING``
(``endpoints=False``) has neither route. ``/v1/models`` lists the loaded adapters after the base
models (``cards``)."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from runners.fake_llm.vllm_checks import model_permission


def error(status: int, kind: str, message: str) -> web.Response:
    """vLLM's error object."""
    return web.json_response({"error": {"message": message, "type": kind, "param": None, "code": status}}, status=status)


class Adapters:
    def __init__(self, endpoints: bool = True, enabled: bool = True) -> None:
        self.endpoints, self.enabled = endpoints, enabled
        self.loaded: dict[str, str] = {}  # adapter name -> the strategy it plays
        self.paths: dict[str, str] = {}  # adapter name -> its folder, as loaded
        self.served: dict[str, int] = {}  # model name asked -> requests

    def routes(self) -> list[web.RouteDef]:
        if not self.endpoints:
            return []
        return [web.post("/v1/load_lora_adapter", self.load), web.post("/v1/unload_lora_adapter", self.unload)]

    def cards(self, base: str) -> list[dict]:
        """The loaded adapters as ``/v1/models`` lists them, children of the model ``base``."""
        return [{"id": name, "object": "model", "created": 0, "owned_by": "vllm", "root": path, "parent": base,
                 "max_model_len": None, "permission": [model_permission()]} for name, path in self.paths.items()]

    def model(self, name: str) -> str:
        """The model a request for ``name`` is played as: a loaded adapter's strategy, else the name."""
        self.served[name] = self.served.get(name, 0) + 1
        return self.loaded.get(name, name)

    async def load(self, request: web.Request) -> web.Response:
        body = await request.json()
        name, path = body.get("lora_name"), body.get("lora_path")
        if not isinstance(name, str) or not isinstance(path, str):
            return error(400, "InvalidUserInput", "Both 'lora_name' and 'lora_path' must be provided.")
        if name in self.loaded:  # as vLLM answers a name already loaded
            return error(400, "InvalidUserInput", f"The lora adapter '{name}' has already been loaded. If you want to load "
                         "the adapter in place, set 'load_inplace' to True.")
        if not self.enabled:
            return error(500, "InternalServerError", "LoRA is not enabled. Use --enable-lora to enable LoRA.")
        if not (Path(path) / "adapter_config.json").is_file():
            return error(404, "NotFoundError", f"Loading lora {name} failed: No adapter found for {path}")
        self.loaded[name] = Path(path).name
        self.paths[name] = path
        return web.Response(text=f"Success: LoRA adapter '{name}' added successfully.")

    async def unload(self, request: web.Request) -> web.Response:
        name = (await request.json()).get("lora_name")
        self.paths.pop(name, None)
        if self.loaded.pop(name, None) is None:
            return error(404, "NotFoundError", f"The lora adapter '{name}' cannot be found.")
        return web.Response(text=f"Success: LoRA adapter '{name}' removed successfully.")
