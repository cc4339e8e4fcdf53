"""Traveling Adventurers' rewards for training (``puzzles.base.Rewards``), the one place they are
named. The game's result is shared, so every seat's rewards are the same.

- ``reward``: the agreed tour's percentile among every tour of the house (``percentile``), as a
  share from 0 to 1, when both players agreed on a correct tour; else 0.
- ``success``: 1 when both submitted the same tour and it is a tour of every room (``correct``).
- ``identical``: 1 when both submitted the same path, a tour or not.
- ``optimal``: 1 when the agreed tour collects the most coins there are.
- ``s90``: 1 when the agreed tour is at or above the 90th percentile.

A turn's reward is the change of the seat's progress (the share of the rooms it has walked, 1 once
it submitted) since its previous turn.
"""

from __future__ import annotations

from ..base import Ending, Rewards
from .params import TspParams


def seat_rewards(ending: Ending, role: str) -> dict[str, float]:
    scores = ending.scores
    correct = bool(scores.get("correct", False))
    percentile = float(scores.get("percentile", 0.0)) if correct else 0.0
    return {
        "reward": percentile / 100, "success": float(correct), "identical": float(bool(scores.get("identical", False))),
        "optimal": float(bool(scores.get("optimal", False))), "s90": float(bool(scores.get("s90", False))),
    }


def progress_scale(params: TspParams) -> float:
    return 1.0


REWARDS = Rewards(seat=seat_rewards, progress_scale=progress_scale)
