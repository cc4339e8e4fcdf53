"""The Einstein game in a replay (``runners.replay``): the goal layout and each player's initial
knowledge under the title, each step's action in one line, and after each step the table drawn as
text (the seven bins with their blocks, each block in its goal bin marked right)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.replay import Board, Line, Span, line, role_name
from .actions import Action, Unreadable, action_text, item_text
from .board import BIN_NAMES, BL, BR, COMMON, P1_BIN, P2_BIN, ROLES, TL, TR
from .validity import to_item

if TYPE_CHECKING:
    from .rules import EinsteinGame

_ROWS = ((TL, P2_BIN, TR), (COMMON,), (BL, P1_BIN, BR))


class EinsteinReplay:
    def header(self, state: EinsteinGame) -> list[Line]:
        instance = state.instance
        goals = "  ".join(
            f"{BIN_NAMES[bin_]}: {', '.join(f'block{b}' for b in range(instance.n) if instance.goal[b] == bin_)}"
            for bin_ in (TL, TR, BL, BR)
        )
        lines = [line(Span(f"goal: {goals}", "strong")), line(f"game ID: {instance.id}")]
        for role in ROLES:
            items = ", ".join(item_text(to_item(instance.items[i])) for i in instance.knowledge[role])
            lines.append(line(f"{role_name(role)} knows: {items}"))
        return lines

    def feedback(self, feedback: object) -> str | None:
        return None

    def actions(self, actions: tuple[Action, ...]) -> str:
        return "; ".join(f"unreadable: {a.text!r}" if isinstance(a, Unreadable) else action_text(a) for a in actions)

    def after(self, state: EinsteinGame, role: str) -> list[Line]:
        out: list[Line] = []
        if state.history and state.history[-1][0] == role:
            _, action, failed = state.history[-1]
            out.append(line(Span(f"step {len(state.history)}: {action_text(action)}", "wrong" if failed else "right"),
                            ", but failed." if failed else ""))
        goal = state.instance.goal
        for row in _ROWS:
            spans = []
            for bin_ in row:
                blocks = [b for b, where in enumerate(state.board) if where == bin_]
                spans.append(Span(f"{BIN_NAMES[bin_]}: "))
                for b in blocks:
                    spans.append(Span(f"block{b} ", "right" if goal[b] == bin_ else ""))
                spans.append(Span("  "))
            out.append(tuple(spans))
        return out

    def progress(self, state: EinsteinGame, value: int | float) -> str:
        return f"{value}/{state.instance.n} placed"

    def board(self, state: EinsteinGame) -> Board:
        """The table bin by bin: the blocks in it (those in their goal bin marked right) and the goal."""
        goal = state.instance.goal
        rows = []
        for bin_ in (bin_ for row in _ROWS for bin_ in row):
            blocks = [b for b, where in enumerate(state.board) if where == bin_]
            wanted = [b for b in range(state.instance.n) if goal[b] == bin_]
            shown = " ".join(f"block{b}{'✓' if goal[b] == bin_ else ''}" for b in blocks)
            right = bool(blocks) and all(goal[b] == bin_ for b in blocks)
            rows.append((Span(BIN_NAMES[bin_]), Span(shown, "right" if right and wanted else ""),
                         Span(" ".join(f"block{b}" for b in wanted))))
        return Board(("bin", "blocks", "goal"), tuple(rows))


REPLAY = EinsteinReplay()

__all__ = ["REPLAY", "EinsteinReplay"]
