"""The engine: game specs become actors on a bus, games run concurrently, records go to disk."""

from .game import play_game
from .policies import PolicyFactory
from .records import ErrorInfo, GameRecord
from .results import Plan, RunDir, RunDirError
from .run import RunProgress, run_games
from .spec import GameSpec, Options, game_seed
from .stats import ConditionSummary, summarize, wilson_interval
from .sweep import Grid, grid_from_dict, load_grid

__all__ = [
    "ConditionSummary", "ErrorInfo", "GameRecord", "GameSpec", "Grid", "Options", "Plan", "PolicyFactory",
    "RunDir", "RunDirError", "RunProgress", "game_seed", "grid_from_dict", "load_grid", "play_game",
    "run_games", "summarize", "wilson_interval",
]
