"""The plan of a run: one game's spec (``spec``), the grid of conditions a run plays (``grid``) and
the points where a branch run changes a recorded game (``branching``)."""

from engine.plan.branching import (
    ALTERNATIVES, Alternative, BranchPoint, Drop, Noise, Original, OtherPolicy, Resample, Truncate, branch_points,
    read_alternative,
)
from engine.plan.grid import Grid, grid_from_dict, load_grid
from engine.plan.spec import GameSpec, Options, game_seed

__all__ = [
    "ALTERNATIVES", "Alternative", "BranchPoint", "Drop", "GameSpec", "Noise", "Original", "OtherPolicy", "Resample",
    "Truncate", "Grid", "Options", "branch_points", "game_seed", "grid_from_dict",
    "load_grid", "read_alternative",
]
