"""The servers the engine knows how to start, by the model name that asks for one.

- ``llamacpp:PATH.gguf``: llama.cpp's own ``llama-server`` on that GGUF file, with ``slots`` parallel
  sequences of ``context`` tokens each (``--parallel``, ``-c``), its Prometheus ``/metrics`` on.
  The binary is ``$LLAMA_SERVER``, else the one ``asymgames setup-llamacpp`` built
  (``engine.serving.install``), else ``llama-server`` on the PATH.
- ``vllm:MODEL`` when no vLLM URL is given (``--vllm-url``, ``VLLM_BASE_URL``): ``vllm serve MODEL``
  with ``--max-num-seqs`` slots, as inspect_ai starts one. The executable is ``$VLLM_EXECUTABLE``,
  else ``vllm`` on the PATH.

Each is checked before any game (``check``: the file, its GGUF header, the executable) and made
into a command line once a port is chosen (``command``).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from engine.serving.install import BUNDLED, built_server, bundled_model
from engine.serving.process import ServeError

GGUF_MAGIC = b"GGUF"
SETUP_HINT = "asymgames setup-llamacpp builds it (about 8 minutes on 2 cores), or set LLAMA_SERVER to one"


@dataclass(frozen=True)
class ServedModel:
    """A model the engine serves itself: which kind of server, and what it loads."""

    kind: str  # "llamacpp" or "vllm"
    model: str  # the GGUF path, or vLLM's model name

    @property
    def label(self) -> str:
        return f"{self.kind} server for {self.model}"

    def check(self) -> None:
        """ServeError with a one-line reason if the server cannot be started."""
        find_executable(self.kind)
        if self.kind == "llamacpp":
            path = Path(self.model).expanduser()
            if not path.is_file():
                hint = " (asymgames setup-llamacpp fetches it)" if path.name in BUNDLED.values() else " (a GGUF file: llamacpp:PATH.gguf)"
                raise ServeError(f"no model file {self.model}{hint}")
            try:
                with path.open("rb") as f:
                    head = f.read(4)
            except OSError as exc:
                raise ServeError(f"cannot read {self.model}: {exc.strerror or exc}") from None
            if head != GGUF_MAGIC:
                raise ServeError(f"{self.model} is not a GGUF file (it does not start with 'GGUF')")

    def command(self, port: int, slots: int, context: int) -> list[str]:
        binary = str(find_executable(self.kind))
        if self.kind == "llamacpp":
            return [binary, "-m", str(Path(self.model).expanduser()), "--host", "127.0.0.1", "--port", str(port),
                    "--parallel", str(slots), "-c", str(slots * context), "--metrics"]
        return [binary, "serve", self.model, "--host", "127.0.0.1", "--port", str(port), "--max-num-seqs", str(slots)]


def find_executable(kind: str) -> Path:
    """The server program for ``kind``; ServeError saying how to get it if there is none."""
    if kind == "llamacpp":
        given = os.environ.get("LLAMA_SERVER")
        if given:
            if not Path(given).is_file():
                raise ServeError(f"LLAMA_SERVER is {given}, which is not a file")
            return Path(given)
        built = built_server()
        if built.is_file():
            return built
        found = shutil.which("llama-server")
        if found:
            return Path(found)
        raise ServeError(f"no llama-server: {SETUP_HINT}")
    given = os.environ.get("VLLM_EXECUTABLE")
    found = given or shutil.which("vllm")
    if not found or not Path(found).is_file():
        raise ServeError("no vllm executable to serve the model: pip install vllm on a GPU machine, give the server's "
                         "address with --vllm-url, or set VLLM_EXECUTABLE")
    return Path(found)


def served_model(provider: str, model: str, explicit_url: bool) -> ServedModel | None:
    """The server a model name asks the engine to start, or None. ``explicit_url``: the run was given
    the provider's address (a flag, its environment variable): then only a GGUF path is served.

    - ``llamacpp:PATH.gguf``: that file; ``llamacpp:smollm2`` (a model ``setup-llamacpp`` fetched):
      its file, unless the run names a llama.cpp server of its own;
    - ``vllm:MODEL`` with no vLLM server named."""
    if provider == "llamacpp":
        if model.lower().endswith(".gguf"):
            return ServedModel("llamacpp", model)
        bundled = bundled_model(model)
        if bundled is not None and not explicit_url:
            return ServedModel("llamacpp", str(bundled))
    if provider == "vllm" and not explicit_url:
        return ServedModel("vllm", model)
    return None
