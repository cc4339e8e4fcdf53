"""Engine benchmarks. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_engine.py

1. The ring workload: 1000 games, each a ring of 4 actors passing one message around until every
   actor has received 40 (160 messages per game, 160,000 in all; the last one is not passed on to the
   actor that has already finished), all games at once. Run over the
   project's bus and actors (anyio task groups, bounded mailboxes, msgspec messages) and over bare
   asyncio.Queue mailboxes with plain tasks. Prints messages per second of each and the ratio.
2. 1000 scripted AsymPuzl games (N=5, share_everything) end to end, as a user runs them:
   `python -m runners.concurrent --games 1000 --no-dashboard` in a fresh interpreter. Prints the wall
   time including interpreter start, games per second and the child's peak memory (max RSS).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from actors.base import Actor  # noqa: E402
from bus import Bus, Chat  # noqa: E402

GAMES, ACTORS, HOPS = 1000, 4, 40
TOTAL = GAMES * ACTORS * HOPS


class RingActor(Actor):
    def __init__(self, bus: Bus, address: str, next_address: str, hops: int, last: bool) -> None:
        super().__init__(bus, address)
        self.next_address = next_address
        self.left = hops
        self.last = last

    async def handle(self, message: Chat) -> None:
        self.left -= 1
        if self.left == 0:
            self.stop()
            if self.last:
                return
        await self.bus.send(self.next_address, message)


async def ring_on_bus() -> None:
    async with anyio.create_task_group() as tg:
        for game in range(GAMES):
            bus = Bus()
            names = [f"a{i}" for i in range(ACTORS)]
            for i, name in enumerate(names):
                tg.start_soon(RingActor(bus, name, names[(i + 1) % ACTORS], HOPS, i == ACTORS - 1).run)
            await bus.send(names[0], Chat(game_id=game, turn=0, sender="a3", recipient="a0", text="token"))


async def ring_bare_asyncio() -> None:
    async def actor(inbox: asyncio.Queue, outbox: asyncio.Queue, hops: int, last: bool) -> None:
        for hop in range(hops):
            message = await inbox.get()
            if not (last and hop == hops - 1):
                outbox.put_nowait(message)

    tasks = []
    for _ in range(GAMES):
        queues = [asyncio.Queue(64) for _ in range(ACTORS)]
        for i in range(ACTORS):
            tasks.append(asyncio.create_task(actor(queues[i], queues[(i + 1) % ACTORS], HOPS, i == ACTORS - 1)))
        queues[0].put_nowait("token")
    await asyncio.gather(*tasks)


def rate(variant: str) -> float:
    gc.collect()
    started = time.perf_counter()
    if variant == "bus":
        anyio.run(ring_on_bus)
    else:
        asyncio.run(ring_bare_asyncio())
    return TOTAL / (time.perf_counter() - started)


def ring(repeats: int) -> tuple[float, float, float]:
    """Alternate the two variants so both see the same machine; return the best rate of each and
    the median of the paired ratios."""
    bare_rates, bus_rates = [], []
    for _ in range(repeats):
        bare_rates.append(rate("bare"))
        bus_rates.append(rate("bus"))
    ratios = [b / a for a, b in zip(bare_rates, bus_rates)]
    return max(bare_rates), max(bus_rates), statistics.median(ratios)


def end_to_end(games: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "runners.concurrent", "--games", str(games), "--no-dashboard",
             "--out", str(Path(tmp) / "run")],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, peak_kib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="ring runs of each variant, alternated")
    parser.add_argument("--games", type=int, default=1000, help="games in the end-to-end run")
    args = parser.parse_args()

    bare, bus, ratio = ring(args.repeats)
    print(f"ring {GAMES} games x {ACTORS} actors x {HOPS} messages ({TOTAL:,} messages), {args.repeats} alternating runs:")
    print(f"  bare asyncio.Queue : {bare:>10,.0f} msg/s (best)")
    print(f"  project bus        : {bus:>10,.0f} msg/s (best)")
    print(f"  ratio bus / bare   : {ratio:.2f} (median of paired runs; target >= 0.50)")

    wall, peak_kib = end_to_end(args.games)
    print(f"end to end: {args.games} scripted AsymPuzl games (N=5, share_everything), fresh interpreter:")
    print(f"  wall time  : {wall:.2f} s  (target < 5 s)")
    print(f"  games/s    : {args.games / wall:,.0f}")
    print(f"  peak memory: {peak_kib / 1024:.1f} MiB max RSS  (target < 100 MiB)")


if __name__ == "__main__":
    main()
