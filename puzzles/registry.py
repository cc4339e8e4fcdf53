"""The games the engine can play, by name: the only place that names them.

``GAMES`` maps a name to its ``Game``, each checked against the contract once, here
(``puzzles.contract``: a game that lacks a member fails at import, naming the game and the member);
``AnyParams`` is the tagged union of every game's parameters (tagged by ``game``), so a game spec
decodes to the right parameter struct. Adding a game is two lines: its import, and its name in
``registered(...)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Union

from .asympuzl import GAME as ASYMPUZL
from .base import Game, InvalidParameter
from .chain import GAME as CHAIN
from .contract import registered
from .einstein import GAME as EINSTEIN
from .tsp import GAME as TSP

GAMES: Mapping[str, Game] = registered(ASYMPUZL, CHAIN, TSP, EINSTEIN)
DEFAULT_GAME = ASYMPUZL.name

# The names results format 1 gave the games (one agent with both views was a game of its own then).
FORMAT_1_NAMES: Mapping[str, str] = {"asympuzl": "asympuzl", "asympuzl_solo": "asympuzl", "chain": "chain"}

AnyParams = Union[tuple(game.rules.Params for game in GAMES.values())]  # type: ignore[valid-type]


def get_game(name: str, games: Mapping[str, Game] = GAMES) -> Game:
    """The game called ``name``; InvalidParameter naming the choices otherwise."""
    try:
        return games[name]
    except KeyError:
        raise InvalidParameter("game", f"unknown game {name!r}; choose from {', '.join(games)}") from None


def game_of(params) -> str:
    """The name of the game a parameter struct belongs to."""
    return type(params).__struct_config__.tag
