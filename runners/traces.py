"""``asymgames traces DATASET --model ENDPOINT:MODEL``: reasoning traces for a dataset's samples, written
by a model through the engine's model clients (``engine.dataset.traces``), kept beside the samples in
``traced.jsonl``. What the calls will cost is said first; ``--dry-run`` stops there, ``--max-cost``
refuses to start above it.

    asymgames traces data/einstein_sft/share_ask-cot --model openai:gpt-4o --temperature 0.2 --top-p 0.9
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from engine.dataset import DatasetError, forecast, prepare, read_dataset, trace
from puzzles import get_game
from runners.args import OneLineParser, bounded
from runners.flags.models import add_model_arguments, settings_from_args

PROG = "python -m runners.traces"


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    p = OneLineParser(prog=prog, description="Reasoning traces for a dataset's samples, written by a model (the Einstein paper's H.3).")
    p.add_argument("dataset", type=Path, metavar="DATASET", help="a folder asymgames dataset wrote")
    p.add_argument("--model", required=True, metavar="ENDPOINT:MODEL", help="the model that writes the traces, e.g. openai:gpt-4o")
    p.add_argument("--dry-run", action="store_true", help="say what the calls will cost, and stop")
    p.add_argument("--max-cost", type=bounded(float, 0.0), metavar="USD", help="refuse to start if the forecast is above USD")
    add_model_arguments(p)
    args = p.parse_args(argv)
    try:
        settings = settings_from_args(args)
        card, samples, _ = read_dataset(args.dataset)
        ahead = forecast(args.model, samples, prepare(get_game(card["game"]), samples), settings)
    except (DatasetError, ValueError) as exc:
        p.error(str(exc))
    cost = "no price known" if ahead.cost is None else f"about ${ahead.cost:.2f}"
    print(f"Forecast: {ahead.calls} calls to {args.model}, {ahead.prompt_tokens} prompt tokens, "
          f"about {ahead.completion_tokens} reply tokens: {cost}.")
    if args.dry_run:
        return 0
    if args.max_cost is not None and (ahead.cost is None or ahead.cost > args.max_cost):
        p.error(f"argument --max-cost: the forecast ({cost}) is above ${args.max_cost:.2f}")
    try:
        done = anyio.run(trace, args.dataset, args.model, settings)
    except DatasetError as exc:
        p.error(str(exc))
    spent = "" if done["cost_usd"] is None else f", ${done['cost_usd']:.2f}"
    print(f"Wrote {args.dataset / done['file']}: {done['calls']} traced samples ({done['prompt_tokens']} prompt and "
          f"{done['completion_tokens']} reply tokens, {done['cache_hits']} from the cache{spent}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
