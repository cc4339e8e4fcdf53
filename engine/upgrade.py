"""Reading results written by format 1 (before games were folders behind one contract).

Format 1 wrote a game spec with the game's parameters among the engine's fields (``puzzle``,
``size``, ``distractors``, ``distractors_in`` beside ``feedback`` and ``max_turns``), a plan that
was either a single condition (``"type": "run"``) or a grid, and three position figures as fields
of the record. Format 2 nests them (``params``, ``options``), has one plan type, and keeps the
figures in the record's ``scores`` and ``metrics`` maps. The upgrade is exact: a format-1 record,
upgraded, is byte for byte the record format 2 writes for the same game.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .records import GameRecord
from .sweep import Grid

_EXTENSIONS = ("topology", "turn_order", "channel", "max_actions", "memory", "leak_audit")
_AXES = ("topology", "turn_order", "max_actions", "memory", "channel")
_ROLES = ("alice", "bob", "carol", "dave")


def _game(puzzle: str | None) -> str:
    return "chain" if puzzle == "chain" else "asympuzl"  # asympuzl_solo is asympuzl with one agent


def _params(game: str, size: Any, distractors: Any, side: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"game": game, "size": size}
    if game == "asympuzl":
        params.update(distractors=distractors, distractors_in=side)
    return params


def upgrade_spec(old: dict[str, Any]) -> dict[str, Any]:
    game = _game(old.get("puzzle"))
    options = {"feedback": old.get("feedback", "own_detailed"), "max_turns": old.get("max_turns", 10), "history": old.get("history", 1)}
    options.update({k: old[k] for k in _EXTENSIONS if k in old})
    return {
        "game_id": old["game_id"],
        "seed": old["seed"],
        "params": _params(game, old.get("size", 5), old.get("distractors", 0), old.get("distractors_in", "alice")),
        "agents": old.get("agents", {}),
        "options": options,
    }


def is_format_1(record: dict[str, Any]) -> bool:
    return "actions_per_position" in record or "puzzle" in record.get("spec", {})


def upgrade_record(old: dict[str, Any]) -> GameRecord:
    """A format-1 record (as decoded JSON) as a format-2 record."""
    new = {k: v for k, v in old.items() if k not in ("actions_per_position", "position_actions", "correct_positions")}
    new["spec"] = upgrade_spec(old["spec"])
    new["scores"] = {f"actions_per_position.{r}": v for r, v in old.get("actions_per_position", {}).items()}
    metrics = {}
    if old.get("position_actions"):
        metrics["position_actions"] = old["position_actions"]
    if old.get("correct_positions"):
        metrics["correct_positions"] = old["correct_positions"]
    new["metrics"] = metrics
    return msgspec.convert(new, GameRecord)


def upgrade_plan(old: dict[str, Any]) -> Grid:
    """A format-1 plan (a single condition or a grid, as decoded JSON) as a grid."""
    game = _game(old.get("puzzle"))
    if old.get("type") == "run":
        agents = [old.get(r) or "share_everything" for r in _ROLES[:2]] + [old[r] for r in _ROLES[2:] if old.get(r)]
        params = _params(game, [old.get("size", 5)], [old.get("distractors", 0)], [old.get("distractors_in", "alice")])
        history = old.get("history", 1)
        grid = {
            "name": "run", "game": game, "seeds": old.get("games", 1000), "seed": old.get("seed", 0),
            "agents": [agents], "params": {k: v for k, v in params.items() if k != "game"},
            "feedback": [old.get("feedback", "own_detailed")], "history": ["full" if history is None else history],
            "max_turns": [old["max_turns"]] if old.get("max_turns") is not None else [],
            "leak_audit": bool(old.get("leak_audit")),
        }
        grid.update({k: [old[k]] for k in _AXES if old.get(k) is not None})
        return msgspec.convert(grid, Grid)
    params = _params(game, old.get("size", [5]), old.get("distractors", [0]), old.get("distractors_in", ["alice"]))
    grid = {k: v for k, v in old.items() if k not in ("type", "puzzle", "size", "distractors", "distractors_in")}
    grid.update(game=game, params={k: v for k, v in params.items() if k != "game"})
    return msgspec.convert(grid, Grid)
