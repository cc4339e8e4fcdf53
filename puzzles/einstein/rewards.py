"""The Einstein game's rewards for training (``puzzles.base.Rewards``), the one place they are named.

- ``reward``: 1 when every block is in its bin (SR), else 0: every seat's.
- ``success``: the same, by its name.
- ``partial``: the share of the blocks in their right bins at the end (Sub.R), every seat's.
- ``step_efficiency``: the reference planner's optimal steps over the steps taken (1 / StepR) when
  the game is solved, else 0; above 1 when a guess landed.
- ``failed_steps``: the reference's own reward for the seat, -0.1 for each of its steps that failed.

A turn's reward is the change of the blocks in their right bins, over the blocks, since the seat's
previous turn: the board is shared, so a partner's step counts in the seat's next turn.
"""

from __future__ import annotations

from ..base import Ending, Rewards
from .params import EinsteinParams


def seat_rewards(ending: Ending, role: str) -> dict[str, float]:
    scores = ending.scores
    success = float(ending.success)
    ratio = scores.get("step_ratio")
    return {
        "reward": success, "success": success, "partial": float(scores.get("partial", 0.0)),
        "step_efficiency": 1 / float(ratio) if ending.success and ratio else 0.0,
        "failed_steps": float(ending.metrics.get("reward", {}).get(role, 0.0)),
    }


def progress_scale(params: EinsteinParams) -> float:
    return float(params.blocks)


REWARDS = Rewards(seat=seat_rewards, progress_scale=progress_scale)
