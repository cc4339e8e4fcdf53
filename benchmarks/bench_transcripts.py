"""What keeping transcripts costs. Prints figures and ratios; asserts nothing.

    .venv/bin/python benchmarks/bench_transcripts.py                  # 20,000 games, 5 rounds
    .venv/bin/python benchmarks/bench_transcripts.py --games 100000 --rounds 1

Runs the main job, ``python -m runners.concurrent --games N --no-dashboard --out DIR`` (scripted
AsymPuzl games, N=5), in a fresh interpreter with transcripts at the default (messages) and with
``--no-messages``, alternated A B B A so that neither is always second; each run's CPU time is the
child's user + sys (``resource.getrusage(RUSAGE_CHILDREN)``). Reports the median of the paired CPU
ratios (default / --no-messages), and the size of the run directory and of the transcripts file of
each. ``--full`` measures ``--transcripts`` too. The machine is shared: absolute times swing with
its load, paired ratios much less.

``--model`` plays the games with two ``vllm:`` agents against the local model server instead
(``runners.fake_llm``, in its own process, answering at once, ``--cache off``): the same AsymPuzl
games, each turn a model call through the lean client; only the runner's CPU is counted.

    .venv/bin/python benchmarks/bench_transcripts.py --model --games 3000 --rounds 6

``--floor`` measures, beside the two, what the file alone costs: each game's end appends one
prepared line (the first game's, its id changed) to the writer's blocks, with no tap, nothing
built and nothing encoded (``floor``), and the same without deflate (``floor-raw``, plain bytes in
place of each gzip member). No transcript that writes a line a game in the playing process costs
less than ``floor``. Every variant is then started through this script, so that all start alike
(in one run with ``none`` started as ``python -m runners.concurrent``, ``floor``, which does more
but was started by this script, used 7% less CPU).

    .venv/bin/python benchmarks/bench_transcripts.py --floor --rounds 8

``--compressors`` instead compresses the lines of one such run in the writer's blocks of 128 KiB with
each compressor at hand (zlib, ISA-L's deflate from ``isal``, zstd where ``zstandard`` is installed):
CPU per game and size against the lines, best of 20.
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {"none": ["--no-messages"], "messages": [], "full": ["--transcripts"], "floor": [], "floor-raw": []}
FLOOR_CHILD = "--floor-child"


def floor_child(variant: str, args: list[str]) -> int:
    """Run the runner with the transcript writer cut down to the file alone (``--floor``)."""
    sys.path.insert(0, str(ROOT))
    from engine.records import transcribe
    from runners.concurrent import main as run_main

    if not variant.startswith("floor"):
        return run_main(args)
    if variant == "floor-raw":
        transcribe.BlockWriter.flush = _raw_flush
    made = transcribe.TranscriptWriter.game_started
    prepared: list[bytes] = []  # the first game's line, without its id

    def game_started(writer, spec):
        return made(writer, spec) if not prepared else None

    def game_finished(writer, spec, record):
        if not prepared:
            line = writer.line(spec, record)
            prepared.append(line[line.index(b","):])
        writer._blocks.buffer += b'{"game_id":%d' % spec.game_id + prepared[0]
        writer._blocks.added(spec.game_id)

    transcribe.TranscriptWriter.game_started = game_started
    transcribe.TranscriptWriter.game_finished = game_finished
    return run_main(args)


def _raw_flush(writer) -> None:
    """``BlockWriter.flush`` with the block's bytes written as they are."""
    import time

    if writer.ids:
        os.write(writer._fd, bytes(writer.buffer))
        writer.buffer.clear()
        writer.ids.clear()
    writer._last_write = time.monotonic()


def one_run(games: int, variant: str, extra: list[str], wrapped: bool = False) -> tuple[float, int, int]:
    """CPU seconds of one run in a fresh interpreter, the run directory's size and the transcripts'.
    ``wrapped``: started through this script (``--floor``: every variant alike, as the floor's must be)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        runner = [__file__, FLOOR_CHILD, variant] if wrapped else ["-m", "runners.concurrent"]
        command = [sys.executable, *runner, "--games", str(games), "--no-dashboard", "--out", str(out), *VARIANTS[variant], *extra]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        files = [p for p in out.iterdir() if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        kept = sum(p.stat().st_size for p in files if p.name.startswith("transcripts"))
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, size, kept


def measure(games: int, rounds: int, variants: list[str], extra: list[str] = (), echo: bool = False,
            wrapped: bool = False) -> dict[str, list[tuple[float, int, int]]]:
    """(CPU seconds, run directory bytes, transcripts bytes) of each run of each variant, alternated."""
    found: dict[str, list[tuple[float, int, int]]] = {v: [] for v in variants}
    for i in range(rounds):
        for variant in (variants if i % 2 == 0 else variants[::-1]):
            found[variant].append(one_run(games, variant, list(extra), wrapped))
            if echo:
                cpu, size, kept = found[variant][-1]
                print(f"  round {i + 1} {variant:<9} {cpu:7.2f} s CPU, run {size / 2**20:7.1f} MiB, transcripts {kept / 2**20:7.1f} MiB",
                      file=sys.stderr, flush=True)
    return found


def ratio(found: dict[str, list[tuple[float, int, int]]], variant: str) -> float:
    """The median of the paired CPU ratios of ``variant`` to ``--no-messages``."""
    return statistics.median(r[0] / b[0] for r, b in zip(found[variant], found["none"]))


def compressors(games: int) -> None:
    """CPU per game and ratio of each compressor on the blocks of one run's messages-only lines."""
    import zlib

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "runners.concurrent", "--games", str(games), "--no-dashboard", "--out", f"{tmp}/run"],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        lines = gzip.open(f"{tmp}/run/transcripts.jsonl.gz").read()
    blocks, block = [], bytearray()
    for line in lines.splitlines(keepends=True):
        block += line
        if len(block) >= 128 * 1024:
            blocks.append(bytes(block))
            block.clear()
    blocks.append(bytes(block))

    def deflate(module, level):
        def compress(data):
            compressor = module.compressobj(level, module.DEFLATED, -15)
            return compressor.compress(data) + compressor.flush() + module.crc32(data).to_bytes(4, "little")
        return compress

    found = {"zlib level 1": deflate(zlib, 1), "zlib level 6": deflate(zlib, 6)}
    try:
        from isal import isal_zlib
        found.update({"isal level 1": deflate(isal_zlib, 1), "isal level 2": deflate(isal_zlib, 2)})
    except ImportError:
        print("isal is not installed")
    try:
        import zstandard
        found.update({f"zstd level {level}": zstandard.ZstdCompressor(level=level).compress for level in (1, 3)})
    except ImportError:
        print("zstandard is not installed")
    print(f"{games} games, {len(lines) / games:,.0f} bytes of lines a game, {len(blocks)} blocks; best of 20:")
    for name, compress in found.items():
        best = min(_timed(compress, blocks) for _ in range(20))
        size = sum(len(compress(b)) for b in blocks)
        print(f"  {name:<13} {best / games * 1e6:6.2f} us a game, {size / len(lines):.3f} of the lines")


def _timed(compress, blocks) -> float:
    import time

    started = time.process_time()
    for block in blocks:
        compress(block)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5, help="pairs of runs (default 5)")
    parser.add_argument("--full", action="store_true", help="also full transcripts (--transcripts)")
    parser.add_argument("--compressors", action="store_true", help="compare compressors on one run's lines instead")
    parser.add_argument("--model", action="store_true", help="games of two vllm: agents against the local model server")
    parser.add_argument("--floor", action="store_true", help="also what the file alone costs (floor, floor-raw)")
    parser.add_argument("extra", nargs="*", help="more flags for every run (after --)")
    args = parser.parse_args()
    if args.compressors:
        compressors(min(args.games, 2000))
        return
    variants = ["none", "messages"] + (["full"] if args.full else []) + (["floor", "floor-raw"] if args.floor else [])
    if args.model:
        from bench_calls import Server

        server = Server()
        os.environ.setdefault("VLLM_API_KEY", "token-bench")  # the local server takes any key
        extra = ["--agent", "alice=vllm:share_everything", "--agent", "bob=vllm:share_everything",
                 "--vllm-url", server.url + "/v1", "--cache", "off", *args.extra]
        try:
            found = measure(args.games, args.rounds, variants, extra, echo=True)
        finally:
            server.close()
    else:
        found = measure(args.games, args.rounds, variants, args.extra, echo=True, wrapped=args.floor)
    kind = "model" if args.model else "scripted"
    print(f"{args.games} {kind} games, {args.rounds} alternated rounds, median CPU and paired ratio to --no-messages:")
    for variant in variants:
        runs = found[variant]
        print(f"  {variant:<9}: {statistics.median(r[0] for r in runs):7.2f} s CPU ({ratio(found, variant):.3f} x), "
              f"run directory {runs[-1][1] / 2**20:.1f} MiB, transcripts {runs[-1][2] / 2**20:.1f} MiB")


if __name__ == "__main__":
    if sys.argv[1:2] == [FLOOR_CHILD]:
        sys.exit(floor_child(sys.argv[2], sys.argv[3:]))
    main()
