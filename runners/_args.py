"""Argument types shared by the command lines."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def bounded(kind: Callable[[str], Any] = float, low: float | None = None, high: float | None = None, *,
            above: bool = False, what: str = "a number") -> Callable[[str], Any]:
    """An argparse type: ``kind(text)`` within [low, high] (or above ``low`` with ``above``)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        ok = value is not None and (low is None or (value > low if above else value >= low)) and (high is None or value <= high)
        if not ok:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse
