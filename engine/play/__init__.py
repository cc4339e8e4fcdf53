"""Playing games: one game as actors on a bus (``game``), many at once under a cap (``run``), the pacing
of game starts (``pacing``), the garbage collector set for many games (``collector``), the leak audit
(``audit``), and the same turn machine as a PettingZoo environment (``aec``, loaded on first use: it
needs the pettingzoo extra)."""

from __future__ import annotations

from typing import Any

from engine.play.collector import tune_collector, tuned_collector
from engine.play.game import play_game
from engine.play.pacing import GameStarts
from engine.play.run import GameObserver, LiveGame, RunProgress, run_games

__all__ = [
    "GameEnv", "GameObserver", "GameStarts", "LiveGame", "RunProgress", "ScriptedPlayers", "env", "play_game", "run_games",
    "tune_collector", "tuned_collector",
]


def __getattr__(name: str) -> Any:
    if name in ("GameEnv", "ScriptedPlayers", "env"):
        from engine.play import aec

        return getattr(aec, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
