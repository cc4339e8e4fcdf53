"""Text that a model or a person wrote, made safe to print to a terminal.

A reply can hold terminal control sequences (``ESC [2J`` clears the screen, ``ESC ]0;...BEL`` sets the
window title), a carriage return that overwrites the line, or a right-to-left override that shows the
text backwards. Everything a runner prints from a record, a transcript or a live game goes through
``printable``: those characters are written as visible escapes (``\\x1b``, ``\\u202e``), the rest as it
is. Hand-written because it is one regular expression; rich strips only a few of these.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional formatting characters.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control and bidirectional formatting character written as an escape."""
    return _UNSAFE.sub(_escape, text)


def printable_all(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with ``printable`` applied to every string in it."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_all(k): printable_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(printable_all(v) for v in value)
    return value
