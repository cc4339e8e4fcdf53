"""The engine's costs against bare anchors, every row in one run. Prints a table; asserts nothing.

    .venv/bin/python benchmarks/bench_table.py
    .venv/bin/python benchmarks/bench_table.py --quick            # fewer rounds and games
    .venv/bin/python benchmarks/bench_table.py --ray              # and 100,000 games on 2 Ray workers
    .venv/bin/python benchmarks/bench_table.py --autogen-python /path/to/python

Rows (each from its own benchmark, whose docstring says how it measures):
1. CPU per model call on the OpenAI-compatible path (``bench_calls.py``): whole games less the same
   games offline, per call, against a bare aiohttp + msgspec client sending the same request; the
   call path alone against the openai SDK alone;
2. reading a well-formed reply against ``msgspec.json.decode`` of its object (``bench_replies.py``);
3. counting a call's tokens up front when a token limit applies (``bench_calls.py``);
4. memory per real AsymPuzl game in flight, 5000 against 256 (``bench_memory.py``), and per ring game;
5. the ring in the shape of a game at 1,000 and 10,000 games (``bench_engine.py``), against bare
   ``asyncio.Queue`` mailboxes, and against autogen-core where an interpreter has it;
6. CPU per game at 5000 games in flight against 256 (``bench_engine.py``);
7. CPU and size of the transcripts kept by default, against ``--no-messages`` (``bench_transcripts.py``);
8. with ``--ray``: 100,000 offline games on 2 Ray workers against one process, start-up included,
   and the cluster's start-up (``bench_cluster.py``).
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
import bench_replies  # noqa: E402
import bench_engine  # noqa: E402
import bench_memory  # noqa: E402
import bench_transcripts  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--autogen-python", metavar="PYTHON", help="an interpreter with autogen-core installed")
    parser.add_argument("--quick", action="store_true", help="fewer rounds and games")
    parser.add_argument("--ray", action="store_true", help="also 100,000 games on 2 Ray workers (a few minutes more)")
    args = parser.parse_args()
    rounds = 2 if args.quick else 5
    rows: list[tuple[str, str, str, str]] = []

    calls = bench_calls.measure(rounds, calls=1000 if args.quick else 2000, games=150 if args.quick else 300)
    bare, sdk = bench_calls.BARE, bench_calls.SDK
    extra = bench_calls.extra_per_call(calls)
    extra_x = statistics.median(e / b for e, b in zip(extra, calls[bare]))
    games_x = bench_calls.paired(calls, "whole games, lean client", bare)
    lean_x = bench_calls.paired(calls, "call path, lean client", bare)
    sdk_x = bench_calls.paired(calls, "call path, sdk client", sdk)
    rows.append((
        "engine CPU per model call, lean client, whole games (extra CPU over the same games offline)",
        f"bare aiohttp request {statistics.median(calls[bare]):.0f} us",
        f"{statistics.median(extra):.0f} us = {extra_x:.2f} x (whole games {games_x:.2f} x; call path alone {lean_x:.2f} x; "
        f"SDK path {sdk_x:.2f} x the SDK alone)", "<= 2 x",
    ))

    replies = bench_replies.well_formed_times(rounds)
    rows.append((
        "reading a well-formed reply", "msgspec.json.decode of the same object",
        "; ".join(f"{name} {r / a:.1f} x" for name, (r, a) in replies.items()), "<= 2 x",
    ))

    counting = statistics.median(t / c - 1 for t, c in zip(calls[bench_calls.TOKEN_LIMIT], calls["call path, lean client"]))
    rows.append((
        "token estimate per call", "the call path without a token limit (nothing counted up front)",
        f"with a token limit: {counting * 100:+.1f}% CPU per call; without one: not run", "<= 3%",
    ))

    real = bench_memory.real_game_in_flight(max(2, rounds - 2), games=10_000 if args.quick else 20_000)
    memory = bench_memory.per_game_in_flight(max(2, rounds - 2))
    rows.append((
        "memory per real AsymPuzl game in flight (5,000 vs 256 in flight)",
        f"ring game {statistics.median(memory['bus']):.1f} KiB (bare ring {statistics.median(memory['bare']):.1f} KiB)",
        f"{statistics.median(real):.1f} KiB", "<= 25 KiB",
    ))

    for games in (1000, 10_000):
        rates = bench_engine.ring_rates(rounds + 2 if games == 1000 else rounds, games)
        ring_x = bench_engine.paired(rates["bus"], rates["bare"])
        versus = ""
        if games == 1000:
            autogen, note = bench_engine.autogen_ratio(args.autogen_python, rounds)
            versus = f"; {ring_x / autogen:.1f} x {note}" if autogen is not None else f"; autogen-core: {note}"
        rows.append((
            f"ring at {games:,} games in flight", f"bare asyncio.Queue {statistics.median(rates['bare']):,.0f} msg/s",
            f"{ring_x:.2f} x bare{versus}", ">= 0.9 x bare",
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
        "transcripts on by default (messages, gzip blocks)", f"--no-messages: {statistics.median(r[0] for r in kept['none']):.2f} s CPU",
        f"{bench_transcripts.ratio(kept, 'messages'):.3f} x CPU; transcripts {kept['messages'][-1][2] / 2**20:.1f} MiB for {games} games",
        "<= 1.03 x CPU; <= 0.5 x the plain lines",
    ))

    if args.ray:
        import bench_cluster

        speed, start_up = bench_cluster.bench_offline(100_000, 2, 256)
        rows.append((
            "100,000 offline games, 2 Ray workers vs 1 process, start-up included", "one process",
            f"{speed:.2f} x; cluster start-up {start_up:.1f} s", ">= 1.5 x; start <= 5 s",
        ))

    print("| workload | anchor | now | target |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
