"""What the engine needs from a game. Implementations are synchronous and hold no event-loop state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import msgspec


class Rejected(msgspec.Struct, frozen=True, gc=False):
    """An action that was not applied, and why."""

    action: str
    reason: str


def position_metrics(writes: dict[str, list[int]], progress: dict[str, int]) -> dict[str, Any]:
    """The record's figures for a game played on positions: how often each agent wrote each position
    (and its mean per position) and how many positions each got right."""
    return {
        "actions_per_position": {r: sum(c) / len(c) for r, c in writes.items()},
        "position_actions": {r: list(c) for r, c in writes.items()},
        "correct_positions": progress,
    }


class GameRules(Protocol):
    """One game in progress: roles in turn order, each role's state, actions, the end."""

    roles: tuple[str, ...]
    max_turns: int

    def clues(self, role: str) -> Any:
        """What ``role`` privately knows; fixed for the whole game."""

    def hypothesis(self, role: str) -> Any:
        """The state ``role`` edits, as it is now."""

    def hypotheses(self) -> Mapping[str, Any]:
        """Every role's state, for feedback."""

    def apply(self, role: str, actions: tuple[Any, ...]) -> tuple[int, tuple[Any, ...]]:
        """Apply ``role``'s actions; return how many were applied and the rejected ones."""

    def solved(self) -> bool: ...

    def progress(self, role: str) -> int:
        """How far ``role`` is (for AsymPuzl: positions right)."""

    def metrics(self) -> dict[str, Any]:
        """Game-specific figures for the record, JSON-encodable."""
