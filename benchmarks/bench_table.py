"""The engine's costs against bare anchors, every row in one run. Prints a table; asserts nothing.

    .venv/bin/python benchmarks/bench_table.py
    .venv/bin/python benchmarks/bench_table.py --autogen-python /path/to/python --quick

Rows (each from its own benchmark, whose docstring says how it measures):
1. CPU per model call on the OpenAI-compatible path (``bench_calls.py``), against a bare aiohttp +
   msgspec client sending the same request, and against the openai SDK alone;
2. the ring in the shape of a game (``bench_engine.py``), against bare ``asyncio.Queue`` mailboxes,
   and against autogen-core where an interpreter has it;
3. memory per game in flight (``bench_memory.py``), against the bare ring;
4. CPU per game at 5000 games in flight against 256 (``bench_engine.py``);
5. CPU and size of the transcripts kept by default, against ``--no-messages`` (``bench_transcripts.py``).
Every ratio is the median of ratios of runs made one after the other on the same machine; absolute
figures swing with the machine's load, the ratios much less.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_calls  # noqa: E402
import bench_engine  # noqa: E402
import bench_memory  # noqa: E402
import bench_transcripts  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--autogen-python", metavar="PYTHON", help="an interpreter with autogen-core installed")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and games (about 3 minutes)")
    args = parser.parse_args()
    rounds = 2 if args.quick else 5
    rows: list[tuple[str, str, str, str]] = []

    calls = bench_calls.measure(rounds, calls=1000 if args.quick else 2000, games=150 if args.quick else 300)
    bare, sdk = bench_calls.BARE, bench_calls.SDK
    lean_x = bench_calls.paired(calls, "call path, lean client", bare)
    sdk_x = bench_calls.paired(calls, "call path, sdk client", sdk)
    games_x = bench_calls.paired(calls, "whole games, lean client", bare)
    rows.append((
        "engine CPU per model call, OpenAI-compatible path", f"bare client {statistics.median(calls[bare]):.0f} us; SDK alone {statistics.median(calls[sdk]):.0f} us",
        f"lean: {lean_x:.2f} x bare; SDK path: {sdk_x:.2f} x SDK alone (whole games: {games_x:.2f} x bare)", "<= 2 x bare; <= 1.2 x SDK",
    ))

    rates = bench_engine.ring_rates(rounds + 2)
    ring_x = bench_engine.paired(rates["bus"], rates["bare"])
    autogen, note = bench_engine.autogen_ratio(args.autogen_python, rounds)
    versus = f"{ring_x / autogen:.1f} x {note}" if autogen is not None else f"autogen-core: {note}"
    rows.append((
        "ring in the shape of a game", f"bare asyncio.Queue {statistics.median(rates['bare']):,.0f} msg/s",
        f"{ring_x:.2f} x bare; {versus}", ">= 0.85 x bare; >= 15 x autogen-core",
    ))

    memory = bench_memory.per_game_in_flight(max(2, rounds - 2))
    rows.append((
        "memory per game in flight", f"bare ring {statistics.median(memory['bare']):.1f} KiB",
        f"{statistics.median(memory['bus']):.1f} KiB", "<= 25 KiB",
    ))

    games = 10_000 if args.quick else 20_000
    cpu = bench_engine.in_flight_cpu(max(1, rounds - 2), games, (False, True))
    tuned = bench_engine.paired(cpu[(False, 5000)], cpu[(False, 256)])
    default = bench_engine.paired(cpu[(True, 5000)], cpu[(True, 256)])
    rows.append((
        "CPU per game at 5000 games in flight vs 256", f"{statistics.median(cpu[(False, 256)]):.2f} ms a game at 256",
        f"{tuned:.2f} x (Python's collector settings: {default:.2f} x)", "<= 1.2 x",
    ))

    kept = bench_transcripts.measure(games, rounds, ["none", "messages"])
    rows.append((
        "transcripts kept by default (messages, gzip blocks)", f"--no-messages: {statistics.median(r[0] for r in kept['none']):.2f} s CPU",
        f"{bench_transcripts.ratio(kept, 'messages'):.3f} x CPU; transcripts {kept['messages'][-1][2] / 2**20:.1f} MiB for {games} games",
        "<= 1.03 x CPU; <= 0.5 x the plain lines",
    ))

    print("| workload | anchor | now | target |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
