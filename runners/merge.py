"""``python -m runners.merge OUT_DIR RUN_DIR RUN_DIR [...]``: merge runs of the same plan into one run
directory (``engine.records.merging``: the rules)."""

from __future__ import annotations

import sys
from pathlib import Path

from engine.records import RunDirError, merge_runs

from runners.args import OneLineParser

PROG = "python -m runners.merge"


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    parser = OneLineParser(prog=prog, description="Merge runs of one plan into a new run directory.")
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="the merged run (must not exist yet)")
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN_DIR", help="the runs to merge")
    args = parser.parse_args(argv)
    if len(args.runs) < 2:
        parser.error("argument RUN_DIR: give at least two runs to merge")
    try:
        recorded, total = merge_runs(args.out, args.runs)
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
