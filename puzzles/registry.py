"""The games the engine can play, by name: the only place that names them.

``GAMES`` maps a name to its ``Game``. A game is loaded (``puzzles/<name>/game.py``) when it is
first looked up, and checked against the contract then, once (``puzzles.contract``: a game that
lacks a member fails with a ``ContractError`` naming the game and the member), so that a run imports
only the games it plays. ``AnyParams`` is the tagged union of every game's parameters (tagged by
``game``), so a game spec decodes to the right parameter struct: the parameters are imported here
(each game's ``params.py``, small), the rest of a game only when it is played. Adding a game is three
lines: the import of its parameters, its name and parameters in ``GameRegistry(...)``, and its
parameters in ``AnyParams`` as the type checker reads it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from importlib import import_module
from typing import TYPE_CHECKING, TypeAlias, Union

from .asympuzl.params import AsymPuzlParams
from .base import Game, InvalidParameter
from .chain.params import ChainParams
from .contract import ContractError, check_contract
from .einstein.params import EinsteinParams
from .tsp.params import TspParams


class GameRegistry(MutableMapping[str, Game]):
    """Games by name, each loaded from ``puzzles.<name>.game`` and checked on first use. A game made
    in code (a test's, a notebook's) can be added as to a dict; it is checked when it is added."""

    def __init__(self, params: Mapping[str, type]) -> None:
        self.params = dict(params)  # name -> the game's parameter struct, which names the folder
        self._loaded: dict[str, Game] = {}
        self._added: dict[str, Game] = {}

    def __getitem__(self, name: str) -> Game:
        found = self._added.get(name) or self._loaded.get(name)
        if found is not None:
            return found
        if name not in self.params:
            raise KeyError(name)
        game = check_contract(import_module(f"{__package__}.{name}.game").GAME)
        if game.name != name or game.rules.Params is not self.params[name]:
            raise ContractError(name, f"puzzles/{name}/game.py must hold the game {name!r} with the parameters the registry names")
        self._loaded[name] = game
        return game

    def __setitem__(self, name: str, game: Game) -> None:
        check_contract(game)
        if game.name != name:
            raise ContractError(game.name, f"registered under another name, {name!r}")
        self._added[name] = game

    def __delitem__(self, name: str) -> None:
        if name in self._added:
            del self._added[name]
        elif name in self.params:
            raise KeyError(f"{name!r} is one of the project's games; it cannot be removed")
        else:
            raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self.params
        yield from (name for name in self._added if name not in self.params)

    def __len__(self) -> int:
        return len(self.params) + sum(name not in self.params for name in self._added)

    def __contains__(self, name: object) -> bool:
        return name in self.params or name in self._added


_REGISTRY = GameRegistry({"asympuzl": AsymPuzlParams, "chain": ChainParams, "tsp": TspParams, "einstein": EinsteinParams})
GAMES: MutableMapping[str, Game] = _REGISTRY
DEFAULT_GAME = "asympuzl"

# The names results format 1 gave the games (one agent with both views was a game of its own then).
FORMAT_1_NAMES: Mapping[str, str] = {"asympuzl": "asympuzl", "asympuzl_solo": "asympuzl", "chain": "chain"}

if TYPE_CHECKING:  # the same union, spelled out for the type checker
    AnyParams: TypeAlias = AsymPuzlParams | ChainParams | TspParams | EinsteinParams
else:
    AnyParams = Union[tuple(_REGISTRY.params.values())]


def get_game(name: str, games: Mapping[str, Game] = GAMES) -> Game:
    """The game called ``name``; InvalidParameter naming the choices otherwise."""
    try:
        return games[name]
    except KeyError:
        raise InvalidParameter("game", f"unknown game {name!r}; choose from {', '.join(games)}") from None


def game_of(params) -> str:
    """The name of the game a parameter struct belongs to."""
    return type(params).__struct_config__.tag
