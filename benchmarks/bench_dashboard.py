"""What the live dashboard costs. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_dashboard.py

Runs the main job's run loop in process (1000 scripted games by default) with the live dashboard
drawn to a terminal console (output discarded) and with --no-dashboard, alternating the two several
times, and prints the median time of each and the median of the paired differences, in wall and CPU
time. Target: the dashboard costs < 10%.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import PolicyFactory  # noqa: E402
from runners.runloop import execute  # noqa: E402
from runners.concurrent import prepare  # noqa: E402


def one_run(game_args: list[str], dashboard: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one run."""
    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as sink:
        argv = [*game_args, "--out", str(Path(tmp) / "run")] + ([] if dashboard else ["--no-dashboard"])
        factory = PolicyFactory()
        prepared = prepare(argv, factory)
        console = Console(file=sink, force_terminal=True, width=160)
        started, cpu = time.perf_counter(), time.process_time()
        anyio.run(execute, prepared, factory, console, None)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        prepared.session.close()
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--policy", default="share_everything", help="both agents' policy")
    args = parser.parse_args()
    game_args = ["--games", str(args.games), "--alice", args.policy, "--bob", args.policy]
    with_dashboard, without = [], []
    for repeat in range(args.repeats):  # ABBA order, so neither variant is always second
        for dashboard in ((False, True) if repeat % 2 == 0 else (True, False)):
            (with_dashboard if dashboard else without).append(one_run(game_args, dashboard=dashboard))
    print(f"{args.games} games ({args.policy} vs {args.policy}), median of {args.repeats} alternating runs:")
    for i, what in enumerate(("wall", "CPU")):
        a = statistics.median(r[i] for r in without)
        b = statistics.median(r[i] for r in with_dashboard)
        paired = statistics.median(d[i] / n[i] - 1 for n, d in zip(without, with_dashboard))
        print(f"  {what:4s}: --no-dashboard {a:.3f} s, live dashboard {b:.3f} s, "
              f"cost {100 * paired:+.1f}% (median of paired runs; target < 10%)")


if __name__ == "__main__":
    main()
