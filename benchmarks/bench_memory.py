"""Memory: per game in flight, and against the size of the run. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/bench_memory.py --in-flight     # per game in flight only
    .venv/bin/python benchmarks/bench_memory.py                 # and 1k, 10k, 100k games
    .venv/bin/python benchmarks/bench_memory.py --games 1000 1000000

1. Per game in flight: 5000 games of the ring workload (``ring.py``: 4 actors, a task group per game)
   started at once and stopped before their first message, every actor waiting on its mailbox; the
   growth of the resident set over a warmed-up interpreter, divided by the games. Bare
   ``asyncio.Queue`` mailboxes (the anchor) and the project's bus and actors, each in a fresh
   interpreter, alternated; the median of each and of the paired ratios.
2. Per real game in flight: ``runners.concurrent --games 20000`` (scripted AsymPuzl games, N=5, the
   default transcripts) at ``--concurrency`` 256 and 5000 in fresh interpreters, alternated; the
   difference of the children's peak resident sets divided by the 4744 more games in flight. Each
   child reports its own peak (``VmHWM`` of its address space, read as it exits): the peak the
   system gives a parent for its child (``ru_maxrss``) starts from the parent's own, which the child
   shares until it starts its program, so a large parent (``bench_table.py``) read too little.
3. Against the size of the run: `python -m runners.concurrent --games G --no-dashboard` in a fresh
   interpreter for several G, printing the child's max RSS and its ratio to the smallest run.
   Memory should be set by the games in flight (--concurrency), not by G.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IN_FLIGHT = 5000


def resident() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def in_flight_child(kind: str, games: int) -> None:
    """In a fresh interpreter: print the bytes per game of ``games`` ring games parked in flight."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import ring

    async def parked_growth(count: int) -> int:
        waiting = 0
        all_parked = asyncio.Event()

        def parked() -> None:
            nonlocal waiting
            waiting += 1
            if waiting == count:
                all_parked.set()

        parking = ring.Parking(parked)
        before = resident()
        play = asyncio.create_task(ring.RINGS[kind](count, 2, parking))
        await all_parked.wait()
        for _ in range(3):  # let every actor reach its mailbox
            await asyncio.sleep(0)
        grown = resident() - before
        parking.go.set()
        await play
        return grown

    asyncio.run(parked_growth(500))  # warm up: imports, the allocator's arenas
    gc.collect()
    print(asyncio.run(parked_growth(games)) / games)


def per_game_in_flight(repeats: int, games: int = IN_FLIGHT) -> dict[str, list[float]]:
    """KiB per game in flight of each ring, fresh interpreters alternated."""
    found: dict[str, list[float]] = {"bare": [], "bus": []}
    for _ in range(repeats):
        for kind in found:
            out = subprocess.run(
                [sys.executable, __file__, "--in-flight-child", kind, str(games)],
                cwd=ROOT, check=True, capture_output=True, text=True,
            ).stdout
            found[kind].append(float(out.split()[-1]) / 1024)
    return found


def peak_of(module: str, args: list[str]) -> int:
    """Peak resident set, in KiB, of ``python -m module args`` in a fresh interpreter, as it reports it."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "peak"
        subprocess.run([sys.executable, __file__, PEAK_CHILD, str(report), module, *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        return int(report.read_text())


PEAK_CHILD = "--peak-child"


def peak_child(report: str, module: str, args: list[str]) -> None:
    """Run ``module`` as ``python -m`` would, and write the peak of this process's address space as it exits."""
    import atexit
    import runpy

    def write_peak() -> None:
        status = Path("/proc/self/status").read_text()
        Path(report).write_text(status.split("VmHWM:")[1].split()[0])

    atexit.register(write_peak)
    sys.path.insert(0, str(ROOT))  # as ``python -m`` from the project's root
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def real_game_in_flight(repeats: int, games: int = 20_000, low: int = 256, high: int = IN_FLIGHT) -> list[float]:
    """KiB per real game in flight, one figure per alternated pair of runs."""
    found = []
    for _ in range(repeats):
        peaks = {}
        for concurrency in (low, high):
            with tempfile.TemporaryDirectory() as tmp:
                peaks[concurrency] = peak_of("runners.concurrent", ["--games", str(games), "--concurrency", str(concurrency),
                                                                    "--no-dashboard", "--out", str(Path(tmp) / "run")])
        found.append((peaks[high] - peaks[low]) / (high - low))
    return found


def run(games: int, extra: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak MiB of the child, size of results.jsonl in bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        started = time.perf_counter()
        peak = peak_of("runners.concurrent", ["--games", str(games), "--no-dashboard", "--out", str(out), *extra])
        elapsed = time.perf_counter() - started
        return elapsed, peak / 1024, (out / "results.jsonl").stat().st_size


def print_in_flight(repeats: int) -> None:
    found = per_game_in_flight(repeats)
    bare, bus = statistics.median(found["bare"]), statistics.median(found["bus"])
    ratio = statistics.median(b / a for a, b in zip(found["bare"], found["bus"]))
    print(f"memory per game in flight ({IN_FLIGHT} ring games parked, {repeats} alternated fresh interpreters):")
    print(f"  bare asyncio.Queue ring : {bare:5.1f} KiB (median)")
    print(f"  project bus and actors  : {bus:5.1f} KiB (median), {ratio:.2f} x bare")


def main() -> None:
    if sys.argv[1:2] == [PEAK_CHILD]:
        peak_child(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--in-flight", action="store_true", help="only the memory per game in flight")
    parser.add_argument("--repeats", type=int, default=3, help="fresh interpreters per ring (default 3)")
    parser.add_argument("--in-flight-child", nargs=2, metavar=("KIND", "GAMES"), help=argparse.SUPPRESS)
    parser.add_argument("extra", nargs="*", help="more runner flags, after --")
    args = parser.parse_args()
    if args.in_flight_child:
        in_flight_child(args.in_flight_child[0], int(args.in_flight_child[1]))
        return
    print_in_flight(args.repeats)
    real = real_game_in_flight(args.repeats)
    print(f"memory per real AsymPuzl game in flight (runners.concurrent, 5000 against 256 in flight, {args.repeats} pairs): "
          f"{statistics.median(real):.1f} KiB (median; each: {', '.join(f'{r:.1f}' for r in real)})")
    if args.in_flight:
        return
    base = None
    print(f"{'games':>10} {'wall s':>8} {'peak MiB':>9} {'ratio':>6} {'results MiB':>12}")
    for games in sorted(args.games):
        elapsed, peak, size = run(games, args.extra)
        base = base or peak
        print(f"{games:>10} {elapsed:8.1f} {peak:9.1f} {peak / base:6.2f} {size / 2**20:12.1f}")


if __name__ == "__main__":
    main()
