"""How a game shows itself in a replay (``Game.faces.replay``), and the lines and tables a replay and a
seat draw with.

The replay viewer (``runners.replay``) shows what every game has: the outcome, the condition, each
turn's feedback, notices, format error, message, deliveries, rejected actions and progress. It
rebuilds the game (``Rules.new``) and applies each turn's actions through ``GameState.step``; a
game's ``Replay`` says the rest: what the game is (its solution, each role's private information),
how its feedback and actions read, and what a turn left in the state. (A game without one gets
its actions shown as JSON and its progress as a number.)

What a replay shows is plain data: lines of spans, each span marked "right", "wrong", "strong" or
"" (plain), and optionally the game's board as a table of such spans (``Board``), for the terminal
replay and the HTML viewer (``runners.view``) to style (green, red, bold) without knowing the game.
"""

from __future__ import annotations

from typing import Literal, Protocol, TypeVar, runtime_checkable

import msgspec

Mark = Literal["", "right", "wrong", "strong"]


class Span(msgspec.Struct, frozen=True, gc=False):
    """Text of a replay line, and what it is: "right", "wrong", "strong" (to stand out) or plain."""

    text: str
    mark: Mark = ""


Line = tuple[Span, ...]


def line(*parts: str | Span) -> Line:
    """A line from plain strings and spans."""
    return tuple(part if isinstance(part, Span) else Span(part) for part in parts)


class Board(msgspec.Struct, frozen=True, gc=False):
    """A game's state drawn as a table: column headings, and rows of cells (one span each)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Span, ...], ...]


def role_name(role: str) -> str:
    """How a replay names a role."""
    return role.capitalize()


StateT_contra = TypeVar("StateT_contra", contravariant=True)  # the game's state (``Rules.new``)
ActionT_contra = TypeVar("ActionT_contra", contravariant=True)  # the game's actions (``Rules.Action``)


class Replay(Protocol[StateT_contra, ActionT_contra]):
    """A game's side of the replay viewer, for a game of state ``StateT_contra`` and actions ``ActionT_contra``."""

    def header(self, state: StateT_contra) -> list[Line]:
        """What the game is, shown once under the title: the solution, each role's private information."""

    def feedback(self, feedback: object) -> str | None:
        """A turn's feedback as a transcript holds it (plain JSON data), as it reads; None: nothing to show."""

    def actions(self, actions: tuple[ActionT_contra, ...]) -> str:
        """A turn's actions (decoded to ``Rules.Action``) in one line."""

    def after(self, state: StateT_contra, role: str) -> list[Line]:
        """What ``role``'s turn left in ``state`` (applied already), shown under the turn."""

    def progress(self, state: StateT_contra, value: int | float) -> str:
        """A role's progress in words ("3/5 right")."""


@runtime_checkable
class BoardReplay(Protocol[StateT_contra]):
    """Optional for a ``Replay``: ``board(state)``, the state drawn as a table (the game's board: the
    AsymPuzl and chain positions, the TSP hallways, the Einstein bins), or None; shown at the start
    and the end of a replay, in the terminal and in the HTML viewer (``runners.view``)."""

    def board(self, state: StateT_contra) -> Board | None: ...
