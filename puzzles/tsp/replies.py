"""Reading and writing Traveling Adventurers replies: ``[Thought]: ...``, ``[Action]: ...`` and
``[Message]: ...`` sections, as the reference agents write them.

Hand-written, in one linear pass each, because the format is the papers' own: sections are found by
their flags (``[Thought]``, ``[Thought-DRAFT]``, ``[Thought-MISSING]``, ``[Action]``,
``[Message]``, any case, the colon optional), the first of each kind counts and runs to the next
flag; actions are ``name(argument)`` with the argument read to its closing parenthesis, minding
quotes and nested brackets (the reference's non-greedy pattern stops at the first ``)`` instead,
which cuts ``ask("what about (L, E)?")`` short; an argument whose brackets do not match is read the
reference's way).
"""

from __future__ import annotations

import re

from ..turn import Rejected, Reply, ReplyFormatError
from .rules import TspAction

_FLAG = re.compile(r"\[(thought-draft|thought-missing|thought|action|message)\][ \t]*:?", re.IGNORECASE)
_NAME = re.compile(r"([A-Za-z_]+(?:-+[A-Za-z_]+)?)\s*\(")
_CLOSING = {"(": ")", "[": "]", "{": "}"}
NO_MESSAGE = "the reply has no [Message] section, so your partner was told it was in the wrong format"
FREE_CHARS = 600  # characters of a thought and of a message under a grammar (a looping model still ends its reply)
ARGUMENT_CHARS = 200  # characters inside an action's parentheses under a grammar
MAX_ACTIONS = 12  # actions in one reply under a grammar


def sections(text: str) -> dict[str, str]:
    """The reply's sections by lower-case flag: the first of each kind, stripped."""
    found: dict[str, str] = {}
    marks = list(_FLAG.finditer(text))
    for mark, following in zip(marks, marks[1:] + [None]):
        flag = mark.group(1).lower()
        end = following.start() if following is not None else len(text)
        found.setdefault(flag, text[mark.end():end].strip())
    return found


def _argument_end(text: str, start: int) -> int | None:
    """The index of the parenthesis that closes the one before ``start``, or None."""
    stack = [")"]
    quote: str | None = None
    i = start
    while i < len(text):
        char = text[i]
        if quote is not None:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in _CLOSING:
            stack.append(_CLOSING[char])
        elif char in ")]}":
            if char != stack[-1]:
                return None
            stack.pop()
            if not stack:
                return i
        i += 1
    return None


def read_actions(line: str) -> tuple[tuple[TspAction, ...], tuple[Rejected, ...]]:
    """Every ``name(argument)`` in the [Action] section, and the ones left unclosed."""
    actions: list[TspAction] = []
    rejected: list[Rejected] = []
    position = 0
    while (found := _NAME.search(line, position)) is not None:
        end = _argument_end(line, found.end())
        if end is None:  # unbalanced inside: the argument runs to the first ")", as the reference reads it
            first = line.find(")", found.end())
            end = first if first >= 0 else None
        name = re.sub(r"-+", "-", found.group(1).lower())
        if end is None:
            rejected.append(Rejected(line[found.start():found.start() + 80], "the parenthesis is never closed"))
            break
        actions.append(TspAction(name, line[found.end():end].strip()))
        position = end + 1
    return tuple(actions), tuple(rejected)


def parse_reply(text: str) -> Reply:
    """A reply as the game reads it. A reply with no [Action] and no [Message] section cannot be
    read; one with no [Message] keeps its actions, and its partner sees the wrong-format marker."""
    found = sections(text)
    if "action" not in found and "message" not in found:
        raise ReplyFormatError("the reply has no [Action] and no [Message] section")
    actions, rejected = read_actions(found.get("action", ""))
    if "message" not in found:
        rejected += (Rejected("[Message]", NO_MESSAGE),)
    return Reply(message=found.get("message", ""), actions=actions, rejected=rejected)


def format_reply(thought: str, actions: tuple[TspAction, ...], message: str, *, draft: bool = False) -> str:
    """A reply in the game's format (``draft``: the baseline and grounding agents' thought flag)."""
    flag = "[Thought-DRAFT]" if draft else "[Thought]"
    return f"{flag}: {thought}\n[Action]: {', '.join(str(a) for a in actions)}\n[Message]: {message}"


def _gbnf(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def reply_grammar(actions: tuple[str, ...]) -> str:
    """The reply as a GBNF grammar (``puzzles.base.ReplyGrammar``): a thought under any of its flags,
    then ``[Action]:`` with ``name(argument)`` for the ``actions`` named, separated by commas, then
    ``[Message]:``; free text holds no ``[`` (no flag inside it) and is bounded, as are arguments, so
    that a reply always ends whole."""
    return "\n".join([
        'root ::= thought "\\n[Action]: " actions "\\n[Message]: " free',
        'thought ::= ("[Thought]" | "[Thought-DRAFT]" | "[Thought-MISSING]") ": " free',
        f'actions ::= (action (", " action){{0,{MAX_ACTIONS - 1}}})?',
        f'action ::= ({" | ".join(_gbnf(name) for name in actions)}) "(" argument ")"',
        f"argument ::= [^()\\n]{{0,{ARGUMENT_CHARS}}}",
        f"free ::= [^\\[]{{0,{FREE_CHARS}}}",
    ]) + "\n"
