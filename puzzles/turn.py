"""A turn as an agent sees it and answers it: the context it is given (its own view, the
conversation it was shown, notices), the reply as read, and the limits every reply is read within.
Both the policies (``puzzles.policy``) and the games' prompters and seats speak these."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec

ViewT = TypeVar("ViewT")  # what a game shows a role each turn (its state's ``view``)
ActionT = TypeVar("ActionT")  # what a game's actions decode to


MAX_REPLY_CHARS = 100_000
"""A longer reply is not read: it is a format error, recorded with its length (about 25 times the
longest reply 4096 output tokens give)."""


def clean_text(text: str) -> str:
    """``text`` with every character that cannot be stored as UTF-8 (half of a surrogate pair)
    replaced by U+FFFD; text that can be stored comes back as it is."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class ReplyFormatError(ValueError):
    """A reply cannot be read at all (the whole turn is lost); the message says why."""


class Rejected(msgspec.Struct, frozen=True, gc=False):
    """An action that was not applied, and why."""

    action: str
    reason: str


class ChatLine(msgspec.Struct, frozen=True, gc=False):
    turn: int
    sender: str
    text: str


class TurnContext(msgspec.Struct, Generic[ViewT], frozen=True, gc=False):
    """Everything an agent may use to act: its own view (a game's prompter reads it as
    ``TurnContext[ItsView]``), never another agent's.

    ``reinjected`` is False where the agent's memory is its scratchpad and this is not its first
    turn: its private starting information is then not shown again (a prompt shows ``scratchpad``
    in its place).
    """

    game_id: int
    role: str
    turn: int
    max_turns: int
    view: ViewT
    feedback: Any
    conversation: tuple[ChatLine, ...]
    notices: tuple[str, ...] = ()
    partners: tuple[str, ...] = ()  # who this agent may talk to
    directed: bool = False  # each message goes to one partner, named in the reply's "to"
    scratchpad: str | None = None  # what the agent wrote for itself last turn, where allowed
    keeps_notes: bool = False  # the reply may carry a "scratchpad"
    reinjected: bool = True
    derived: Any = None  # what the agent's own modules worked out before this turn (``AgentModules.prepare``)


class Reply(msgspec.Struct, Generic[ActionT], frozen=True, gc=False):
    """A reply as read: the message to partners, the actions, the actions that could not be read."""

    message: str
    actions: tuple[ActionT, ...]
    rejected: tuple[Rejected, ...] = ()
    to: str | None = None  # the one recipient, where messages are directed
    scratchpad: str | None = None  # what the agent carries to its next turn, where allowed
