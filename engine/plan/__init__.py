"""The plan of a run: one game's spec (``spec``) and the grid of conditions a run plays (``grid``)."""

from engine.plan.grid import Grid, grid_from_dict, load_grid
from engine.plan.spec import GameSpec, Options, game_seed

__all__ = ["GameSpec", "Grid", "Options", "game_seed", "grid_from_dict", "load_grid"]
