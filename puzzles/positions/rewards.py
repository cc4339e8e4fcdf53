"""The rewards for training (``puzzles.base.Rewards``) of the games played on N positions
(AsymPuzl, chain): each game's ``rewards.py`` names them, from this one computation.

- ``reward``: 1 when the puzzle is solved (every hypothesis matches the truth), else 0: every seat's.
- ``success``: the same, by its name.
- ``correct``: the share of the seat's own hypothesis that is right at the end (positions right over N).
- ``team_correct``: the mean of ``correct`` over the seats.

A turn's reward is the change of the seat's positions right, over N, since its previous turn.
"""

from __future__ import annotations

from typing import Protocol

from ..base import Ending, Rewards


class Sized(Protocol):
    @property
    def size(self) -> int: ...


def seat_rewards(ending: Ending, role: str) -> dict[str, float]:
    size = ending.params.size
    correct = {r: count / size for r, count in ending.metrics.get("correct_positions", {}).items()}
    success = float(ending.success)
    return {
        "reward": success, "success": success, "correct": correct.get(role, 0.0),
        "team_correct": sum(correct.values()) / len(correct) if correct else 0.0,
    }


def progress_scale(params: Sized) -> float:
    return float(params.size)


POSITION_REWARDS = Rewards(seat=seat_rewards, progress_scale=progress_scale)
