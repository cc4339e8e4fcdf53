"""The replay of the position games (AsymPuzl, the chain puzzle): the truth, each role's clues, and
after each turn the role's hypothesis position by position (``puzzles.common.replay`` is the contract)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import msgspec

from ..common.replay import Board, Line, Span, line, role_name
from ..turn import ActionT
from .rules import Feedback, Hypotheses, PositionGame, render_feedback

StateT = TypeVar("StateT", bound=PositionGame)
ItemT = TypeVar("ItemT")  # one position's value


class PositionReplay(Generic[StateT, ItemT, ActionT]):
    """The replay of a position game: the truth, each role's clues, and after each turn the role's
    hypothesis position by position, right or wrong against the truth.

    ``truth_and_hypotheses(state)`` reads the state (as for ``positions.feedback_modes``);
    ``item(value)`` shows one position's value, ``clues(state, role)`` a role's private information,
    ``action(action)`` one action.
    """

    def __init__(
        self,
        truth_and_hypotheses: Callable[[StateT], tuple[Sequence[ItemT], Hypotheses]],
        item: Callable[[ItemT], str],
        clues: Callable[[StateT, str], str],
        action: Callable[[ActionT], str],
    ) -> None:
        self.truth_and_hypotheses = truth_and_hypotheses
        self.item = item
        self.clues = clues
        self.action = action

    def header(self, state: StateT) -> list[Line]:
        truth, hypotheses = self.truth_and_hypotheses(state)
        shown = "  ".join(f"{p}:{self.item(value)}" for p, value in enumerate(truth, 1))
        lines = [line(Span(f"truth: {shown}", "strong"))]
        lines += [line(f"{role_name(role)}'s clues: {self.clues(state, role)}") for role in hypotheses]
        return lines

    def feedback(self, feedback: object) -> str | None:
        if feedback is None:
            return None
        text = render_feedback(msgspec.convert(feedback, Feedback), role_name)
        return text.replace("\n", " ") or None

    def actions(self, actions: tuple[ActionT, ...]) -> str:
        return "; ".join(self.action(a) for a in actions)

    def after(self, state: StateT, role: str) -> list[Line]:
        truth, hypotheses = self.truth_and_hypotheses(state)
        spans = [Span("hypothesis: ")]
        for position, (value, right) in enumerate(zip(hypotheses[role], truth), 1):
            ok = value == right
            spans.append(Span(f"{position}:{self.item(value)} {'✓' if ok else '✗'}  ", "right" if ok else "wrong"))
        return [tuple(spans)]

    def progress(self, state: StateT, value: int | float) -> str:
        truth, _ = self.truth_and_hypotheses(state)
        return f"{value}/{len(truth)} right"

    def board(self, state: StateT) -> Board:
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
