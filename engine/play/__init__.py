"""Playing games: one game as actors on a bus (``game``), many at once under a cap (``run``), the pacing
of game starts (``pacing``), the garbage collector set for many games (``collector``), the leak audit
(``audit``), and the same turn machine as a PettingZoo environment (``aec``, loaded on first use: it
needs the pettingzoo extra)."""

from __future__ import annotations

from engine.lazy import lazy_exports
from engine.play.collector import tune_collector, tuned_collector
from engine.play.game import play_game
from engine.play.pacing import GameStarts
from engine.play.run import GameObserver, LiveGame, RunProgress, run_games

__all__ = [
    "GameEnv", "GameObserver", "GameStarts", "LiveGame", "RunProgress", "ScriptedPlayers", "env", "play_game", "run_games",
    "tune_collector", "tuned_collector",
]

__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(("GameEnv", "ScriptedPlayers", "env"), ".aec"))
