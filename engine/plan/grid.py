"""The plan of a run: a grid of conditions, every condition played on the same seeds.

A single run is a one-point grid. A grid is read from TOML, for instance::

    name = "table1"
    game = "NAME"                  # a game of puzzles.registry (default: its DEFAULT_GAME)
    seeds = 30                     # games per condition; seed i is the same instance in every condition
    agents = [["share_everything", "share_everything"], ["noisy", "noisy"]]   # one name per role
    swap_seats = false             # also play every pair with the seats swapped
    feedback = ["none", "own"]     # the game's feedback modes
    size = [5]                     # any parameter of the game, as a list
    branch_from = "runs/first"     # a branch run: the run it plays again (engine.plan.branching)
    branch = [{turn = 2, role = "ROLE", alternative = "drop"}]   # one seat's message changed at a turn
    group = 8                      # rollouts: each condition played 8 times on each seed (members 0 to 7)
    seed_indices = [0, 1, 3]       # a branch run of a run that stopped early: the seeds it finished

Every list is one axis; the conditions are all their combinations. Keys that are not the grid's own
are the game's parameters (checked against its ``Params``). Game ``c * seeds + i`` is condition
``c`` on seed ``i``, and its seed depends only on the run seed and ``i`` (paired); with
``seed_indices``, on seed ``seed_indices[i]`` (``seeds`` is then their number). A group's members
are the innermost axis (``member``), so the K games of one seed follow each other in the play
order and a group fills at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from bus.channel import ChannelSpec
from puzzles import DEFAULT_GAME, GAMES, Game, InvalidParameter, get_game

from engine.backends.tomlfile import read_toml
from engine.plan.branching import BranchPoint
from engine.plan.spec import GameSpec, Options, game_seed

EXTENSION_AXES = ("topology", "turn_order", "max_actions", "memory", "channel", "branch", "member")
MAX_TURNS = 1000  # rounds: more is a typo, and a game that long would hold its memory for hours


class Grid(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag="grid"):
    name: str = "run"
    game: str = DEFAULT_GAME
    seeds: int = 30
    seed: int = 0
    agents: list[list[str]] = msgspec.field(default_factory=lambda: [["share_everything", "share_everything"]])
    swap_seats: bool = False
    params: dict[str, list[Any]] = {}  # the game's parameters, each an axis; absent: the default
    feedback: list[str] = []  # empty: the game's default mode
    history: list[int | Literal["full"]] = msgspec.field(default_factory=lambda: [1])
    max_turns: list[int] = []  # empty: the game's default for each condition
    # Extensions; an empty list leaves the option unset.
    topology: list[Literal["all", "directed", "chain"]] = []
    turn_order: list[Literal["round_robin", "simultaneous"]] = []
    max_actions: list[int] = []
    memory: list[Literal["reinject", "scratchpad"]] = []
    channel: list[ChannelSpec] = []
    branch: list[BranchPoint] = []
    leak_audit: bool = False
    group: int = 0  # K games of each condition on each seed (rollouts: ``Options.member``); 0: none
    branch_from: str = ""  # the run a branch run plays again, as given (its games pair with these by seed)
    seed_indices: list[int] = []  # the seeds played, when not 0 .. seeds - 1 (their number is ``seeds``)

    def the_game(self, games: Mapping[str, Game] = GAMES) -> Game:
        return get_game(self.game, games)

    def agent_rosters(self, games: Mapping[str, Game] = GAMES) -> list[dict[str, str]]:
        game = self.the_game(games)
        rosters = []
        for names in self.agents:
            roles = game.roster(len(names))
            rosters.append(dict(zip(roles, names)))
            if self.swap_seats and len(names) == 2 and names[0] != names[1]:
                rosters.append(dict(zip(roles, reversed(names))))
        return rosters

    def parameter_sets(self, games: Mapping[str, Game] = GAMES) -> list[Any]:
        """Every combination of the parameter axes, in the order of the game's fields, each in its
        one spelling (``normal()``)."""
        return [params.normal() for params in self._given_sets(games)]

    def _given_sets(self, games: Mapping[str, Game]) -> list[Any]:
        """Every combination of the parameter axes as given (a value ``normal()`` drops is checked too)."""
        Params = self.the_game(games).rules.Params
        unknown = [name for name in self.params if name not in Params.__struct_fields__]
        if unknown:
            raise InvalidParameter(unknown[0], f"{self.game} has no parameter {unknown[0]!r}; it has {', '.join(Params.__struct_fields__)}")
        names = [n for n in Params.__struct_fields__ if n in self.params]
        sets = []
        for values in itertools.product(*(self.params[n] for n in names)):
            try:
                params = msgspec.convert(dict(zip(names, values)), Params)
            except msgspec.ValidationError as exc:
                raise InvalidParameter(_path_field(exc, names), f"{self.game} parameters: {exc}") from None
            sets.append(params)
        return sets

    def conditions(self, games: Mapping[str, Game] = GAMES) -> list[tuple[Any, dict[str, str], Options]]:
        """Every combination of the axes, in a fixed order, each once: (params, agents, options)."""
        game = self.the_game(games)
        seen: set[bytes] = set()
        conditions = []
        turn_limits: list[int | None] = [*self.max_turns] or [None]
        axes = itertools.product(
            self.agent_rosters(games), self.parameter_sets(games), self.feedback or [game.rules.default_feedback],
            self.history, turn_limits,
            *((list(range(self.group)) if n == "member" else getattr(self, n)) or [UNSET] for n in EXTENSION_AXES),
        )
        for agents, params, feedback, history, max_turns, *extensions in axes:
            if max_turns is None:
                max_turns = game.rules.default_max_turns(params, tuple(agents))
            options = Options(
                feedback=feedback, max_turns=max_turns, history=None if history == "full" else history,
                leak_audit=True if self.leak_audit else UNSET,
                **dict(zip(EXTENSION_AXES, extensions)),
            )
            key = msgspec.json.encode((params, agents, options))
            if key not in seen:
                seen.add(key)
                conditions.append((params, agents, options))
        return conditions

    @property
    def total(self) -> int:
        return len(self.conditions()) * self.seeds

    def validate(self, games: Mapping[str, Game] = GAMES) -> None:
        """Raise InvalidParameter naming the field."""
        game = self.the_game(games)
        if self.seeds < 1:
            raise InvalidParameter("seeds", f"seeds must be at least 1, got {self.seeds}")
        if self.group < 0:
            raise InvalidParameter("group", f"group must be 0 (none) or more, got {self.group}")
        if self.group and self.branch:
            raise InvalidParameter("group", "a branch run plays no groups; give group or branch, not both")
        if self.seed_indices and (len(self.seed_indices) != self.seeds or len(set(self.seed_indices)) != self.seeds
                                  or min(self.seed_indices) < 0):
            raise InvalidParameter("seed_indices", f"seed_indices must be {self.seeds} different numbers of 0 or more (seeds)")
        for field in ("agents", "history"):
            if not getattr(self, field):
                raise InvalidParameter(field, f"{field} must list at least one value")
        for name, values in self.params.items():
            if not values:
                raise InvalidParameter(name, f"{name} must list at least one value")
        for names in self.agents:
            game.roster(len(names))
        for params in self._given_sets(games):
            params.check()
        for mode in self.feedback:
            if mode not in game.rules.feedback:
                raise InvalidParameter("feedback", f"feedback must be one of {', '.join(game.rules.feedback)}, got {mode!r}")
        for history in self.history:
            if history != "full" and history < 0:
                raise InvalidParameter("history", f"history must be 0 or more, or full, got {history}")
        for turns in self.max_turns:
            if not 1 <= turns <= MAX_TURNS:
                raise InvalidParameter("max_turns", f"max_turns must be from 1 to {MAX_TURNS}, got {turns}")
        for limit in self.max_actions:
            if limit < 0:
                raise InvalidParameter("max_actions", f"max_actions must be 0 or more, got {limit}")
        for channel in self.channel:
            try:
                channel.check()
            except ValueError as exc:
                raise InvalidParameter("channel", str(exc)) from None
        for point in self.branch:
            for roster in self.agent_rosters(games):
                try:
                    point.check(tuple(roster))
                except ValueError as exc:
                    raise InvalidParameter("branch", str(exc)) from None

    def specs_for(self, indices: Iterable[int], games: Mapping[str, Game] = GAMES) -> Iterator[GameSpec]:
        """The games with these ids: game ``c * seeds + i`` is condition ``c`` on seed ``i``."""
        conditions = self.conditions(games)
        for index in indices:
            (params, agents, options), i = conditions[index // self.seeds], index % self.seeds
            yield GameSpec(game_id=index, seed=self.seed_of(i), params=params, agents=agents, options=options)

    def seed_of(self, i: int) -> int:
        """The seed of the games on seed number ``i`` (game ``c * seeds + i`` of every condition ``c``)."""
        return game_seed(self.seed, self.seed_indices[i] if self.seed_indices else i)

    def spec(self, index: int, games: Mapping[str, Game] = GAMES) -> GameSpec:
        return next(self.specs_for([index], games))

    def condition_specs(self, games: Mapping[str, Game] = GAMES) -> list[GameSpec]:
        """One game of each condition, in condition order."""
        return list(self.specs_for(range(0, self.total, self.seeds), games))


def _path_field(exc: msgspec.ValidationError, names: list[str]) -> str:
    """The parameter a validation error names (at ``$.name``), else the first one."""
    text = str(exc)
    return next((name for name in names if f"$.{name}" in text), names[0] if names else "params")


GRID_KEYS = frozenset(Grid.__struct_fields__) - {"params"}


def grid_from_dict(data: dict[str, Any], games: Mapping[str, Game] = GAMES, *, game: str | None = None) -> Grid:
    """A grid from a TOML table (as a dict): keys that are not the grid's own are the game's parameter
    axes (a single value counts as a one-value list); ``game`` overrides the table's game.
    ValueError with a one-line reason."""
    data = dict(data)
    if game is not None:
        data["game"] = game
    data.pop("type", None)
    params = dict(data.pop("params", {}))
    played = get_game(data.get("game", DEFAULT_GAME), games)
    for key in [k for k in data if k not in GRID_KEYS]:
        if key not in played.rules.Params.__struct_fields__:
            fields = sorted(GRID_KEYS | set(played.rules.Params.__struct_fields__))
            raise ValueError(f"unknown key {key!r}; a grid of {played.name} takes {', '.join(fields)}")
        params[key] = data.pop(key)
    params = {k: v if isinstance(v, list) else [v] for k, v in params.items()}
    try:
        grid = msgspec.convert({**data, "params": params}, Grid)
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from None
    grid.validate(games)
    return grid


def load_grid(path: Path | str, games: Mapping[str, Game] = GAMES, *, game: str | None = None) -> Grid:
    """Read and check a grid file; ValueError with a one-line reason otherwise."""
    data = read_toml(path, "grid file")
    try:
        return grid_from_dict(data, games, game=game)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
