"""``python -m runners.play --game NAME --seat ROLE [--partner POLICY]``: a person plays ROLE in the browser (``runners.seats.browser``)."""

from __future__ import annotations

import sys
from functools import partial

from engine.policies import PolicyFactory
from runners.runloop import run_and_report
from runners.seats.browser.cli import PROG, prepare
from runners.seats.browser.run import serve_and_play


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Play the run and say how it ended; the exit status."""
    factory = PolicyFactory()
    setup = prepare(argv, factory, prog)
    return run_and_report(setup.prepared, factory, partial(serve_and_play, setup, factory), setup.command)


if __name__ == "__main__":
    sys.exit(main())
