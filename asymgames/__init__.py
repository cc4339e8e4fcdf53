"""asymgames: run agents against each other in cooperative games under information asymmetry.

The command is ``asymgames`` (``asymgames --help``). From Python::

    import asymgames
    asymgames.GAMES                      # the registered games, by name
    await asymgames.run_games(specs, factory=asymgames.PolicyFactory(), concurrency=64, on_record=...)

The names below are loaded on first use, so that importing this package (which the command does
first) imports none of the project's top-level packages.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("asymgames")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"

_EXPORTS = {
    "GAMES": "puzzles", "DEFAULT_GAME": "puzzles", "get_game": "puzzles",
    "Grid": "engine", "GameSpec": "engine", "GameRecord": "engine", "PolicyFactory": "engine",
    "load_grid": "engine", "play_game": "engine", "run_games": "engine", "summarize": "engine",
    "BackendSettings": "engine.backends", "ModelOptions": "engine.backends",
    "GameEnv": "engine.play", "env": "engine.play",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    # Nothing is imported for another name (``from asymgames import cli`` asks first), nor at the top: the
    # command imports this package before it sets the import path that finds the project's packages.
    if name not in _EXPORTS:
        raise AttributeError(f"module 'asymgames' has no attribute {name!r}")
    from engine.lazy import load

    return load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return sorted(__all__)
