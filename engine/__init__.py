"""The engine: a plan becomes games played by actors on a bus, their records go to disk, and the
records become tables.

The folders follow the data: ``plan`` (a game's spec, the grid of conditions) -> ``session`` (a run
directory played to its end) -> ``play`` (one game and many at once) -> ``policies`` (who plays a
seat: scripted, a model through ``backends``, a person) -> ``records`` (what is written) ->
``analysis`` (the numbers of a report). ``executors`` says where games are played (this process or
Ray workers); ``spending`` what the models cost; ``rollouts`` gives every seat's trajectory, rewarded,
in groups of games per seed, for training.

The names below are the public API, loaded on first use so that importing one part of the engine
does not import every other (a run with scripted agents never imports an HTTP client).
"""

from __future__ import annotations

from engine.lazy import lazy_exports

_EXPORTS = {
    "play_game": "engine.play.game",
    "RunProgress": "engine.play.run", "run_games": "engine.play.run",
    "PolicyFactory": "engine.policies.factory",
    "ErrorInfo": "engine.records.record", "GameRecord": "engine.records.record",
    "Plan": "engine.records.rundir", "RunDir": "engine.records.rundir", "RunDirError": "engine.records.rundir",
    "GameSpec": "engine.plan.spec", "Options": "engine.plan.spec", "game_seed": "engine.plan.spec",
    "Grid": "engine.plan.grid", "grid_from_dict": "engine.plan.grid", "load_grid": "engine.plan.grid",
    "ConditionSummary": "engine.analysis.stats", "summarize": "engine.analysis.totals",
    "wilson_interval": "engine.analysis.stats",
    "rollouts": "engine.rollouts.collect", "run_groups": "engine.rollouts.collect",
    "Group": "engine.rollouts.trajectory", "Trajectory": "engine.rollouts.trajectory", "TurnStep": "engine.rollouts.trajectory",
    "Weights": "engine.rollouts.trajectory", "PolicyWeights": "engine.rollouts.weights",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
