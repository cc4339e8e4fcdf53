"""Shared test helpers."""

import anyio

from engine import GameSpec, PolicyFactory, RunConfig, play_game


def spec(index: int = 0, run_seed: int = 0, **fields) -> GameSpec:
    """Game ``index`` of a one-condition run with these fields (RunConfig names)."""
    return RunConfig(seed=run_seed, **fields).spec(index)


def play(game_spec: GameSpec, factory: PolicyFactory | None = None):
    return anyio.run(play_game, game_spec, factory or PolicyFactory())


async def play_async(game_spec: GameSpec, factory: PolicyFactory | None = None):
    return await play_game(game_spec, factory or PolicyFactory())
