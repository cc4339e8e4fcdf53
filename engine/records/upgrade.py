"""Reading results written by format 1 (before games were folders behind one contract).

Format 1 wrote a game spec with the game's parameters among the engine's fields (``puzzle`` naming
the game, its parameters beside ``feedback`` and ``max_turns``), a plan that was either a single
condition (``"type": "run"``, one field per role) or a grid, and the game's figures as fields of the
record. Format 2 nests them (``params``, ``options``), has one plan type, and keeps the figures in
the record's ``scores`` and ``metrics``. What each game wrote is the game's to say
(``ResultsFormat.format_1``); old game names are in ``puzzles.registry.FORMAT_1_NAMES``. A format-1 record,
upgraded, is the record format 2 writes for the same game, less what format 1 did not record.

A game that changes what it records says how to read its older format-2 records
(``ResultsFormat.upgrade``, ``upgrade_current``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from puzzles import FORMAT_1_NAMES, DEFAULT_GAME, Game, get_game
from puzzles.base import Format1Reader

from engine.records.record import GameRecord
from engine.plan.spec import EXTENSIONS
from engine.plan.grid import EXTENSION_AXES, Grid

_ENGINE_FIELDS = ("feedback", "max_turns", "history")


def _game(fields: dict[str, Any]) -> tuple[Game, Format1Reader]:
    """The game a format-1 record or plan names, and how format 1 wrote it."""
    game = get_game(FORMAT_1_NAMES.get(fields.get("puzzle") or DEFAULT_GAME, fields.get("puzzle", "")))
    if game.results_format.format_1 is None:
        raise ValueError(f"{game.name} was never written by results format 1")
    return game, game.results_format.format_1


def is_format_1(record: dict[str, Any]) -> bool:
    return "puzzle" in record.get("spec", {})


def upgrade_spec(old: dict[str, Any]) -> dict[str, Any]:
    game, format_1 = _game(old)
    options = {k: old[k] for k in _ENGINE_FIELDS if k in old}
    options.update({k: old[k] for k in EXTENSIONS if k in old})
    return {
        "game_id": old["game_id"],
        "seed": old["seed"],
        "params": {"game": game.name, **format_1.params(old)},
        "agents": old.get("agents", {}),
        "options": options,
    }


def upgrade_record(old: dict[str, Any]) -> GameRecord:
    """A format-1 record (as decoded JSON) as a format-2 record."""
    _, format_1 = _game(old["spec"])
    scores, metrics, replaced = format_1.figures(old)
    new = {k: v for k, v in old.items() if k not in replaced}
    new["spec"] = upgrade_spec(old["spec"])
    new["scores"], new["metrics"] = scores, metrics
    return msgspec.convert(new, GameRecord)


def upgrade_current(record: GameRecord) -> GameRecord:
    """A format-2 record as its game records it now (``ResultsFormat.upgrade``)."""
    upgrade = get_game(record.spec.game).results_format.upgrade
    if upgrade is None:
        return record
    params, scores, metrics = upgrade(record.spec.params, record.scores, record.metrics)
    if params is record.spec.params and scores is record.scores and metrics is record.metrics:
        return record
    spec = msgspec.structs.replace(record.spec, params=params)
    return msgspec.structs.replace(record, spec=spec, scores=scores, metrics=metrics)


def upgrade_plan(old: dict[str, Any]) -> Grid:
    """A format-1 plan (a single condition or a grid, as decoded JSON) as a grid."""
    game, format_1 = _game(old)
    if old.get("type") == "run":
        history = old.get("history", 1)
        grid = {
            "name": "run", "game": game.name, "seeds": old.get("games", 1000), "seed": old.get("seed", 0),
            "agents": [[old[role] for role in game.roles if old.get(role)]],
            "params": {k: [v] for k, v in format_1.params(old).items()},
            "feedback": [old["feedback"]] if "feedback" in old else [],
            "history": ["full" if history is None else history],
            "max_turns": [old["max_turns"]] if old.get("max_turns") is not None else [],
            "leak_audit": bool(old.get("leak_audit")),
        }
        grid.update({k: [old[k]] for k in EXTENSION_AXES if old.get(k) is not None})
        return msgspec.convert(grid, Grid)
    params = format_1.params(old)
    grid = {k: v for k, v in old.items() if k in Grid.__struct_fields__ and k not in params}
    grid.update(game=game.name, params=params)
    return msgspec.convert(grid, Grid)


def upgrade_saved_plan(plan: Grid, first_record: bytes | None) -> Grid:
    """A saved format-2 plan with the parameters its game added since (``ResultsFormat.saved_before``), at
    the values its games were played with: added when the plan lacks one and the run's first record
    (a line of results, None if none) was written before it existed. A plan that lacks one and
    whose records have it (a grid that left it at its default) is left as it is, unless the game's
    default changed since (``ResultsFormat.default_was``) and the record holds the earlier default: then
    the plan gets that value."""
    if first_record is None:
        return plan
    try:
        played = msgspec.json.decode(first_record, type=_Played).spec.params
    except (msgspec.DecodeError, msgspec.ValidationError):
        return plan
    past = get_game(plan.game).results_format
    added = {k: [v] for k, v in past.saved_before.items() if k not in plan.params and k not in played}
    added |= {k: [v] for k, v in past.default_was.items() if k not in plan.params and k in played and played[k] == v}
    return msgspec.structs.replace(plan, params={**plan.params, **added}) if added else plan


class _PlayedSpec(msgspec.Struct):
    params: dict[str, Any] = {}


class _Played(msgspec.Struct):
    spec: _PlayedSpec
