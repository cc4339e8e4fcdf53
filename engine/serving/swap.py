"""New LoRA weights into a running server, without restarting it: each version of a trainer's
adapter is loaded under a name of its own, which a request names in its ``model`` field, and
unloaded when no game uses it any more (``engine.rollouts.weights`` decides when).

- ``VllmAdapters``: vLLM's own runtime adapter endpoints, ``POST /v1/load_lora_adapter`` and
  ``/v1/unload_lora_adapter``, on a server started with ``--enable-lora`` and the environment
  variable ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`` (a server without either is refused when
  the base model is loaded, in one line). vLLM reads the PEFT folder itself.
- ``LlamaCppRouter``: llama.cpp's server cannot load an adapter file into a running model: its
  ``/lora-adapters`` endpoints and a request's ``lora`` field only set the scales of the adapters
  given with ``--lora`` at its start. What it can do is its router mode (``llama-server`` started
  with no model and a ``--models-preset`` file): the router loads and unloads model instances while
  it runs (``POST /models/load``, ``/models/unload``, ``GET /models?reload=1`` to read the preset file
  again) and sends each request to the instance its ``model`` field names. A version is a preset of
  the base model with the version's adapter (``lora``), converted to GGUF and checked against the
  model first (``engine.serving.lora``); each instance is a ``llama-server`` process of its own with
  the router's ``--parallel``, ``-c`` and ``--metrics``. Version 0 is the base model without an
  adapter unless one is given. The router is started as every server the engine starts is
  (``engine.serving.process``): behind the watchdog, in a process group of its own, which the
  router's instances share, so that they are stopped with it however the engine ends, ``kill -9``
  included.

``adapter_digest`` names a version's content: the SHA-256 of its files.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path
from typing import Any, Protocol

import anyio

from engine.serving.lora import PEFT_FILES, gguf_lora
from engine.serving.process import ServeError, ServerProcess, free_port

LOAD_TIMEOUT = 300.0  # seconds a new version may take to load (a router starts an instance: a model load)
PRESET_FILE = "presets.ini"


def adapter_digest(adapter: Path) -> str:
    """The SHA-256 of an adapter's content: a PEFT folder's ``adapter_config.json`` and
    ``adapter_model.safetensors`` (each name, then its bytes), or a GGUF LoRA file's bytes.
    ServeError when they are missing."""
    digest = hashlib.sha256()
    files = [adapter] if adapter.suffix.lower() == ".gguf" else [adapter / name for name in PEFT_FILES]
    for path in files:
        try:
            with path.open("rb") as f:
                digest.update(path.name.encode() + b"\0")
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise ServeError(f"cannot read the adapter {adapter}: {exc.strerror or exc}") from None
    return digest.hexdigest()


class AdapterServer(Protocol):
    """A running server that takes new adapters by name."""

    async def load(self, name: str, adapter: Path | None) -> str:
        """Serve ``adapter`` (a PEFT folder; None: the base model alone) as the model ``name``; the
        name requests give it (``name``, or the base model's own). ServeError, one line, if it cannot."""

    async def unload(self, name: str) -> None:
        """Stop serving ``name`` (a version no game uses any more)."""


class Refused(ServeError):
    """A server's answer other than 200: its ``status`` and ``body``."""

    def __init__(self, message: str, status: int, body: str) -> None:
        super().__init__(message)
        self.status, self.body = status, body


async def _request(url: str, body: dict[str, Any] | None, what: str, timeout: float = LOAD_TIMEOUT) -> bytes:
    """POST ``body`` to ``url`` (None: a GET) and the answer's bytes; ServeError naming ``what`` for
    any answer but 200 (``Refused``) or a connection that fails."""
    import aiohttp

    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            async with session.request("GET" if body is None else "POST", url, json=body) as response:
                data = await response.read()
                if response.status != 200:
                    text = data.decode(errors="replace")
                    raise Refused(f"{what}: the server answered {response.status}: {text[:300]}", response.status, text)
                return data
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise ServeError(f"{what}: {exc}") from None


class VllmAdapters:
    """A vLLM server at ``url`` (``http://HOST:PORT``, with or without ``/v1``) started with
    ``--enable-lora`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``, serving the base model as
    ``model`` (which no adapter needs loading for, nor unloading).

    Loading the base model (the first version, usually) asks the server nothing but whether it can
    take adapters later: a load of a folder that cannot exist (``PROBE_PATH``), which vLLM answers
    with a 404 of its own where it can, a 500 saying LoRA is not enabled where it was started
    without ``--enable-lora``, and a bare 404 (the route not there) without the variable. The two
    misconfigurations are a ServeError naming what is missing, before any game rather than at
    the first swap."""

    PROBE_PATH = "/proc/no-adapter"  # absolute (vLLM fetches nothing for it), and nothing can be made there

    def __init__(self, url: str, model: str) -> None:
        self.root = url.rstrip("/").removesuffix("/v1")
        self.model = model

    async def load(self, name: str, adapter: Path | None) -> str:
        if adapter is None:
            await self._post("/v1/load_lora_adapter", {"lora_name": name, "lora_path": self.PROBE_PATH},
                             f"asking the vLLM server at {self.root} whether it takes adapters", probe=True)
            return self.model
        await self._post("/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(adapter.resolve())},
                         f"loading the adapter {adapter} as {name}")
        return name

    async def unload(self, name: str) -> None:
        if name != self.model:
            await self._post("/v1/unload_lora_adapter", {"lora_name": name}, f"unloading {name}")

    async def _post(self, path: str, body: dict[str, Any], what: str, probe: bool = False) -> None:
        """POST ``body``; ServeError, one line, for an answer but 200 (a probe's: only for a server
        that cannot take adapters), saying how to start the server where that is the reason."""
        try:
            await _request(self.root + path, body, what)
        except Refused as exc:
            if exc.status == 404 and '"error"' not in exc.body:  # no such route (vLLM's own 404s are error objects)
                raise ServeError(f"{what}: the vLLM server has no {path}: start it with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True "
                                 "in its environment (and --enable-lora) to take adapters while it runs") from None
            if "--enable-lora" in exc.body:
                raise ServeError(f"{what}: the vLLM server was started without --enable-lora: start it with --enable-lora "
                                 "--max-loras 2 --max-lora-rank R (R: the adapters' rank or more) to take adapters while it runs") from None
            if not probe:
                raise


class LlamaCppRouter:
    """``llama-server`` in router mode, serving the GGUF ``model`` with the adapters loaded into it
    (``async with LlamaCppRouter(...) as router``; ``router.url`` is its base URL, ``/v1`` included).
    ``folder`` holds the preset file, each version's GGUF LoRA and the router's log; ``slots`` and
    ``context`` are each instance's ``--parallel`` and its context per slot."""

    def __init__(self, binary: Path, model: Path, folder: Path, *, slots: int = 4, context: int = 4096,
                 load_timeout: float = LOAD_TIMEOUT) -> None:
        self.binary, self.model, self.folder = binary, model, folder
        self.slots, self.context, self.load_timeout = slots, context, load_timeout
        self.presets: dict[str, str | None] = {}  # name -> its GGUF LoRA (None: the base model alone)
        self.process: ServerProcess | None = None

    @property
    def url(self) -> str:
        assert self.process is not None, "the router is not started"
        return self.process.url + "/v1"

    def _write_presets(self) -> None:
        lines = ["version = 1", ""]
        for name, lora in self.presets.items():
            lines += [f"[{name}]", f"model = {self.model}"] + ([f"lora = {lora}"] if lora else []) + [""]
        partial = self.folder / (PRESET_FILE + ".part")
        partial.write_text("\n".join(lines))
        partial.replace(self.folder / PRESET_FILE)

    async def __aenter__(self) -> LlamaCppRouter:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._write_presets()
        port = free_port()
        command = [str(self.binary), "--models-preset", str(self.folder / PRESET_FILE), "--models-max", "0",
                   "--no-models-autoload", "--host", "127.0.0.1", "--port", str(port), "--parallel", str(self.slots),
                   "-c", str(self.slots * self.context), "--metrics"]
        self.process = ServerProcess("llama.cpp router", command, port, self.folder / "router.log")
        self.process.start()
        try:
            await self.process.wait_ready()
        except BaseException:
            await self.process.stop()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.process is not None:
            with anyio.CancelScope(shield=True):
                for name in list(self.presets):  # the instances first: each is a process of its own
                    with anyio.move_on_after(15):
                        try:
                            await _request(self.url.removesuffix("/v1") + "/models/unload", {"model": name}, f"unloading {name}", 10)
                        except ServeError:
                            pass
                await self.process.stop()

    async def load(self, name: str, adapter: Path | None) -> str:
        """Serve the base model with ``adapter`` (a PEFT folder or a GGUF LoRA; None: none) as ``name``."""
        lora: str | None = None
        if adapter is not None:
            made = await anyio.to_thread.run_sync(gguf_lora, str(adapter), self.model)
            kept = self.folder / f"{name}.gguf"  # the version's own copy: the trainer may write the folder again
            shutil.copyfile(made, kept)
            lora = str(kept)
        self.presets[name] = lora
        self._write_presets()
        await self._get("/models?reload=1")
        await _request(self.url.removesuffix("/v1") + "/models/load", {"model": name}, f"loading {name}")
        deadline = time.monotonic() + self.load_timeout
        while (status := await self.status(name)).get("value") != "loaded":
            if status.get("failed"):
                raise ServeError(f"the llama.cpp router could not load {name} (exit status {status.get('exit_code')}; "
                                 f"its log: {self.folder / 'router.log'})")
            if time.monotonic() > deadline:
                raise ServeError(f"the llama.cpp router did not load {name} within {self.load_timeout:.0f} s")
            await anyio.sleep(0.2)
        return name

    async def unload(self, name: str) -> None:
        await _request(self.url.removesuffix("/v1") + "/models/unload", {"model": name}, f"unloading {name}")
        self.presets.pop(name, None)
        (self.folder / f"{name}.gguf").unlink(missing_ok=True)

    async def status(self, name: str) -> dict[str, Any]:
        """The router's status of the model ``name`` (``{"value": "loaded"}``, ...; empty if unknown)."""
        import json

        listed = json.loads(await self._get("/models"))
        for entry in listed.get("data", listed if isinstance(listed, list) else []):
            if entry.get("id") == name:
                status = entry.get("status", {})
                return status if isinstance(status, dict) else {}
        return {}

    async def _get(self, path: str) -> bytes:
        return await _request(self.url.removesuffix("/v1") + path, None, f"the llama.cpp router, {path}", 60)
