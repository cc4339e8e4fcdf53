"""Peak memory against the size of the run: `python -m runners.concurrent --games G --no-dashboard` in a
fresh interpreter for several G, printing the child's max RSS and its ratio to the smallest run.
Memory should be set by the games in flight (--concurrency), not by G. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_memory.py                 # 1k, 10k, 100k games
    .venv/bin/python benchmarks/bench_memory.py --games 1000 1000000
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(games: int, extra: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak MiB of the child, size of results.jsonl in bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "runners.concurrent", "--games", str(games), "--no-dashboard", "--out", str(out), *extra],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
        )
        elapsed = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if peak <= before:
            print("  (peak not above an earlier run's: run sizes in increasing order)")
        return elapsed, peak / 1024, (out / "results.jsonl").stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("extra", nargs="*", help="more runner flags, after --")
    args = parser.parse_args()
    base = None
    print(f"{'games':>10} {'wall s':>8} {'peak MiB':>9} {'ratio':>6} {'results MiB':>12}")
    for games in sorted(args.games):
        elapsed, peak, size = run(games, args.extra)
        base = base or peak
        print(f"{games:>10} {elapsed:8.1f} {peak:9.1f} {peak / base:6.2f} {size / 2**20:12.1f}")


if __name__ == "__main__":
    main()
