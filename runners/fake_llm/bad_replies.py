"""Replies no model should send but some do, for testing that nothing a model writes can stop a run.

Each kind turns the reply a strategy wrote into a bad one, keeping the game playable where it can:
- ``surrogate``: half of a surrogate pair, raw in the prose (it reaches the client as a ``\\ud800``
  escape in the API's JSON) and escaped inside the reply's own JSON message;
- ``control``: control characters in the prose and, escaped, in the message;
- ``braces``: 60,000 unmatched ``{`` before the reply (slow to read for a quadratic reader);
- ``huge``: the reply padded past the length a reply may have (a format error, with its length).
"""

from __future__ import annotations

from puzzles.turn import MAX_REPLY_CHARS

BAD_REPLY_KINDS = ("surrogate", "control", "braces", "huge")
_MESSAGE = '{"message":"'


def bad_reply(kind: str, text: str) -> str:
    if kind == "surrogate":
        return "\udc00 " + text.replace(_MESSAGE, _MESSAGE + "\\ud800", 1)
    if kind == "control":
        return "\x00\x07\x1b[2J\x7f " + text.replace(_MESSAGE, _MESSAGE + "\\u0000\\u001b", 1)
    if kind == "braces":
        return "{" * 60_000 + "\n" + text
    if kind == "huge":
        return "x" * (MAX_REPLY_CHARS + 1) + text
    raise ValueError(f"unknown bad reply {kind!r}; choose from {', '.join(BAD_REPLY_KINDS)}")
