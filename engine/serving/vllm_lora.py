"""A LoRA adapter on the vLLM server the engine starts: ``vllm:MODEL+ADAPTER`` (``vllm:smollm2+adapters/x``).

vLLM loads a PEFT adapter folder as PEFT wrote it (no conversion): the server is started with
``--enable-lora``, the adapter given to it under a name (``--lora-modules NAME=PATH``) and a
``--max-lora-rank`` that holds the adapter's rank (``r`` in its adapter_config.json, and any larger
rank of its ``rank_pattern``, rounded up to a rank vLLM takes). Each request names the adapter as its
model. The name is the adapter as the model name writes it (``adapters/x``), so that two adapters are
two models to the response cache; the path, the folder made absolute. Before the server starts, the
folder is checked (``engine.serving.lora.peft_config``) and its rank read, and where the model is a
folder on this machine every tensor of the adapter is compared with the model's (``misfit``: the
safetensors files' headers, no weights read): a missing or damaged adapter, a rank vLLM cannot
serve, an adapter of another base model, each is refused in one line.
"""

from __future__ import annotations

import json
import struct
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


PEFT_PREFIX = "base_model.model."  # PEFT's saved names: this, then the model's module, then .lora_A.weight or .lora_B.weight


def tensor_sizes(path: Path) -> dict[str, list[int]]:
    """Each tensor's dimensions in a safetensors file, from its header: eight bytes (little-endian)
    giving the length of a JSON object of tensor name -> its three fields, ``dtype``, the dimensions
    and ``data_offsets`` (the format's own definition)."""
    with path.open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    header.pop("__metadata__", None)
    return {name: [int(n) for n in next(v for k, v in entry.items() if k not in ("dtype", "data_offsets"))]
            for name, entry in header.items()}


def model_sizes(folder: Path) -> dict[str, list[int]] | None:
    """The dimensions of a Hugging Face model folder's tensors (one file, or the shards its index names),
    or None where the folder holds no safetensors weights."""
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        files = sorted(set(json.loads(index.read_text())["weight_map"].values()))
    elif (folder / "model.safetensors").is_file():
        files = ["model.safetensors"]
    else:
        return None
    sizes: dict[str, list[int]] = {}
    for name in files:
        sizes.update(tensor_sizes(folder / name))
    return sizes


def misfit(adapter: Path, model: Path) -> str | None:
    """Why the PEFT adapter folder ``adapter`` does not fit the model folder ``model``, or None if it
    does or the model's tensors cannot be known (a model vLLM fetches by name, or another format)."""
    try:
        base = model_sizes(model)
        if base is None:
            return None
        lora = tensor_sizes(adapter / "adapter_model.safetensors")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, StopIteration, struct.error) as exc:
        return f"cannot read the tensors' sizes ({exc})"
    for name, dims in lora.items():
        module, dot, part = name.removeprefix(PEFT_PREFIX).removesuffix(".weight").rpartition(".")
        if not dot or part not in ("lora_A", "lora_B"):
            continue  # an embedding's or a bias's: vLLM checks those itself
        target = base.get(module + ".weight")
        if target is None:
            return f"the adapter changes {module}, which the model does not have (a model of another size)"
        size, expected = (dims[-1], target[-1]) if part == "lora_A" else (dims[0], target[0])
        if size != expected:
            which = "input" if part == "lora_A" else "output"
            return f"the adapter's {module} has {size} {which} features, the model's {expected} (another base model)"
    return None
