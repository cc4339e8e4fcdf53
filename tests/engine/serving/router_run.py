"""A rollout whose trained model is served by llama.cpp's server in router mode, as a process of its
own for the tests that kill it: ``python -m tests.engine.serving.router_run SERVER MODEL FOLDER OUT
MAX_TOKENS``. ``LlamaCppRouter`` starts ``SERVER`` with its files in ``FOLDER``; the base model
``MODEL`` is loaded through it as version 0 (an instance of its own), then games are played on that
version into the run directory ``OUT`` (``weights.jsonl`` names each game as it starts) until the
process is stopped."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from engine.backends import BackendSettings, ModelOptions
from engine.plan import Grid
from engine.rollouts import PolicyWeights, rollouts
from engine.serving.swap import LlamaCppRouter

TRAINED = "llamacpp:policy"


async def play(server: Path, model: Path, folder: Path, out: Path, max_tokens: int) -> None:
    grid = Grid(game="asympuzl", seeds=10_000, agents=[[TRAINED, "share_everything"]], params={"size": [3]}, max_turns=[1])
    async with LlamaCppRouter(server, model, folder, slots=1, context=2048) as router:
        weights = PolicyWeights(TRAINED, router)
        await weights.load(None)
        models = BackendSettings(urls={"llamacpp": router.url}, options=ModelOptions(max_tokens=max_tokens, temperature=0.0))
        async with rollouts(grid, k=2, out=out, models=models, weights=weights, concurrency=1) as groups:
            async for _ in groups:
                pass


if __name__ == "__main__":
    server, model, folder, out, max_tokens = sys.argv[1:]
    anyio.run(play, Path(server), Path(model), Path(folder), Path(out), int(max_tokens))
