"""Einstein instances: generation, then the optimal planner for 1000 instances of each N, cold (an
empty cache directory: every instance is planned and appended) and warm (a fresh process memory
reading the cache file, then the in-process LRU). Prints time per instance and the planner's
expansions. Then the event loop during a run of N = 6 games on a cold cache: the longest and the
99th-percentile delay of a 1 ms ticker, with the planning in worker threads (the game's
``prepare``, as the engine runs it) and, for comparison, on the loop. Asserts nothing.

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

import dataclasses  # noqa: E402

import anyio  # noqa: E402

from engine import Grid, PolicyFactory, run_games  # noqa: E402
from puzzles.einstein import optima  # noqa: E402
from puzzles.einstein.game import GAME  # noqa: E402
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


class Waiting(PolicyFactory):
    """Scripted players that take ``latency`` seconds per reply, as a model would: the loop is then
    mostly idle, and whatever blocks it shows in the ticker."""

    def __init__(self, latency: float) -> None:
        super().__init__()
        self.latency = latency

    def make(self, name, role, seed, game):
        inner, latency = super().make(name, role, seed, game), self.latency

        class Policy:
            async def reply(self, context):
                await anyio.sleep(latency)
                return await inner.reply(context)

        return Policy()


async def loop_delays(games: int, prepare: bool) -> tuple[list[float], float]:
    """(the ticker's delays in seconds, the run's wall time) for ``games`` N = 6 games, cold cache,
    players answering in 50 ms."""
    game = GAME if prepare else dataclasses.replace(GAME, rules=dataclasses.replace(GAME.rules, prepare=None))
    plan = Grid(game="einstein", seeds=games, seed=17, agents=[["random_mover", "random_mover"]], params={"blocks": [6]})
    delays: list[float] = []
    records: list = []

    async def tick(scope: anyio.CancelScope) -> None:
        with scope:
            while True:
                started = time.perf_counter()
                await anyio.sleep(0.001)
                delays.append(time.perf_counter() - started - 0.001)

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()
        tg.start_soon(tick, scope)
        await run_games(plan.specs_for(range(games)), factory=Waiting(0.05), concurrency=64,
                        on_record=records.append, games={"einstein": game})
        scope.cancel()
    return delays, time.perf_counter() - started


def event_loop(games: int = 500) -> None:
    print(f"\nthe event loop during {games} N=6 games on a cold cache, players answering in 50 ms (a 1 ms ticker's extra delay)")
    print(f"{'planning':>22} {'max':>9} {'p99':>9} {'run':>8}")
    for prepare in (True, False):
        with tempfile.TemporaryDirectory() as directory:
            os.environ["ASYMGAMES_CACHE"] = directory
            optima.forget()
            delays, wall = anyio.run(loop_delays, games, prepare)
        ordered = sorted(delays)
        where = "worker threads" if prepare else "on the loop"
        print(f"{where:>22} {1000 * ordered[-1]:6.1f} ms {1000 * ordered[int(0.99 * (len(ordered) - 1))]:6.1f} ms {wall:6.2f} s")


if __name__ == "__main__":
    main()
    event_loop()
