"""How a game shows itself in a replay (``Game.replay``), and the replay of the games where every
role edits its own list of positions towards one truth (AsymPuzl, the chain puzzle).

The replay viewer (``runners.replay``) shows what every game has: the outcome, the condition, each
turn's feedback, notices, format error, message, deliveries, rejected actions and progress. It
rebuilds the game (``Game.new``) and applies each turn's actions through ``GameState.step``; a
game's ``Replay`` says the rest: what the game is (its solution, each role's private information),
how its feedback and actions read, and what a turn left in the state. (A game without one gets
its actions shown as JSON and its progress as a number.)

What a replay shows is plain data: lines of spans, each span marked "right", "wrong", "strong" or
"" (plain), and optionally the game's board as a table of such spans (``Board``), for the terminal
replay and the HTML viewer (``runners.view``) to style (green, red, bold) without knowing the game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

import msgspec

from .positions import Feedback, Hypotheses, render_feedback

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


class Replay(Protocol):
    """A game's side of the replay viewer."""

    def header(self, state: Any) -> list[Line]:
        """What the game is, shown once under the title: the solution, each role's private information."""

    def feedback(self, feedback: Any) -> str | None:
        """A turn's feedback as a transcript holds it (plain JSON data), as it reads; None: nothing to show."""

    def actions(self, actions: tuple[Any, ...]) -> str:
        """A turn's actions (decoded to ``Game.Action``) in one line."""

    def after(self, state: Any, role: str) -> list[Line]:
        """What ``role``'s turn left in ``state`` (applied already), shown under the turn."""

    def progress(self, state: Any, value: int | float) -> str:
        """A role's progress in words ("3/5 right")."""

    # Optional: ``board(state) -> Board | None``, the state drawn as a table (the game's board): shown
    # at the start and the end of a replay, in the terminal and in the HTML viewer.


class PositionReplay:
    """The replay of a position game: the truth, each role's clues, and after each turn the role's
    hypothesis position by position, right or wrong against the truth.

    ``truth_and_hypotheses(state)`` reads the state (as for ``positions.feedback_modes``);
    ``item(value)`` shows one position's value, ``clues(state, role)`` a role's private information,
    ``action(action)`` one action.
    """

    def __init__(
        self,
        truth_and_hypotheses: Callable[[Any], tuple[Sequence[Any], Hypotheses]],
        item: Callable[[Any], str],
        clues: Callable[[Any, str], str],
        action: Callable[[Any], str],
    ) -> None:
        self.truth_and_hypotheses = truth_and_hypotheses
        self.item = item
        self.clues = clues
        self.action = action

    def header(self, state: Any) -> list[Line]:
        truth, hypotheses = self.truth_and_hypotheses(state)
        shown = "  ".join(f"{p}:{self.item(value)}" for p, value in enumerate(truth, 1))
        lines = [line(Span(f"truth: {shown}", "strong"))]
        lines += [line(f"{role_name(role)}'s clues: {self.clues(state, role)}") for role in hypotheses]
        return lines

    def feedback(self, feedback: Any) -> str | None:
        if feedback is None:
            return None
        text = render_feedback(msgspec.convert(feedback, Feedback), role_name)
        return text.replace("\n", " ") or None

    def actions(self, actions: tuple[Any, ...]) -> str:
        return "; ".join(self.action(a) for a in actions)

    def after(self, state: Any, role: str) -> list[Line]:
        truth, hypotheses = self.truth_and_hypotheses(state)
        spans = [Span("hypothesis: ")]
        for position, (value, right) in enumerate(zip(hypotheses[role], truth), 1):
            ok = value == right
            spans.append(Span(f"{position}:{self.item(value)} {'✓' if ok else '✗'}  ", "right" if ok else "wrong"))
        return [tuple(spans)]

    def progress(self, state: Any, value: int | float) -> str:
        truth, _ = self.truth_and_hypotheses(state)
        return f"{value}/{len(truth)} right"

    def board(self, state: Any) -> Board:
        """Position by position: the truth, then each role's hypothesis, right or wrong."""
        truth, hypotheses = self.truth_and_hypotheses(state)
        rows = []
        for position, right in enumerate(truth):
            cells = [Span(str(position + 1)), Span(self.item(right), "strong")]
            for role in hypotheses:
                value = hypotheses[role][position]
                cells.append(Span(self.item(value), "right" if value == right else "wrong"))
            rows.append(tuple(cells))
        return Board(("position", "truth", *(role_name(r) for r in hypotheses)), tuple(rows))
