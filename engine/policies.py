"""Turning a policy name into a policy for one agent of one game.

One ``PolicyFactory`` serves a whole run; shared resources (model clients, limiters) hang off it,
never off module globals. Names are one of the game's scripted strategies (``share_everything``) or a
model (``openai:gpt-4o``, ``anthropic:claude-sonnet-4-5``, ``vllm:MODEL``), which plays through the
game's prompter. Use the factory as
``async with factory:`` around the games when models play (it opens and closes their clients).
"""

from __future__ import annotations

import random

from puzzles import Game, Policy

from .backends import BackendSettings, ModelHub, split_name

MODEL_FORMS = ("openai:MODEL", "anthropic:MODEL", "vllm:MODEL")


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def is_model(name: str) -> bool:
    return ":" in name


def strategy_of(model: str) -> str:
    """The scripted strategy a model name asks a stand-in to play (the local model server, the
    forecast): its last path part, lower case, dashes as underscores."""
    return model.rsplit("/", 1)[-1].strip().lower().replace("-", "_")


def scripted_rng(seed: int, role: str) -> random.Random:
    """The randomness of a scripted policy playing ``role`` in the game of ``seed`` (the local
    model server seeds its players the same way)."""
    return random.Random(f"{seed}:{role}")


class PolicyFactory:
    def __init__(self, backends: BackendSettings | None = None, environ=None) -> None:
        self.hub = ModelHub(backends, environ)

    def configure(self, backends: BackendSettings) -> None:
        """Set how models are called (before any policy is made)."""
        self.hub = ModelHub(backends, self.hub.environ)

    def names(self, game: Game) -> list[str]:
        return sorted(game.scripted) + list(MODEL_FORMS)

    def canonical(self, name: str) -> str:
        """The name as it is saved with a run: one spelling per policy (a model name keeps its case)."""
        if is_model(name):
            provider, model = name.split(":", 1)
            return f"{provider.strip().lower()}:{model.strip()}"
        return _normal(name)

    def check(self, name: str, game: Game) -> None:
        """Raise ValueError with a one-line reason if ``name`` is not a policy this factory can make
        for ``game``."""
        if is_model(name):
            self.hub.check(name)
            return
        if _normal(name) not in game.scripted:
            raise ValueError(f"unknown policy {name!r} for {game.name}; choose from {', '.join(self.names(game))}")

    def make(self, name: str, role: str, seed: int, game: Game) -> Policy:
        if is_model(name):
            from actors.llm import LLMPolicy

            split_name(name)
            backend = self.hub.backend(self.canonical(name))
            return LLMPolicy(backend, game.prompter, structured=self.hub.settings.options.structured)
        self.check(name, game)
        return game.scripted[_normal(name)](role, scripted_rng(seed, role))

    async def __aenter__(self) -> PolicyFactory:
        await self.hub.__aenter__()
        return self

    async def __aexit__(self, *exc_info) -> bool | None:
        return await self.hub.__aexit__(*exc_info)
