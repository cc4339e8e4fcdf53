"""A LoRA adapter served on its base model: ``llamacpp:MODEL+ADAPTER`` (``llamacpp:smollm2+adapters/x``).

``ADAPTER`` is a folder ``asymgames train`` (or PEFT) wrote, or a GGUF LoRA file. llama.cpp's server
takes a GGUF LoRA (``--lora``), so a PEFT folder is converted once by llama.cpp's own
``convert_lora_to_gguf.py`` (from the llama.cpp source ``asymgames setup-llamacpp`` downloaded) to
``adapter.gguf`` in the folder, again when the adapter is newer. The conversion needs torch,
transformers and safetensors: the Python running the engine if it has them (the train extra), else
the vLLM environment's (``asymgames setup-vllm``); the base model's config comes from the folder the
adapter names as its base (``base_model_name_or_path``). Before a server starts, every tensor of the
GGUF LoRA is compared with the model's (``engine.serving.lora_gguf``): an adapter of another base
model, a missing or damaged folder, each is refused in one line. A forecast converts nothing: it only
looks at the folder or file (``adapter_found``). vLLM takes the PEFT folder as it is
(``engine.serving.vllm_lora``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from engine.serving.install import LLAMA_CPP_SDIST, home
from engine.serving.process import ServeError
from engine.serving.vllm_install import vllm_installed, vllm_venv

ADAPTER_GGUF = "adapter.gguf"  # the converted adapter, in the adapter's folder
PEFT_FILES = ("adapter_config.json", "adapter_model.safetensors")
SCRIPT = Path(__file__).with_name("lora_gguf.py")
CONVERT_TIMEOUT = 600.0  # seconds; a loaded machine takes about a minute for a small adapter
_FITTED: set[tuple[str, int, str]] = set()  # (GGUF LoRA, its mtime, model) found to fit, in this process


def split_adapter(model: str) -> tuple[str, str]:
    """``MODEL+ADAPTER`` -> (MODEL, ADAPTER); a model without ``+`` -> (model, "")."""
    base, _, adapter = model.partition("+")
    return base.strip(), adapter.strip()


def llama_cpp_source() -> Path:
    """The llama.cpp source tree setup-llamacpp downloaded (its converters, its ``gguf-py``)."""
    name, version = LLAMA_CPP_SDIST
    return home() / "build" / "src" / f"{name.replace('-', '_')}-{version}" / "vendor" / "llama.cpp"


def lora_file(adapter: str) -> Path:
    """The GGUF LoRA that ``--lora`` loads for ``adapter`` (made by ``gguf_lora``)."""
    path = Path(adapter).expanduser()
    return path if path.suffix.lower() == ".gguf" else path / ADAPTER_GGUF


def adapter_found(adapter: str) -> dict[str, object] | None:
    """The adapter's PEFT config (None for a GGUF LoRA file), without converting anything: what a
    forecast checks. ServeError, one line, if the folder or file is missing or damaged."""
    path = Path(adapter).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ServeError(f"no adapter file {adapter}")
        return None
    if not path.is_dir():
        raise ServeError(f"no adapter folder {adapter} (a folder asymgames train wrote, or a GGUF LoRA file)")
    return peft_config(path)


def gguf_lora(adapter: str, model: Path) -> Path:
    """The adapter as a GGUF LoRA that fits the GGUF model ``model``, converted if need be.
    ServeError, one line, if the adapter is missing, damaged or made for another model."""
    path = Path(adapter).expanduser()
    target = lora_file(adapter)
    config = adapter_found(adapter)
    if config is not None and not _fresh(target, path):
        _convert(path, config, target)
    key = (str(target.resolve()), target.stat().st_mtime_ns, str(model.resolve()))
    if key not in _FITTED:  # a sweep checks its models once per condition
        reason = _run(sys.executable, ["fit", str(target), str(model)], "checking the adapter")
        if reason is not None:
            raise ServeError(f"the adapter {adapter} does not fit {model.name}: {reason}")
        _FITTED.add(key)
    return target


def peft_config(folder: Path) -> dict[str, object]:
    """A PEFT LoRA folder's adapter_config.json; ServeError, one line, if the folder is not a whole LoRA adapter."""
    for name in PEFT_FILES:
        if not (folder / name).is_file():
            raise ServeError(f"{folder} is not a whole LoRA adapter: it has no {name}")
    try:
        config = json.loads((folder / PEFT_FILES[0]).read_text())
    except (OSError, ValueError) as exc:
        raise ServeError(f"{folder}/{PEFT_FILES[0]} is damaged: {exc}") from None
    if not isinstance(config, dict) or config.get("peft_type") != "LORA":
        raise ServeError(f"{folder}/{PEFT_FILES[0]} does not describe a LoRA adapter (peft_type LORA)")
    return config


def _fresh(target: Path, folder: Path) -> bool:
    """Whether the converted file is there and newer than the adapter it was made from."""
    try:
        made = target.stat().st_mtime
        return all(made >= (folder / name).stat().st_mtime for name in PEFT_FILES)
    except OSError:
        return False


def _convert(folder: Path, config: dict[str, object], target: Path) -> None:
    base = config.get("base_model_name_or_path")
    base_dir = Path(str(base)).expanduser() if isinstance(base, str) and base else None
    if base_dir is None or not (base_dir / "config.json").is_file():
        raise ServeError(f"{folder}: its base model {base!r} (base_model_name_or_path in adapter_config.json) is not a "
                         "Hugging Face model folder on this machine, whose config.json the conversion to GGUF needs")
    converter = llama_cpp_source() / "convert_lora_to_gguf.py"
    if not converter.is_file():
        raise ServeError(f"no llama.cpp converter at {converter} to turn {folder} into a GGUF LoRA: asymgames setup-llamacpp downloads it")
    reason = _run(_converting_python(), ["convert", str(converter), str(folder), str(base_dir), str(target)], "converting the adapter")
    if reason is not None:
        raise ServeError(f"cannot convert the adapter {folder} to GGUF: {reason}")


def _converting_python() -> str:
    """A Python with torch, transformers and safetensors: this one, else the vLLM environment's."""
    if all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers", "safetensors")):
        return sys.executable
    if vllm_installed():
        return str(vllm_venv() / "bin" / "python")
    raise ServeError("converting a LoRA adapter to GGUF needs torch and transformers: pip install -e '.[train]' "
                     "(or asymgames setup-vllm, whose environment has them)")


def _run(python: str, args: list[str], what: str) -> str | None:
    """Run ``lora_gguf.py`` with llama.cpp's ``gguf-py`` first on the path; its one-line reason, or None."""
    gguf_py = llama_cpp_source() / "gguf-py"
    if not gguf_py.is_dir():
        raise ServeError(f"{what} needs llama.cpp's gguf-py at {gguf_py}: asymgames setup-llamacpp downloads it")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(gguf_py), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run([python, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=CONVERT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServeError(f"{what}: {exc}") from None
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"status {done.returncode}"
