"""Engine benchmarks. Prints figures and ratios; asserts nothing.

    .venv/bin/python benchmarks/bench_engine.py                        # ring, games in flight, end to end
    .venv/bin/python benchmarks/bench_engine.py --ring --autogen-python /path/to/python

1. The ring workload in the shape of a game (``ring.py``: 1000 games (``--ring-games``) x 4 actors x 40 messages, a task
   group per game, a new message per hop, all games at once) over bare ``asyncio.Queue`` mailboxes
   and over the project's bus and actors, alternated; rates in messages per second of CPU time, and
   the median of the paired ratios. With autogen-core importable here, or another interpreter that
   has it (``--autogen-python``), the same ring on autogen-core against bare asyncio in that
   interpreter (``ring_autogen.py``); bus / autogen-core is the product of the two paired ratios.
2. CPU per game with 5000 games in flight against 256: `python -m runners.concurrent --games 20000
   --concurrency C` (scripted AsymPuzl games, N=5) in a fresh interpreter, C alternated, CPU time of
   the child. ``--collector`` runs each also with Python's own collector settings instead of the
   runner's (``engine/play/collector.py``).
3. 1000 scripted games end to end, as a user runs them, in a fresh interpreter: wall time including
   interpreter start, games per second, the child's peak memory.

The machine is shared: rates swing with its load, ratios of runs alternated much less.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import ring  # noqa: E402

GAMES = 1000
# Start the runner with Python's own collector settings (the runner's are in engine/play/collector.py).
_DEFAULT_COLLECTOR = """
import contextlib, runpy, sys
import engine.play.collector
engine.play.collector.tuned_collector = contextlib.nullcontext
sys.argv[0] = "runners.concurrent"
runpy.run_module("runners.concurrent", run_name="__main__", alter_sys=True)
"""


def ring_rate(kind: str, games: int = GAMES) -> float:
    """Messages per second of CPU time."""
    gc.collect()
    started = time.process_time()
    asyncio.run(ring.RINGS[kind](games))
    return games * ring.ACTORS * ring.HOPS / (time.process_time() - started)


def ring_rates(repeats: int, games: int = GAMES) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {"bare": [], "bus": []}
    for _ in range(repeats):
        for kind in rates:
            rates[kind].append(ring_rate(kind, games))
    return rates


def autogen_ratio(python: str | None, repeats: int) -> tuple[float | None, str]:
    """autogen-core / bare asyncio, paired, in an interpreter that has autogen-core; or None and why."""
    if python is None:
        if importlib.util.find_spec("autogen_core") is None:
            return None, "autogen-core is not installed here (pip install autogen-core, or --autogen-python)"
        python = sys.executable
    done = subprocess.run(
        [python, str(BENCH / "ring_autogen.py"), "--repeats", str(repeats)], capture_output=True, text=True,
    )
    if done.returncode != 0:
        return None, f"autogen-core ring failed: {done.stderr.strip().splitlines()[-1:]}"
    version = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('autogen-core'))"],
                             capture_output=True, text=True).stdout.strip()
    return float(done.stdout.split()[-1]), f"autogen-core {version}"


def child_cpu(concurrency: int, games: int, default_collector: bool = False) -> float:
    """CPU seconds of one run of the runner in a fresh interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        flags = ["--games", str(games), "--concurrency", str(concurrency), "--no-dashboard", "--out", str(Path(tmp) / "run")]
        command = [sys.executable, "-c", _DEFAULT_COLLECTOR, *flags] if default_collector else [sys.executable, "-m", "runners.concurrent", *flags]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def in_flight_cpu(repeats: int, games: int, collectors: tuple[bool, ...] = (False,)) -> dict[tuple[bool, int], list[float]]:
    """CPU per game (ms) at 256 and 5000 games in flight, runs alternated; keys (Python's collector, C)."""
    found: dict[tuple[bool, int], list[float]] = {(d, c): [] for d in collectors for c in (256, 5000)}
    for _ in range(repeats):
        for default, concurrency in found:
            found[(default, concurrency)].append(child_cpu(concurrency, games, default) / games * 1000)
    return found


def end_to_end(games: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "runners.concurrent", "--games", str(games), "--no-dashboard",
             "--out", str(Path(tmp) / "run")],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - started
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def paired(numerator: list[float], denominator: list[float]) -> float:
    return statistics.median(n / d for n, d in zip(numerator, denominator))


def print_ring(repeats: int, autogen_python: str | None, games: int = GAMES) -> None:
    rates = ring_rates(repeats, games)
    ratio = paired(rates["bus"], rates["bare"])
    print(f"ring {games} games x {ring.ACTORS} actors x {ring.HOPS} messages, a task group per game, {repeats} alternated runs:")
    print(f"  bare asyncio.Queue : {statistics.median(rates['bare']):>9,.0f} msg/s of CPU (median)")
    print(f"  project bus        : {statistics.median(rates['bus']):>9,.0f} msg/s of CPU (median), {ratio:.2f} x bare (paired)")
    autogen, note = autogen_ratio(autogen_python, repeats)
    if autogen is None:
        print(f"  autogen-core       : skipped: {note}")
    else:
        print(f"  {note}: {autogen:.3f} x bare in its interpreter; bus / autogen-core {ratio / autogen:.1f} x")


def print_in_flight(repeats: int, games: int, collector: bool) -> None:
    found = in_flight_cpu(repeats, games, (False, True) if collector else (False,))
    print(f"CPU per game, {games} scripted games, 256 against 5000 in flight, {repeats} alternated runs:")
    for default in sorted({d for d, _ in found}):
        low, high = found[(default, 256)], found[(default, 5000)]
        label = "Python's collector settings" if default else "the runner's collector"
        print(f"  {label:<28}: {statistics.median(low):.3f} ms at 256, {statistics.median(high):.3f} ms at 5000, "
              f"{paired(high, low):.2f} x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="alternated runs of the ring (default 7)")
    parser.add_argument("--ring", action="store_true", help="only the ring")
    parser.add_argument("--ring-games", type=int, nargs="+", default=[GAMES], help="games of the ring, all in flight at once (default 1000)")
    parser.add_argument("--autogen-python", metavar="PYTHON", help="an interpreter with autogen-core installed")
    parser.add_argument("--in-flight", action="store_true", help="only CPU per game at 5000 in flight against 256")
    parser.add_argument("--collector", action="store_true", help="also with Python's own collector settings")
    parser.add_argument("--in-flight-games", type=int, default=20_000, help="games per run of the in-flight comparison")
    parser.add_argument("--in-flight-repeats", type=int, default=3)
    parser.add_argument("--games", type=int, default=1000, help="games in the end-to-end run")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    if not args.in_flight:
        for games in args.ring_games:
            print_ring(args.repeats, args.autogen_python, games)
    if not args.ring:
        print_in_flight(args.in_flight_repeats, args.in_flight_games, args.collector)
    if args.ring or args.in_flight:
        return
    wall, peak_kib = end_to_end(args.games)
    print(f"end to end: {args.games} scripted AsymPuzl games (N=5, share_everything), fresh interpreter:")
    print(f"  wall time  : {wall:.2f} s ({args.games / wall:,.0f} games/s)")
    print(f"  peak memory: {peak_kib / 1024:.1f} MiB max RSS")


if __name__ == "__main__":
    main()
