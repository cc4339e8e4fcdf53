"""``asymgames batches RUN``: the batches a run sent (``batches.jsonl``) and their state at the
provider; ``--cancel`` cleans up after a run stopped for good (``engine.session.batches``: what is
looked at and what is cleaned up).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from engine.records import RunDirError
from engine.session import Shown, survey

from runners.printable import printable

__all__ = ["main"]


def _table(rows: list[Shown]) -> Any:
    from rich.table import Table
    from rich.text import Text

    table = Table(title_justify="left", title=f"{len(rows)} batch{'es' * (len(rows) != 1)}")
    for column in ("batch", "model", "requests", "log", "status", "done / failed", "note"):
        table.add_column(column, justify="right" if column in ("requests", "done / failed") else "left")
    for row in rows:
        state = row.state
        counts = f"{state.done} / {state.failed} of {state.total}" if state is not None else ""
        note = "; ".join([*([row.problem] if row.problem else []), *row.done])
        # What the provider says (ids, status, errors) shown as text, its controls escaped.
        table.add_row(*(Text(printable(cell)) for cell in (row.batch_id or row.tag, row.model, str(row.requests), row.logged,
                                                           state.status if state else "-", counts, note)))
    return table


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog or "python -m runners.batches",
        description="List a run's batches (--batch) and their state at the provider; --cancel cleans up after a run stopped for good.",
    )
    parser.add_argument("run", help="the run directory")
    parser.add_argument("--cancel", action="store_true",
                        help="cancel the batches still in progress; delete the OpenAI input files, and the output files of "
                             "batches whose games are all recorded (the run must not be in use)")
    args = parser.parse_args(argv)
    try:
        rows = anyio.run(lambda: survey(Path(args.run), dict(os.environ), cancel=args.cancel))
    except (RunDirError, ValueError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    from runners.dashboard import wide_console

    console = wide_console()
    console.print(_table(rows))
    running = sum(1 for r in rows if r.state is not None and not r.state.ended)
    unknown = sum(r.failed for r in rows)
    line = f"{running} in progress"
    if unknown:
        line += f", {unknown} that could not be looked at or cleaned up (see the note)"
    if args.cancel:
        line += f"; cancelled {sum('cancelled' in r.done for r in rows)}"
    console.print(line, highlight=False)
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
