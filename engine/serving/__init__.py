"""Model servers the engine starts for a run: llama.cpp's ``llama-server`` on a GGUF file, ``vllm
serve`` for a vLLM model with no server named (``engine.serving.kinds``).

``Servers`` starts every server a run's models need on 127.0.0.1 (a free port each, ``slots``
sequences at once), waits until each answers its health URL, writes each one's output to
``server-<n>.log`` in the run directory, watches them (a server that dies is started again once; a
second death is left to the calls that fail, which the run counts as lost to the infrastructure
and stops on), and stops them when the run ends, however it ends. A server started here dies with
the engine even when the engine is killed, and so does every process it spawned
(``engine.serving.process``, ``engine.serving.watchdog``). ``asymgames setup-llamacpp`` and
``asymgames setup-vllm`` get the servers and the bundled model (``install``, ``vllm_install``).
"""

from __future__ import annotations

from engine.lazy import lazy_exports

# name -> the module of engine.serving that defines it, imported on first use: a run that starts no
# server (every run but those of local models) never loads the kinds, the installer or the watcher.
_EXPORTS = {
    "ServeError": ".process", "ServerProcess": ".process", "free_port": ".process",
    "ServedModel": ".kinds", "find_executable": ".kinds", "served_model": ".kinds",
    "Servers": ".servers",
    "MODEL_FILE": ".install", "SetupError": ".install", "built_server": ".install", "home": ".install",
    "setup_model": ".install", "setup_server": ".install",
    "installed_vllm": ".vllm_install", "setup_vllm": ".vllm_install", "setup_vllm_model": ".vllm_install",
    "vllm_installed": ".vllm_install", "vllm_model_folder": ".vllm_install", "vllm_venv": ".vllm_install",
    "VllmAdapters": ".swap", "adapter_digest": ".swap",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
