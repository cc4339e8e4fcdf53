"""Sweeps: a grid of conditions, every condition played on the same seeds, run as one run.

A grid is read from TOML, for instance::

    name = "table1"
    seeds = 30                     # games per condition; seed i is the same puzzle in every condition
    agents = [["share_everything", "share_everything"], ["noisy", "noisy"]]   # one name per role
    swap_seats = false             # also play every pair with the seats swapped
    feedback = ["none", "own", "own_detailed", "joint", "both", "both_detailed"]
    size = [5]

Every list field is one axis; the conditions are all their combinations. Game ``c * seeds + i`` is
condition ``c`` on seed ``i``, and its puzzle seed depends only on the run seed and ``i`` (paired).
"""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

import msgspec
from msgspec import UNSET

from bus.channel import ChannelSpec
from puzzles.registry import puzzle_roles

from feedback.modes import MODES
from puzzles.asympuzl import ALICE, InvalidParameter, check_params

from .spec import GameSpec, check_extensions, game_seed

class Grid(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag="grid"):
    name: str = "sweep"
    seeds: int = 30
    seed: int = 0
    puzzle: Literal["asympuzl", "asympuzl_solo", "chain"] = "asympuzl"
    agents: list[list[str]] = msgspec.field(default_factory=lambda: [["share_everything", "share_everything"]])
    swap_seats: bool = False
    size: list[int] = msgspec.field(default_factory=lambda: [5])
    distractors: list[int] = msgspec.field(default_factory=lambda: [0])
    distractors_in: list[Literal["alice", "bob"]] = msgspec.field(default_factory=lambda: ["alice"])
    feedback: list[str] = msgspec.field(default_factory=lambda: ["own_detailed"])
    history: list[int | Literal["full"]] = msgspec.field(default_factory=lambda: [1])
    max_turns: list[int] = []  # empty: 2N for the two-agent game, 1 for the solo check
    # Extensions; an empty list leaves the option unset (the default game).
    topology: list[Literal["all", "directed", "chain"]] = []
    turn_order: list[Literal["round_robin", "simultaneous"]] = []
    max_actions: list[int] = []
    memory: list[Literal["reinject", "scratchpad"]] = []
    channel: list[ChannelSpec] = []
    leak_audit: bool = False

    def roles(self, names: list[str] | None = None) -> tuple[str, ...]:
        """The roles of an agents entry: for the chain puzzle, one per name given."""
        return puzzle_roles(self.puzzle, len(names) if names is not None else 3)

    def agent_rosters(self) -> list[dict[str, str]]:
        rosters = []
        for names in self.agents:
            roles = self.roles(names)
            rosters.append(dict(zip(roles, names)))
            if self.swap_seats and len(names) == 2 and names[0] != names[1]:
                rosters.append(dict(zip(roles, reversed(names))))
        return rosters

    def conditions(self) -> list[dict]:
        """Every combination of the axes, in a fixed order; D = 0 is one condition whatever the side."""
        seen: set[tuple] = set()
        conditions = []
        axes = itertools.product(
            self.agent_rosters(), self.size, self.distractors, self.distractors_in, self.feedback,
            self.history, self.max_turns or [None], self.topology or [UNSET], self.turn_order or [UNSET],
            self.max_actions or [UNSET], self.memory or [UNSET], self.channel or [UNSET],
        )
        for agents, size, distractors, side, feedback, history, max_turns, *options in axes:
            if distractors == 0:
                side = ALICE
            if max_turns is None:
                max_turns = 1 if self.puzzle == "asympuzl_solo" else 2 * size
            condition = {
                "puzzle": self.puzzle, "agents": agents, "size": size, "distractors": distractors,
                "distractors_in": side, "feedback": feedback,
                "history": None if history == "full" else history, "max_turns": max_turns,
            }
            names = ("topology", "turn_order", "max_actions", "memory", "channel")
            condition.update({n: v for n, v in zip(names, options) if v is not UNSET})
            if self.leak_audit:
                condition["leak_audit"] = True
            key = msgspec.json.encode(condition)
            if key not in seen:
                seen.add(key)
                conditions.append(condition)
        return conditions

    @property
    def total(self) -> int:
        return len(self.conditions()) * self.seeds

    def validate(self) -> None:
        """Raise InvalidParameter naming the field."""
        if self.seeds < 1:
            raise InvalidParameter("seeds", f"seeds must be at least 1, got {self.seeds}")
        for field in ("agents", "size", "distractors", "distractors_in", "feedback", "history"):
            if not getattr(self, field):
                raise InvalidParameter(field, f"{field} must list at least one value")
        for names in self.agents:
            roles = self.roles(names)
            if self.puzzle == "chain" and not 2 <= len(names) <= len(puzzle_roles("chain", 99)):
                raise InvalidParameter("agents", f"the chain puzzle takes 2 to {len(puzzle_roles('chain', 99))} agents, got {names}")
            if len(names) != len(roles):
                raise InvalidParameter(
                    "agents", f"each entry of agents names one policy per role ({', '.join(roles)}), got {names}"
                )
            check_extensions(self.puzzle, dict(zip(roles, names)), max(self.distractors), None, None)
        for limit in self.max_actions:
            if limit < 0:
                raise InvalidParameter("max_actions", f"max_actions must be 0 or more, got {limit}")
        for channel in self.channel:
            try:
                channel.check()
            except ValueError as exc:
                raise InvalidParameter("channel", str(exc)) from None
        for size, distractors, side in itertools.product(self.size, self.distractors, self.distractors_in):
            check_params(size, distractors, side)
        for mode in self.feedback:
            if mode not in MODES:
                raise InvalidParameter("feedback", f"feedback must be one of {', '.join(MODES)}, got {mode!r}")
        for history in self.history:
            if history != "full" and history < 0:
                raise InvalidParameter("history", f"history must be 0 or more, or full, got {history}")
        for turns in self.max_turns:
            if turns < 1:
                raise InvalidParameter("max_turns", f"max_turns must be at least 1, got {turns}")

    def specs_for(self, indices: Iterable[int]) -> Iterator[GameSpec]:
        """The games with these ids: game ``c * seeds + i`` is condition ``c`` on seed ``i``."""
        conditions = self.conditions()
        for index in indices:
            condition, i = conditions[index // self.seeds], index % self.seeds
            yield GameSpec(game_id=index, seed=game_seed(self.seed, i), **condition)

    def spec(self, index: int) -> GameSpec:
        return next(self.specs_for([index]))

    def condition_specs(self) -> list[GameSpec]:
        """One game of each condition, in condition order."""
        return list(self.specs_for(range(0, self.total, self.seeds)))


def load_grid(path: Path | str) -> Grid:
    """Read and check a grid file; ValueError with a one-line reason otherwise."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML: {exc}") from None
    data.pop("type", None)
    try:
        grid = msgspec.convert(data, Grid)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{path}: {exc}") from None
    try:
        grid.validate()
    except InvalidParameter as exc:
        raise ValueError(f"{path}: {exc}") from None
    return grid
