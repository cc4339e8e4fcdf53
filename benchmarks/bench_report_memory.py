"""Memory of ``asymgames report`` and ``asymgames merge`` against the size of the run. Prints
figures; asserts nothing.

    .venv/bin/python benchmarks/bench_report_memory.py                      # 1,000 and 1,000,000 games
    .venv/bin/python benchmarks/bench_report_memory.py --games 1000 100000

For each size, a run directory of a grid of 4 conditions (two agent pairs x two feedback modes) is
written without playing: every line is a template record of its condition and outcome, encoded once,
with the game's own id and seed (the plan's, so the report's check against the plan passes) put in.
Then, each in a fresh interpreter whose peak resident set is read by a small parent
(``getrusage(RUSAGE_CHILDREN).ru_maxrss`` after that one child):

- ``asymgames report RUN --no-plots`` on the run as a finished run leaves it (sorted by game id);
- the same on the lines in another order (games finishing in shuffled blocks, as a run still going
  leaves them): read window by window;
- ``asymgames merge OUT A B`` of two overlapping parts of the run, each in that shuffled order.

Each peak is printed with its ratio to the smallest run's (the target: at most 1.2).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.plan.grid import grid_from_dict  # noqa: E402
from engine.plan.spec import game_seed  # noqa: E402
from engine.records.record import ErrorInfo, GameRecord, encode_record  # noqa: E402
from engine.records.rundir import RunDir  # noqa: E402
from puzzles import TurnLog  # noqa: E402

CONDITIONS = 4
GAME_ID, SEED = 7777777777777, 8888888888888  # stand-ins in the templates, replaced line by line
OUTCOMES = ("success", "success", "failure", "error")  # a game's outcome by its id modulo 4
BLOCK = 512  # games finishing in shuffled order within blocks of this many ids


def plan_of(games: int):
    return grid_from_dict({
        "game": "asympuzl", "seeds": games // CONDITIONS, "size": [5], "feedback": ["own", "joint"],
        "agents": [["share_everything", "share_everything"], ["one_piece", "share_everything"]],
    })


def template(spec, outcome: str) -> list[bytes]:
    """The record of a game of ``spec``'s condition with this outcome, cut where its id and seed go."""
    roles = list(spec.agents)
    spec = msgspec.structs.replace(spec, game_id=GAME_ID, seed=SEED)
    log = [TurnLog(turn=t // len(roles) + 1, role=roles[t % len(roles)], message_chars=137, reply_chars=300 + t, applied=1)
           for t in range(3)]
    record = GameRecord(
        game_id=GAME_ID, spec=spec, outcome=outcome, turns=2, solved_turn=2 if outcome == "success" else None,
        scores={f"actions_per_position.{r}": 1.25 for r in roles},
        metrics={"correct_positions": {r: 5 for r in roles}}, format_errors={r: 0 for r in roles},
        invalid_actions={r: 0 for r in roles}, message_chars={r: [137, 137] for r in roles}, turn_log=log,
        error=ErrorInfo("infra_error", "InfraError", "HTTP 503") if outcome == "error" else None,
    )
    line = encode_record(record) + b"\n"
    head, rest = line.split(str(GAME_ID).encode(), 1)
    inner, rest = rest.split(str(GAME_ID).encode(), 1)
    middle, tail = rest.split(str(SEED).encode(), 1)
    return [head, inner, middle, tail]


def write_results(path: Path, plan, ids) -> None:
    specs = plan.condition_specs()
    parts = {(c, o): template(spec, o) for c, spec in enumerate(specs) for o in set(OUTCOMES)}
    seeds = [str(game_seed(plan.seed, i)).encode() for i in range(plan.seeds)]
    with path.open("wb") as f:
        chunk = []
        for game_id in ids:
            head, inner, middle, tail = parts[(game_id // plan.seeds, OUTCOMES[game_id % len(OUTCOMES)])]
            gid = str(game_id).encode()
            chunk.append(b"".join((head, gid, inner, gid, middle, seeds[game_id % plan.seeds], tail)))
            if len(chunk) == 10_000:
                f.write(b"".join(chunk))
                chunk.clear()
        f.write(b"".join(chunk))


def shuffled(ids: range, rng: random.Random) -> list[int]:
    """``ids`` in blocks of BLOCK, each block in shuffled order, as games finish in a run."""
    out: list[int] = []
    for start in range(ids.start, ids.stop, BLOCK):
        block = list(range(start, min(start + BLOCK, ids.stop)))
        rng.shuffle(block)
        out += block
    return out


def make_run(path: Path, plan, ids) -> Path:
    RunDir.create(path, plan)
    write_results(path / "results.jsonl", plan, ids)
    return path


def peak(args: list[str]) -> tuple[float, float]:
    """(peak MiB, wall seconds) of ``python -m asymgames ARGS`` in a fresh interpreter."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
        "if done.returncode: sys.exit(done.stderr)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.perf_counter() - t)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "asymgames", *args],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]) / 1024, float(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=[1000, 1_000_000])
    parser.add_argument("--dir", type=Path, help="where to write the runs (default: a temporary directory)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench_report_", dir=args.dir))
    rng = random.Random(0)
    first: dict[str, float] = {}
    print(f"{'games':>10} {'write s':>8} | {'report MiB':>10} {'ratio':>5} {'s':>6} | {'out of order':>12} {'ratio':>5} "
          f"{'s':>6} | {'merge MiB':>9} {'ratio':>5} {'s':>6}")
    try:
        for games in sorted(args.games):
            plan = plan_of(games)
            total = plan.total
            started = time.perf_counter()
            sorted_run = make_run(base / f"sorted-{games}", plan, range(total))
            unsorted_run = make_run(base / f"unsorted-{games}", plan, shuffled(range(total), rng))
            part_a = make_run(base / f"a-{games}", plan, shuffled(range(0, total * 6 // 10), rng))
            part_b = make_run(base / f"b-{games}", plan, shuffled(range(total * 4 // 10, total), rng))
            written = time.perf_counter() - started
            found = {
                "report": peak(["report", str(sorted_run), "--no-plots"]),
                "unsorted": peak(["report", str(unsorted_run), "--no-plots"]),
                "merge": peak(["merge", str(base / f"merged-{games}"), str(part_a), str(part_b)]),
            }
            for name, (mib, _) in found.items():
                first.setdefault(name, mib)
            cells = [f"{mib:{w}.1f} {mib / first[name]:5.2f} {s:6.1f}" for (name, (mib, s)), w in zip(found.items(), (10, 12, 9))]
            print(f"{games:>10} {written:8.1f} | " + " | ".join(cells), flush=True)
            for path in base.glob(f"*-{games}"):
                shutil.rmtree(path)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
