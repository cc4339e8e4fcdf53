"""Offline games in one process against the same run on Ray workers (a local cluster): games per
second, with the cluster's start-up reported apart. Prints ratios.

    .venv/bin/python benchmarks/bench_cluster.py                 # 100,000 games, 2 workers
    .venv/bin/python benchmarks/bench_cluster.py --games 20000 --workers 2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from engine import Grid, PolicyFactory, RunDir  # noqa: E402
from engine.collector import tuned_collector  # noqa: E402
from engine.executors import make_executor  # noqa: E402
from engine.ids import IdSet  # noqa: E402
from engine.session import play_plan  # noqa: E402


def play(plan: Grid, executor, concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        run = RunDir.create(Path(folder) / "run", plan)

        async def main() -> None:
            await play_plan(run, plan, PolicyFactory(), recorded=IdSet(), concurrency=concurrency, executor=executor)

        started = time.perf_counter()
        with tuned_collector():  # as the runner plays, in one process or as a cluster's driver
            anyio.run(main)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=256)
    args = parser.parse_args()
    import ray

    plan = Grid(seeds=args.games, agents=[["share_everything", "share_everything"]])
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.games} games, share_everything, N=5")
    local = play(plan, make_executor("local"), args.concurrency)
    started = time.perf_counter()
    ray.init(num_cpus=args.workers, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    executor = make_executor("ray", workers=args.workers)
    warm = play(Grid(seeds=args.workers * 64, agents=plan.agents), executor, args.concurrency)  # workers' imports
    start_up = time.perf_counter() - started
    remote = play(plan, make_executor("ray", workers=args.workers), args.concurrency)
    print(f"one process: {args.games / local:,.0f} games/s ({local:.1f} s)")
    print(
        f"{args.workers} Ray workers: {args.games / remote:,.0f} games/s ({remote:.1f} s; cluster start-up {start_up:.1f} s apart, "
        f"of which a warm-up batch {warm:.1f} s) = {local / remote:.2f}x; with start-up {local / (remote + start_up):.2f}x"
    )


if __name__ == "__main__":
    main()
