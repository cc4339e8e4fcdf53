"""Shared set-up for the model-backend tests: a local server and games played through it."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import msgspec

from engine import Grid, PolicyFactory, run_games
from engine.backends import BackendSettings, ModelOptions
from runners.fake_llm import FakeConfig, FakeServer

KEYS = {"OPENAI_API_KEY": "sk-test-openai-0000", "ANTHROPIC_API_KEY": "sk-ant-test-0000", "VLLM_API_KEY": "token-vllm-0000"}
FAST = ModelOptions(timeout=5.0, max_attempts=8, backoff_base=0.01, backoff_max=0.05)
# Each way an ``openai:`` call can go: the SDK or the lean client, replies whole or streamed.
OPENAI_PATHS = {
    "sdk": {"clients": {"openai": "sdk"}},
    "lean": {"clients": {"openai": "lean"}},
    "sdk-stream": {"clients": {"openai": "sdk"}, "stream": True},
    "lean-stream": {"clients": {"openai": "lean"}, "stream": True},
}


@asynccontextmanager
async def fake_server(games=None, **config):
    """The local server on a free port; ``games`` (default: every registered game) are the games it
    can read prompts of."""
    server = FakeServer(FakeConfig(**config), **({} if games is None else {"games": games}))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def settings_for(server: FakeServer, **overrides) -> BackendSettings:
    fields = {
        "options": FAST,
        "urls": {"openai": server.url + "/v1", "anthropic": server.url, "vllm": server.url + "/v1"},
    }
    fields.update(overrides)
    return BackendSettings(**fields)


async def play(config: Grid, settings: BackendSettings, *, concurrency: int = 64, environ=None):
    """Play every game of the plan ``config``; (records sorted by game id, the factory after the run)."""
    factory = PolicyFactory(settings, environ=KEYS if environ is None else environ)
    records = []
    async with factory:
        await run_games(
            config.specs_for(range(config.total)), factory=factory, concurrency=concurrency, on_record=records.append
        )
    return sorted(records, key=lambda r: r.game_id), factory


def without_models(record) -> dict:
    """A record as plain data minus what only a model call has (usage, sampling, policy names)."""
    data = json.loads(msgspec.json.encode(record))
    data.pop("usage", None)
    data.pop("sampling", None)
    data["spec"].pop("agents")
    for turn in data["turn_log"]:
        turn.pop("usage", None)
    return data
