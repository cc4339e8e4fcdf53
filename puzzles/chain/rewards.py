"""The chain game's rewards for training (``puzzles.base.Rewards``), the one place they are named:
those of the games played on positions (``puzzles.positions.rewards``).

- ``reward``: 1 when the puzzle is solved (every hypothesis matches the truth), else 0: every seat's.
- ``success``: the same, by its name.
- ``correct``: the share of the seat's own hypothesis that is right at the end (positions right over N).
- ``team_correct``: the mean of ``correct`` over the seats.

A turn's reward is the change of the seat's positions right, over N, since its previous turn.
"""

from __future__ import annotations

from ..positions.rewards import POSITION_REWARDS as REWARDS

__all__ = ["REWARDS"]
