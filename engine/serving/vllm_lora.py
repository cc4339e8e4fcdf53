"""A LoRA adapter on the vLLM server the engine starts: ``vllm:MODEL+ADAPTER`` (``vllm:smollm2+adapters/x``).

vLLM loads a PEFT adapter folder as PEFT wrote it (no conversion): the server is started with
``--enable-lora``, the adapter given to it under a name (``--lora-modules NAME=PATH``) and a
``--max-lora-rank`` that holds the adapter's rank (``r`` in its adapter_config.json, and any larger
rank of its ``rank_pattern``, rounded up to a rank vLLM takes). Each request names the adapter as its
model. The name is the adapter as the model name writes it (``adapters/x``), so that two adapters are
two models to the response cache; the path, the folder made absolute. Before the server starts, the
folder is checked (``engine.serving.lora.peft_config``) and its rank read: a missing or damaged
adapter, or a rank vLLM cannot serve, is refused in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.serving.lora import peft_config
from engine.serving.process import ServeError

# The ranks ``--max-lora-rank`` takes (vLLM's ``MaxLoRARanks``); an adapter of a smaller rank is served
# under the next one up.
MAX_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def adapter_rank(adapter: str) -> int:
    """The largest rank of the PEFT adapter folder ``adapter``; ServeError, one line, if the folder is
    missing or damaged or its rank unreadable."""
    folder = Path(adapter).expanduser()
    if not folder.is_dir():
        raise ServeError(f"no adapter folder {adapter} (a folder asymgames train or PEFT wrote; vLLM takes no GGUF LoRA)")
    config = peft_config(folder)
    pattern = config.get("rank_pattern") or {}
    ranks = [config.get("r"), *(pattern.values() if isinstance(pattern, dict) else [None])]
    if not all(isinstance(r, int) and not isinstance(r, bool) and r > 0 for r in ranks):
        raise ServeError(f"{folder}/adapter_config.json gives no rank vLLM can read (r: {config.get('r')!r})")
    return max(int(r) for r in ranks if isinstance(r, int))


def max_lora_rank(rank: int) -> int:
    """The ``--max-lora-rank`` that serves an adapter of ``rank``; ServeError if vLLM takes none."""
    fitting = [r for r in MAX_LORA_RANKS if r >= rank]
    if not fitting:
        raise ServeError(f"the adapter's rank {rank} is more than vLLM serves ({MAX_LORA_RANKS[-1]})")
    return fitting[0]


def lora_arguments(adapter: str) -> list[str]:
    """``vllm serve``'s arguments that serve the adapter folder ``adapter`` under its own name. A name
    or path holding ``=`` or ``,``, which the ``NAME=PATH`` form cannot carry, is given in vLLM's
    JSON form."""
    path = str(Path(adapter).expanduser().resolve())
    module = f"{adapter}={path}"
    if any(c in adapter + path for c in "=,"):
        module = json.dumps({"name": adapter, "path": path})
    return ["--enable-lora", "--lora-modules", module, "--max-lora-rank", str(max_lora_rank(adapter_rank(adapter)))]
