"""Replies no model should send but some do, for testing that nothing a model writes can stop a run.

Each kind turns the reply a strategy wrote into a bad one, keeping the game playable where it can:
- ``surrogate``: half of a surrogate pair, raw in the prose (it reaches the client as a ``\\ud800``
  escape in the API's JSON) and escaped inside the reply's own JSON message;
- ``control``: control characters in the prose and, escaped, in the message;
- ``braces``: 60,000 unmatched ``{`` before the reply (slow to read for a quadratic reader);
- ``huge``: the reply padded past the length a reply may have (a format error, with its length);
- ``hostile``: ``HOSTILE_MESSAGE`` put in front of the reply's message (or its reasoning, in a game
  without messages; the game goes on): text that a page or a terminal must show as text, never act on.
"""

from __future__ import annotations

import json

from puzzles.turn import MAX_REPLY_CHARS

BAD_REPLY_KINDS = ("surrogate", "control", "braces", "huge", "hostile")

HOSTILE_MESSAGE = (
    "\x1b]0;pwned\x07\x1b[2J\x1b[H\r\x08\x00\x7f\x9b31m "  # terminal: window title, clear, home, CR, C1 CSI
    "\u202etxet\u202c \u200b\u200d\ufeff \u2066isolate\u2069 "  # bidi and zero width
    "<!--<script>alert('comment')</script></script><img src=x onerror=alert('img')>"  # markup breakers
    "<a href=\"javascript:alert('href')\">link</a>[md](javascript:alert('md')) &amp; ${{7*7}} {{7*7}} "
    "\U0001f600 e\u0301 " + "[" * 500 + "]" * 500 + " " + "\\u" * 50 + " " + "W" * 4000
)
"""A message of everything that breaks pages and terminals (long and bracket-deep as well)."""
_MESSAGE = '{"message":"'


def bad_reply(kind: str, text: str) -> str:
    if kind == "surrogate":
        return "\udc00 " + text.replace(_MESSAGE, _MESSAGE + "\\ud800", 1)
    if kind == "control":
        return "\x00\x07\x1b[2J\x7f " + text.replace(_MESSAGE, _MESSAGE + "\\u0000\\u001b", 1)
    if kind == "braces":
        return "{" * 60_000 + "\n" + text
    if kind == "hostile":
        if _MESSAGE in text:  # a JSON reply
            return text.replace(_MESSAGE, _MESSAGE + json.dumps(HOSTILE_MESSAGE)[1:-1], 1)
        for marker in ("[Message]: ", "<THINK>"):  # a reply in tagged lines, a reply with its reasoning in tags
            if marker in text:
                return text.replace(marker, marker + HOSTILE_MESSAGE, 1)
        return HOSTILE_MESSAGE + "\n" + text
    if kind == "huge":
        return "x" * (MAX_REPLY_CHARS + 1) + text
    raise ValueError(f"unknown bad reply {kind!r}; choose from {', '.join(BAD_REPLY_KINDS)}")
