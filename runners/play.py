"""``python -m runners.play --game NAME --seat ROLE [--partner POLICY]``: a person plays ROLE in the browser (``runners.seats.browser``)."""

from __future__ import annotations

import sys

from engine.policies import PolicyFactory
from runners.seats.browser.cli import PROG, prepare
from runners.seats.browser.run import play


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    factory = PolicyFactory()
    return play(prepare(argv, factory, prog), factory)


if __name__ == "__main__":
    sys.exit(main())
