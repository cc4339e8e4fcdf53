"""Einstein instances: generation, then the optimal planner for 1000 instances of each N, cold (an
empty cache directory: every instance is planned and appended) and warm (a fresh process memory
reading the cache file, then the in-process LRU). Prints time per instance and the planner's
expansions; asserts nothing.

    .venv/bin/python benchmarks/bench_einstein.py [instances per N] [action modes]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles.einstein import optima  # noqa: E402
from puzzles.einstein.generate import generate  # noqa: E402
from puzzles.einstein.params import DEFAULT_BUDGET, split_modes  # noqa: E402


def per_instance_ms(seconds: float, count: int) -> str:
    return f"{1000 * seconds / count:8.3f} ms"


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    modes = split_modes(sys.argv[2]) if len(sys.argv) > 2 else ("share_ask", "share_ask")
    print(f"{count} instances per N, modes {'/'.join(modes)}, budget {DEFAULT_BUDGET} expansions")
    print(f"{'N':>2} {'generate':>11} {'cold':>11} {'warm disk':>11} {'warm LRU':>11} {'expansions mean / p99 / max':>30} {'slowest':>9}")
    with tempfile.TemporaryDirectory() as directory:
        os.environ["ASYMGAMES_CACHE"] = directory
        for n in (4, 5, 6):
            started = time.perf_counter()
            instances = [generate(n, seed) for seed in range(count)]
            generated = time.perf_counter() - started
            optima.forget()
            times, expansions = [], []
            for inst in instances:
                started = time.perf_counter()
                record = optima.optimum(inst, modes, DEFAULT_BUDGET)
                times.append(time.perf_counter() - started)
                expansions.append(record.expansions)
            cold = sum(times)
            optima.forget()
            started = time.perf_counter()
            for inst in instances:
                optima.optimum(inst, modes, DEFAULT_BUDGET)
            disk = time.perf_counter() - started
            started = time.perf_counter()
            for inst in instances:
                optima.optimum(inst, modes, DEFAULT_BUDGET)
            memory = time.perf_counter() - started
            ordered = sorted(expansions)
            spread = f"{statistics.mean(expansions):.0f} / {ordered[int(0.99 * (len(ordered) - 1))]} / {ordered[-1]}"
            print(
                f"{n:>2} {per_instance_ms(generated, count)} {per_instance_ms(cold, count)} {per_instance_ms(disk, count)}"
                f" {per_instance_ms(memory, count)} {spread:>30} {1000 * max(times):7.1f} ms"
            )


if __name__ == "__main__":
    main()
