"""The engine: game specs become actors on a bus, games run concurrently, records go to disk."""

from .game import play_game
from .policies import PolicyFactory
from .records import ErrorInfo, GameRecord
from .results import RunDir, RunDirError
from .run import RunProgress, run_games
from .spec import GameSpec, RunConfig, game_seed
from .stats import ConditionSummary, summarize, wilson_interval

__all__ = [
    "ConditionSummary", "ErrorInfo", "GameRecord", "GameSpec", "PolicyFactory", "RunConfig",
    "RunDir", "RunDirError", "RunProgress", "game_seed", "play_game", "run_games", "summarize",
    "wilson_interval",
]
