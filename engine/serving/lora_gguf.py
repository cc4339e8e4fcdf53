"""A PEFT LoRA adapter as a GGUF LoRA for llama.cpp, and whether one fits a model:
``python lora_gguf.py convert CONVERTER ADAPTER_DIR BASE_DIR OUT`` and ``python lora_gguf.py fit LORA_GGUF MODEL_GGUF``.

Run by ``engine.serving.lora`` with llama.cpp's ``gguf-py`` on the path (``convert`` also needs torch,
transformers and safetensors: the train extra, or the vLLM environment). ``convert`` runs llama.cpp's
``convert_lora_to_gguf.py`` with the base model's config from ``BASE_DIR`` and writes ``OUT`` under
another name first, renamed into place when whole. ``fit`` compares every LoRA tensor with the
model's tensor of the same name: the architecture, the layer, the input and output sizes. Either
ends with one line on stderr and status 1 when it fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def convert(converter: Path, adapter: Path, base: Path, out: Path) -> int:
    partial = out.with_name(out.name + ".part")
    done = subprocess.run([sys.executable, str(converter), "--base", str(base), "--outfile", str(partial), str(adapter)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        print(f"llama.cpp's converter failed: {lines[-1] if lines else f'status {done.returncode}'}", file=sys.stderr)
        return 1
    partial.replace(out)
    return 0


def misfit(lora: Path, model: Path) -> str | None:
    """Why the GGUF LoRA ``lora`` does not fit the GGUF model ``model``, or None if it does."""
    from gguf import GGUFReader

    try:
        adapter = GGUFReader(lora)
    except (OSError, ValueError, KeyError, IndexError) as exc:
        return f"cannot read {lora.name} as GGUF ({exc})"
    base = GGUFReader(model)
    kind = adapter.fields.get("general.type")
    if kind is None or kind.contents() != "adapter":
        return f"{lora.name} is not a GGUF LoRA adapter"
    arch = adapter.fields["general.architecture"].contents(), base.fields["general.architecture"].contents()
    if arch[0] != arch[1]:
        return f"the adapter is for a {arch[0]} model, the model is a {arch[1]} one"
    # A ReaderTensor is a named tuple: its name, its type, then its dimensions (innermost first).
    sizes = {name: [int(n) for n in dims] for name, _, dims, *_ in base.tensors}
    for lora_name, _, lora_dims, *_ in adapter.tensors:
        name, _, part = lora_name.rpartition(".")
        dims = [int(n) for n in lora_dims]
        target = sizes.get(name)
        if target is None:
            return f"the adapter changes {name}, which the model does not have (a model of another size)"
        size, expected = (dims[0], target[0]) if part == "lora_a" else (dims[-1], target[-1])
        if size != expected:
            which = "input" if part == "lora_a" else "output"
            return f"the adapter's {name} has {size} {which} features, the model's {expected} (another base model)"
    return None


def main(argv: list[str]) -> int:
    if argv[0] == "convert":
        return convert(Path(argv[1]), Path(argv[2]), Path(argv[3]), Path(argv[4]))
    try:
        reason = misfit(Path(argv[1]), Path(argv[2]))
    except (OSError, ValueError, KeyError, IndexError) as exc:
        reason = f"cannot read {argv[2]} as GGUF ({exc})"
    if reason is not None:
        print(reason, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
