"""Whether a record is the game the run's plan gives its id: the same seed, game, parameters, options
and agents.

A record changed by hand, or one of another run pasted in, is refused by ``--resume`` and by the
report, and moved aside by ``--repair`` (``engine.records.rundir``). A record saved before a
parameter or option existed holds no value for it, and is compared on the fields it holds;
parameters are compared as the game reads them now (``ResultsFormat.upgrade``) and in their one spelling
(``normal()``), as the plan holds them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from puzzles import get_game

from engine.plan.grid import Grid
from engine.plan.spec import Options
from engine.records.upgrade import upgrade_spec


class _Spec(msgspec.Struct):
    seed: int
    agents: dict[str, str] = {}
    params: dict[str, Any] = {}
    options: dict[str, Any] = {}
    puzzle: str | None = None  # results format 1: the game's name, its parameters flat beside it


class _Placed(msgspec.Struct):
    """The part of a record that says which game it is."""

    game_id: int
    spec: _Spec
    scores: dict[str, Any] = {}
    metrics: dict[str, Any] = {}


_decode_placed = msgspec.json.Decoder(_Placed).decode


class PlanCheck:
    """Compares records with a plan's games; the plan's conditions are worked out once."""

    def __init__(self, plan: Grid) -> None:
        self.seeds = plan.seeds
        self.seed_of = plan.seed_of
        self.conditions = [
            (params, agents, options, msgspec.to_builtins(params), msgspec.to_builtins(options))
            for params, agents, options in plan.conditions()
        ]
        self.total = len(self.conditions) * self.seeds

    def differs(self, line: bytes) -> tuple[int, str | None]:
        """(game id, what of the record is not as planned, in words, or None). None too for a game
        the plan does not have (another check's concern). msgspec.DecodeError, ValidationError or
        ValueError for a line that is not a record."""
        placed = _decode_placed(line)
        game_id, spec = placed.game_id, placed.spec
        if not 0 <= game_id < self.total:
            return game_id, None
        params, agents, options, params_fields, options_fields = self.conditions[game_id // self.seeds]
        if spec.seed != self.seed_of(game_id % self.seeds):
            return game_id, "another seed"
        scores, metrics, upgrade = placed.scores, placed.metrics, True
        if spec.puzzle is not None:
            spec = msgspec.convert(upgrade_spec(msgspec.json.decode(line)["spec"]), _Spec)
            upgrade = False  # what format 1 wrote is read by its own rule, not the game's upgrade
        if spec.agents != agents:
            return game_id, "other agents"
        game = spec.params.get("game")
        if game != params_fields["game"]:
            return game_id, f"another game ({game})"
        Params = type(params)
        held = msgspec.convert({**params_fields, **spec.params}, Params)
        past = get_game(game).results_format
        if upgrade and past.upgrade is not None:
            held = past.upgrade(held, scores, metrics)[0]
        name = _first_difference(held.normal(), params)
        if name is not None:
            return game_id, f"another {name} ({_shown(getattr(held.normal(), name))})"
        name = _first_difference(msgspec.convert({**options_fields, **spec.options}, Options), options)
        if name is not None:
            return game_id, f"another {name} ({_shown(spec.options.get(name))})"
        return game_id, None


def _first_difference(held: msgspec.Struct, planned: msgspec.Struct) -> str | None:
    return next((name for name in planned.__struct_fields__ if getattr(held, name) != getattr(planned, name)), None)


def _shown(value: Any) -> str:
    return msgspec.json.encode(value).decode()
