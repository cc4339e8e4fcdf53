"""The leak audit: no agent may be shown information private to another agent, except through
what the channels delivered to it.

Information is audited as facts: pairs of words that belong together in one unit, such as the
fields of one entry of a list together with the entry's place in it. A role's private facts are
those its private information (``GameState.private``) holds and no other role's does. On every turn
the audit looks at everything the agent was shown (its view, feedback, notices, the conversation,
its scratchpad and prompt), cut into small units: a line or clause of text, or one entry of a list
of items together with its number. A private fact of another role found inside one unit is a leak
unless the agent could know it: from its own private information, from a unit of a message
delivered to it, or from what it wrote itself (its replies and actions, including its own wrong
guesses). A leak ends the game with an error of kind "leak".

A game whose private information is made of phrases (the Einstein game's constraints, where every
pair of block numbers is also on the table for all to see) says so with ``GameState.secrets(role)``:
the phrases only ``role`` holds at the start, written as its prompts write them. ``PhraseAudit``
then looks for other roles' phrases in the text each agent is shown (its prompt, or the game's
rendering of its turn for agents that send none), known once a delivered message or the agent's
own reply carried them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from bus import Act, Chat

_WORD = re.compile(r"[a-z0-9]+")
_CLAUSE = re.compile(r"[\n;.!?]")
Fact = frozenset  # of two words

_SCALARS = (str, int, type(None))


class LeakDetected(Exception):
    kind = "leak"


def _is_item(value: Any) -> bool:
    """One entry of a list of items: a struct or tuple of single words."""
    if isinstance(value, msgspec.Struct):
        fields = [getattr(value, f) for f in value.__struct_fields__]
    elif isinstance(value, tuple):
        fields = list(value)
    else:
        return False
    return all(isinstance(f, _SCALARS) and not (isinstance(f, str) and " " in f) for f in fields)


def _words(value: Any) -> set[str]:
    fields = [getattr(value, f) for f in value.__struct_fields__] if isinstance(value, msgspec.Struct) else value
    return {str(f).lower() for f in fields if f is not None and not isinstance(f, bool)}


def units(value: Any) -> list[set[str]]:
    """``value`` cut into units of words that belong together."""
    out: list[set[str]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.extend(set(_WORD.findall(part)) for part in _CLAUSE.split(item.lower()))
        elif _is_item(item):
            out.append(_words(item))
        elif isinstance(item, (list, tuple)):
            if item and all(_is_item(x) for x in item):  # a list of items: number each one
                out.extend(_words(x) | {str(i)} for i, x in enumerate(item, start=1))
            else:
                stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, msgspec.Struct):
            stack.extend(getattr(item, f) for f in item.__struct_fields__)
    return [u for u in out if len(u) >= 2]


def facts_in(value: Any) -> set[Fact]:
    found: set[Fact] = set()
    for unit in units(value):
        words = sorted(unit)
        found.update(Fact((a, b)) for i, a in enumerate(words) for b in words[i + 1 :])
    return found


class LeakAudit:
    """A tap for one game. ``private`` maps each role to its private information."""

    def __init__(self, private: dict[str, Any]) -> None:
        own = {role: facts_in(view) for role, view in private.items()}
        self.private = {
            role: own[role] - set().union(*(own[r] for r in private if r != role)) for role in private
        }
        self.known: dict[str, set[Fact]] = {role: set(own[role]) for role in private}

    def _learn(self, role: str, value: Any) -> None:
        others = set().union(*(facts for r, facts in self.private.items() if r != role))
        if not others:
            return
        known = self.known.setdefault(role, set())
        for unit in units(value):
            known.update(f for f in others if f <= unit)

    def tap(self, address: str, message: Any) -> None:
        if isinstance(message, Chat):
            self._learn(message.recipient, message.text)
        elif isinstance(message, Act):
            if message.context is not None:
                self.check(message.role, (message.context, message.prompt))
            self._learn(message.role, (message.reply, message.message, message.actions))

    def check(self, role: str, shown: Any) -> None:
        others = set().union(*(facts for r, facts in self.private.items() if r != role))
        suspects = others - self.known.get(role, set())
        if not suspects:
            return
        leaked = {f for f in suspects for unit in units(shown) if f <= unit}
        if leaked:
            shown_facts = "; ".join(" & ".join(sorted(f)) for f in sorted(leaked, key=sorted)[:5])
            raise LeakDetected(
                f"{role} was shown {shown_facts}, private to another agent and never delivered to {role}"
            )


def _texts(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (dicts, lists, tuples)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


class PhraseAudit:
    """A tap for one game whose state names its secrets. ``secrets`` maps each role to its phrases;
    ``render(context)`` is the game's prompt for a turn, for agents that report none."""

    def __init__(self, secrets: dict[str, tuple[str, ...]], render: Callable[[Any], tuple[str, str]]) -> None:
        own = {role: set(phrases) for role, phrases in secrets.items()}
        self.private = {
            role: own[role] - set().union(*(own[r] for r in secrets if r != role)) for role in secrets
        }
        self.known: dict[str, set[str]] = own
        self.render = render

    def _others(self, role: str) -> set[str]:
        return set().union(*(phrases for r, phrases in self.private.items() if r != role))

    def _learn(self, role: str, texts: Iterator[str]) -> None:
        others = self._others(role) - self.known.setdefault(role, set())
        if others:
            text = "\n".join(texts)
            self.known[role].update(p for p in others if p in text)

    def tap(self, address: str, message: Any) -> None:
        if isinstance(message, Chat):
            self._learn(message.recipient, iter((message.text,)))
        elif isinstance(message, Act):
            if message.prompt is not None:
                self.check(message.role, "\n".join(_texts(message.prompt)))
            elif message.context is not None:
                self.check(message.role, "\n".join(self.render(message.context)))
            self._learn(message.role, iter((message.reply, message.message)))

    def check(self, role: str, shown: str) -> None:
        leaked = sorted(p for p in self._others(role) - self.known.get(role, set()) if p in shown)
        if leaked:
            raise LeakDetected(
                f"{role} was shown {'; '.join(leaked[:5])}, private to another agent and never delivered to {role}"
            )
