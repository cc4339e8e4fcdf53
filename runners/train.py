"""``asymgames train DATASET --model MODEL_DIR --out ADAPTER_DIR``: a LoRA adapter trained on a dataset
with TRL's ``SFTTrainer`` (``engine.dataset.training``; the ``train`` extra). The defaults are the
Einstein paper's: rank 32, a global batch of 128, learning rate 2e-4 on a cosine schedule, one epoch.

    asymgames train data/einstein_sft/share_ask-cot --model ~/.cache/asymgames/models/smollm2-hf --out adapters/share_ask-cot
"""

from __future__ import annotations

import sys
from pathlib import Path

from engine.dataset import TRACED, TRAIN, DatasetError, LoraSettings, train_lora
from runners.args import OneLineParser, bounded, integer

PROG = "python -m runners.train"


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    d = LoraSettings()
    p = OneLineParser(prog=prog, description="Train a LoRA adapter on a dataset (TRL's SFTTrainer; pip install -e '.[train]').")
    p.add_argument("dataset", type=Path, metavar="DATASET", help="a folder asymgames dataset wrote")
    p.add_argument("--model", type=Path, required=True, metavar="DIR", help="a Hugging Face model folder with a chat template")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="the adapter's folder (must not exist)")
    p.add_argument("--traced", action="store_true", help=f"train on {TRACED} (the reasoning traces) instead of {TRAIN}")
    p.add_argument("--rank", type=integer(1), default=d.rank, metavar="R", help=f"LoRA rank (default {d.rank})")
    p.add_argument("--alpha", type=integer(1), default=d.alpha, metavar="A", help=f"LoRA alpha (default {d.alpha})")
    p.add_argument("--batch", type=integer(1), default=d.batch, metavar="B", help=f"global batch (default {d.batch})")
    p.add_argument("--per-device", type=integer(1), default=d.per_device, metavar="P", help=f"samples per step; the rest by gradient accumulation (default {d.per_device})")
    p.add_argument("--lr", type=bounded(float, 0.0, above=True), default=d.learning_rate, metavar="LR", help=f"learning rate (default {d.learning_rate})")
    p.add_argument("--epochs", type=bounded(float, 0.0, above=True), default=d.epochs, metavar="E", help=f"epochs (default {d.epochs:g})")
    p.add_argument("--steps", type=integer(1), metavar="N", help="stop after N optimiser steps (a fixed budget)")
    p.add_argument("--max-length", type=integer(16), default=d.max_length, metavar="T", help=f"tokens a sample is cut to (default {d.max_length})")
    p.add_argument("--limit", type=integer(1), metavar="K", help="train on the first K samples only")
    args = p.parse_args(argv)
    settings = LoraSettings(
        rank=args.rank, alpha=args.alpha, batch=args.batch, per_device=args.per_device, learning_rate=args.lr,
        epochs=args.epochs, steps=args.steps, max_length=args.max_length, limit=args.limit,
    )
    try:
        done = train_lora(args.model, args.dataset, args.out, settings, TRACED if args.traced else TRAIN)
    except DatasetError as exc:
        p.error(str(exc))
    print(f"Wrote the adapter to {args.out}: {done['steps']} steps, training loss {done['loss']:.4f}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
