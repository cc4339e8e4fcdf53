"""python -m runners.play --game NAME --seat ROLE [--partner POLICY]: a person plays ROLE in the browser."""

from __future__ import annotations

import sys

from engine import PolicyFactory

from .cli import prepare
from .run import play


def main(argv: list[str] | None = None) -> int:
    factory = PolicyFactory()
    return play(prepare(argv, factory), factory)


if __name__ == "__main__":
    sys.exit(main())
