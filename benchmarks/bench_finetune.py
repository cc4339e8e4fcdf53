"""SmolLM2-135M before and after a LoRA fine-tune of a fixed, small CPU budget, on held-out games.

For each game: a dataset of the scripted strategies' play (``asymgames dataset``: training games, the
first ``--eval`` games of run seed 0 held out), a LoRA adapter trained on it for ``--steps`` optimiser
steps (``asymgames train``), then the held-out games played by the bundled model
(``llamacpp:smollm2``) and by the tuned one (``llamacpp:smollm2+ADAPTER``, served by the llama.cpp
server the engine starts), without structured output. Prints, per game and model: format errors
(unreadable replies, and per model turn), valid actions per model turn, success and the game's
partial scores with 95% intervals (Wilson for rates, t for means: ``engine.analysis.stats``), and
the wall time of each stage. Asserts nothing. Needs the train extra, ``asymgames setup-llamacpp``
(server, model, llama.cpp source) and the Hugging Face folder of SmolLM2 (``asymgames setup-vllm``
makes it at ``~/.cache/asymgames/models/smollm2-hf``).

    python benchmarks/bench_finetune.py --games asympuzl chain --train-games 40 --eval 12 --steps 8
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec  # noqa: E402

from engine.analysis.stats import mean_interval, wilson_interval  # noqa: E402
from engine.records.record import GameRecord, decode_record  # noqa: E402
from engine.serving.vllm_install import vllm_model_folder  # noqa: E402
from puzzles.referee import TurnLog  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HF_MODEL = vllm_model_folder("smollm2")  # ~/.cache/asymgames/models/smollm2-hf, or under $ASYMGAMES_HOME
PARAMS = {"asympuzl": {"size": "3"}, "chain": {"size": "3"}, "einstein": {"blocks": "4"}}  # small games: seconds a turn


def asymgames(*args: str) -> float:
    """Run ``asymgames ARGS`` with this Python, printing its last line; its wall time. Stops the
    benchmark if it fails."""
    command = [sys.executable, "-m", "asymgames", *args]
    print("  $ asymgames " + " ".join(args), flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"asymgames {args[0]} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    said = [line for line in done.stdout.splitlines() if line.strip()]
    if said and args[0] != "run":
        print("    " + said[-1], flush=True)
    return time.perf_counter() - started


def records(run: Path) -> list[GameRecord]:
    return [decode_record(line) for line in (run / "results.jsonl").read_bytes().splitlines() if line.strip()]


def interval(mean: float, low: float, high: float) -> str:
    if math.isnan(low):
        return f"{mean:.3f}"
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def model_turns(record: GameRecord) -> list[TurnLog]:
    return [t for t in record.turn_log if t.usage is not msgspec.UNSET]


def report(model: str, found: list[GameRecord], seconds: float) -> None:
    played = [r for r in found if r.outcome != "error"]
    turns = [model_turns(r) for r in played]
    format_errors = sum(sum(r.format_errors.values()) for r in played)
    per_turn = [sum(1 for t in ts if t.format_error) / len(ts) for ts in turns if ts]
    valid = [sum(t.applied for t in ts) / len(ts) for ts in turns if ts]
    wins = sum(r.outcome == "success" for r in played)
    low, high = wilson_interval(wins, len(played))
    print(f"  {model}: {len(found)} games ({len(found) - len(played)} errors), {sum(map(len, turns))} model turns, {seconds:.0f} s")
    cut = sum(1 for ts in turns for t in ts if t.cut is True)
    print(f"    unreadable / turn     {interval(*mean_interval(per_turn))}: {cut} cut at the token limit, {format_errors} format errors")
    print(f"    valid actions / turn  {interval(*mean_interval(valid))}")
    print(f"    success               {wins}/{len(played)} = {wins / max(1, len(played)):.3f} [{low:.3f}, {high:.3f}]")
    for name in sorted({k for r in played for k in r.scores}):
        values = [float(r.scores[name]) for r in played if name in r.scores]
        print(f"    {name:<21} {interval(*mean_interval(values))}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", nargs="+", default=["asympuzl", "chain"], choices=sorted(PARAMS))
    p.add_argument("--train-games", type=int, default=40, help="training games per game (the dataset's)")
    p.add_argument("--eval", type=int, default=12, help="held-out games each model plays, per game")
    p.add_argument("--steps", type=int, default=8, help="optimiser steps of the fine-tune (the fixed budget)")
    p.add_argument("--batch", type=int, default=4, help="samples a step")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--max-length", type=int, default=1024, help="tokens a training sample is cut to")
    p.add_argument("--max-turns", type=int, default=4)
    p.add_argument("--max-tokens", type=int, default=128, help="a reply's token limit when the models play")
    p.add_argument("--slots", type=int, default=4, help="the server's parallel sequences")
    p.add_argument("--request-timeout", type=float, default=3600.0,
                   help="seconds a call may take (a loaded CPU takes minutes for 8 replies at once; the run's default of 120 loses them)")
    p.add_argument("--model", type=Path, default=HF_MODEL, help="the Hugging Face folder the adapter is trained on")
    p.add_argument("--keep", type=Path, help="keep the datasets, adapters and runs here (default: a temporary folder)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        print(f"SmolLM2-135M-Instruct, {args.train_games} training games and {args.eval} held-out games per game; "
              f"the fine-tune: {args.steps} steps of {args.batch} samples, lr {args.lr}, rank {args.rank}, on the CPU")
        for game in args.games:
            params = PARAMS[game]
            flags = [f for k, v in params.items() for f in (f"--{k}", v)]
            part = ",".join(f"{k}={v}" for k, v in params.items())
            print(f"\n{game} ({part}, at most {args.max_turns} turns, replies of at most {args.max_tokens} tokens)")
            data, adapter = work / f"{game}-data", work / f"{game}-adapter"
            if (adapter / "adapter_config.json").is_file():  # made by an earlier run into the same --keep folder: only the games are played
                print(f"  the dataset and adapter of an earlier run: {data}, {adapter}")
            else:
                train(game, part, data, adapter, args)
            for model in ("llamacpp:smollm2", f"llamacpp:smollm2+{adapter}"):
                run = work / f"{game}-{'tuned' if '+' in model else 'base'}"
                seconds = asymgames("run", "--game", game, *flags, "--seed", "0", "--games", str(args.eval), "--max-turns", str(args.max_turns),
                                    "--model", model, "--max-tokens", str(args.max_tokens), "--serve-slots", str(args.slots),
                                    "--concurrency", str(args.slots), "--request-timeout", str(args.request_timeout),
                                    "--no-dashboard", "--out", str(run))
                report("tuned" if "+" in model else "base", records(run), seconds)


def train(game: str, part: str, data: Path, adapter: Path, args: argparse.Namespace) -> None:
    """The dataset of ``game`` and the adapter trained on it, each stage timed."""
    built = asymgames("dataset", "--game", game, "--part", f"{part}:{args.train_games}", "--holdout", str(args.eval),
                      "--max-turns", str(args.max_turns), "--out", str(data))
    samples = len((data / "train.jsonl").read_text().splitlines())
    print(f"  dataset: {samples} samples, {built:.0f} s")
    trained = asymgames("train", str(data), "--model", str(args.model), "--out", str(adapter), "--steps", str(args.steps),
                        "--batch", str(args.batch), "--per-device", str(args.batch), "--lr", str(args.lr),
                        "--rank", str(args.rank), "--alpha", str(args.rank), "--max-length", str(args.max_length))
    print(f"  training: {args.steps} steps, {trained:.0f} s")


if __name__ == "__main__":
    main()
