"""Best of n with model agents, through the real SDKs and the lean client against the local server: every candidate is a
call of its own (counted in the turn's usage, each with its own seed), replies that cannot be read
are passed over by the verifier, and a lost turn is still a spent step."""

from __future__ import annotations

import msgspec
import pytest

from engine import Grid, PolicyFactory
from engine.backends import Request

from tests.engine.backends.helpers import FAST, KEYS, OPENAI_PATHS, fake_server, play, settings_for


def einstein(games: int, verifier: str, strategy: str = "openai:optimal") -> Grid:
    params = {"blocks": [4], "verifier": [verifier]}
    if verifier != "none":
        params["candidates"] = [4]
    return Grid(game="einstein", seeds=games, seed=3, agents=[[strategy, strategy]], params=params)


async def test_the_verifier_passes_over_replies_that_cannot_be_read():
    async with fake_server(latency=0.0, bad_replies={"huge": 0.3}) as server:
        plain, _ = await play(einstein(8, "none"), settings_for(server))
        verified, _ = await play(einstein(8, "reasoning"), settings_for(server))
    lost = sum(t.format_error is not None for r in plain for t in r.turn_log)
    assert lost > 5
    for record in plain:  # a turn lost to a reply that could not be read is a step spent
        assert record.scores["steps"] == len(record.turn_log)
    assert sum(t.format_error is not None for r in verified for t in r.turn_log) < lost / 4
    assert sum(r.scores["steps"] for r in verified) < sum(r.scores["steps"] for r in plain) - lost / 2
    for record in verified:
        assert all(t.candidates == 4 for t in record.turn_log)
        for role in ("player1", "player2"):
            turns = sum(t.role == role for t in record.turn_log)
            assert record.usage[role].calls == 4 * turns


@pytest.mark.parametrize("path", ["sdk", "lean"])
async def test_each_candidate_is_sent_its_own_seed_and_the_run_s_sampling(path):
    async with fake_server(latency=0.0) as server:
        options = msgspec.structs.replace(FAST, seed=11, temperature=0.2, top_p=0.9)
        factory = PolicyFactory(settings_for(server, options=options, **OPENAI_PATHS[path]), environ=KEYS)
        async with factory:
            backend = factory.hub.backend("openai:optimal")
            for sample in (0, 2):
                await backend.complete(Request("system", "user", None, (), sample))
                body = server.last_body
                assert (body["seed"], body["temperature"], body["top_p"]) == (11 + sample, 0.2, 0.9)
