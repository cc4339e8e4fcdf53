"""Merge runs of the same plan into one run directory (for instance halves played on two machines).

    python -m runners.merge OUT_DIR RUN_DIR RUN_DIR [...]

The runs must have the same plan, and a game recorded by more than one of them must have the same
record in each (games are deterministic by seed, so scripted games always agree; model games played
twice do not, and are refused rather than silently dropped). Games lost to the infrastructure count
as not recorded: a record of the game from another run wins. The merged run can be resumed and
reported like any other; when it holds every game, its results are sorted as a finished run's are.
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from engine import RunDir, RunDirError
from engine.records.record import decode_record, encode_record
from engine.records.record import is_infra_error

from runners.args import OneLineParser

PROG = "python -m runners.merge"


def merge(out: Path, sources: list[Path]) -> tuple[int, int]:
    """Merge ``sources`` into a new run at ``out``; (games recorded, games in the plan). RunDirError
    with a one-line reason if the runs do not go together."""
    runs = [RunDir.open(path) for path in sources]
    plans = [run.config() for run in runs]
    for run, plan in zip(runs[1:], plans[1:]):
        if msgspec.json.encode(plan) != msgspec.json.encode(plans[0]):
            raise RunDirError(f"{run.path} has another plan than {runs[0].path}; only runs of one plan merge")
    total = plans[0].total
    chosen: dict[int, tuple[bytes, bool, Path]] = {}  # game id -> (record, lost, from)
    for run in runs:
        for record in run.iter_records():
            if not 0 <= record.game_id < total:
                raise RunDirError(f"{run.results_path} holds game {record.game_id}, outside the plan of {total} games")
            line, lost = encode_record(record), is_infra_error(record)
            have = chosen.get(record.game_id)
            if have is None or (have[1] and not lost):
                chosen[record.game_id] = (line, lost, run.path)
            elif not lost and have[0] != line:
                raise RunDirError(
                    f"game {record.game_id} has different records in {have[2]} and {run.path}; refusing to choose"
                )
    merged = RunDir.create(out, plans[0])
    with merged.lock(), merged.writer() as writer:
        for game_id in sorted(chosen):
            writer.write(decode_record(chosen[game_id][0]))
    merged.finalize(total)
    return len(chosen), total


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    parser = OneLineParser(prog=prog, description="Merge runs of one plan into a new run directory.")
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="the merged run (must not exist yet)")
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN_DIR", help="the runs to merge")
    args = parser.parse_args(argv)
    if len(args.runs) < 2:
        parser.error("argument RUN_DIR: give at least two runs to merge")
    try:
        recorded, total = merge(args.out, args.runs)
    except RunDirError as exc:
        parser.error(str(exc))
    except OSError as exc:
        parser.error(f"cannot merge into {args.out}: {exc.strerror or exc}")
    missing = total - recorded
    print(f"Merged {len(args.runs)} runs into {args.out}: {recorded} of {total} games recorded"
          + (f"; play the other {missing} with: python -m runners.sweep --resume {args.out}" if missing else "."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
