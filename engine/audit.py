"""The leak audit: no agent may be shown information private to another agent, except through
what the channels delivered to it.

Each role's private words are the values only its clues hold (for AsymPuzl, Bob's colors and the
distractors in one view; for the chain puzzle, each agent's new attribute). The audit watches a game's
bus: it notes every word delivered to each agent, and checks everything each agent was shown on each
turn (its clues, hypothesis, feedback, notices, the conversation shown, its scratchpad and prompt).
A private word of another agent that was never delivered to this one is a leak: the game ends with
an error of kind "leak".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import msgspec

from bus import Act, Chat

_WORD = re.compile(r"[a-z]+")


class LeakDetected(Exception):
    kind = "leak"


def words_in(value: Any) -> set[str]:
    """Every lower-case word in any string inside ``value`` (structs, containers, text)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.update(_WORD.findall(item.lower()))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif isinstance(item, msgspec.Struct):
            stack.extend(getattr(item, f) for f in item.__struct_fields__)
    return found


class LeakAudit:
    def __init__(self, private: dict[str, Iterable[str]]) -> None:
        self.private = {role: set(words) for role, words in private.items()}
        self.heard: dict[str, set[str]] = {role: set() for role in private}

    def tap(self, address: str, message: Any) -> None:
        if isinstance(message, Chat):
            self.heard.setdefault(message.recipient, set()).update(words_in(message.text))
        elif isinstance(message, Act) and message.context is not None:
            self.check(message.role, message.context, message.prompt)

    def check(self, role: str, context: Any, prompt: Any = None) -> None:
        shown = words_in(context) | words_in(prompt)
        others = set().union(*(words for r, words in self.private.items() if r != role))
        leaked = (shown & others) - self.heard.get(role, set()) - self.private.get(role, set())
        if leaked:
            raise LeakDetected(
                f"{role} was shown {', '.join(sorted(leaked))}, private to another agent and never "
                f"delivered to {role}"
            )
