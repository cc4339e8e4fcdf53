"""A Hugging Face model folder from a GGUF file, for vLLM: ``python -I hf_folder.py GGUF_FILE FOLDER``.

Run by ``asymgames setup-vllm`` with the vLLM environment's Python, which has transformers, torch and
gguf. transformers reads the GGUF file (weights dequantized to bfloat16, the tokenizer and its chat
template from the file's metadata) and saves both as a folder vLLM loads. The folder is written
beside ``FOLDER`` under another name and renamed into place when whole, so that a folder at ``FOLDER``
is always a finished one.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    gguf, folder = Path(argv[0]), Path(argv[1])
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    partial = folder.with_name(folder.name + ".part")
    shutil.rmtree(partial, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    if not tokenizer.chat_template:
        print(f"{gguf.name} carries no chat template", file=sys.stderr)
        return 1
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, quantization_config=GgufConfig(dequantize=True), dtype=torch.bfloat16,
    )
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
