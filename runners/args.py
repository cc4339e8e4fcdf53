"""Argument types shared by the command lines, and their parser.

Every type raises ``argparse.ArgumentTypeError`` with a one-line reason, which ``OneLineParser``
prints as ``PROG: error: argument --FLAG: REASON`` with exit status 2. ``key_value`` is the one
reader of ``KEY=VALUE`` arguments (``ROLE=POLICY``, ``PROVIDER=N``, ``MODEL=PRICES``, ...).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Literal, NoReturn, overload


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments give one line naming the argument and exit status 2. A flag is taken only as
    written, never as an abbreviation (``--model openai:gpt-4o`` is not ``--model-seed``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


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


def integer(minimum: int) -> Callable[[str], int]:
    return bounded(int, minimum, what=f"an integer >= {minimum}")


def whole(text: str) -> int:
    """Any integer."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


probability = bounded(float, 0.0, 1.0, what="a probability between 0 and 1")


def choice(choices: list[str]) -> Callable[[str], str]:
    """One of ``choices``, in any case, with dashes read as underscores."""

    def parse(text: str) -> str:
        key = text.strip().lower().replace("-", "_")
        if key not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(choices)}")
        return key

    return parse


def yes_no(text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "yes", "on", "1"):
        return True
    if value in ("false", "no", "off", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


@overload
def key_value(text: str, form: str, *, optional_key: Literal[False] = False, last: bool = False) -> tuple[str, str]: ...
@overload
def key_value(text: str, form: str, *, optional_key: bool, last: bool = False) -> tuple[str | None, str]: ...
def key_value(text: str, form: str, *, optional_key: bool = False, last: bool = False) -> tuple[str | None, str]:
    """``KEY=VALUE`` split at its first ``=`` (its last with ``last``), both stripped; ValueError
    naming ``form`` (how the argument is written, such as ``ROLE=POLICY``) if either part is empty.
    With ``optional_key`` a text without ``=`` is a value alone: (None, VALUE)."""
    key, sep, value = text.rpartition("=") if last else text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep and optional_key:
        return None, text.strip()
    if not sep or not key or not value:
        raise ValueError(f"expected {form}, got {text!r}")
    return key, value


def pair(form: str, read: Callable[[str, str], Any], *, last: bool = False) -> Callable[[str], Any]:
    """An argparse type for ``KEY=VALUE``: ``read(key, value)`` of the split text; a ValueError of
    either step is the flag's one-line error."""
    return checked(lambda text: read(*key_value(text, form, last=last)))


def checked(read: Callable[[str], Any]) -> Callable[[str], Any]:
    """``read`` as an argparse type: its ValueError becomes the flag's one-line error."""

    def parse(text: str) -> Any:
        try:
            return read(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse
