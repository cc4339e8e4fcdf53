"""Model agents that keep their whole chat and make several calls a turn (Traveling Adventurers'
agents), through the real SDKs against the local server: the chat goes out as a message list, the
grounding calls are counted in usage, and games play as the scripted strategy plays them in process."""

from __future__ import annotations

import pytest

from engine import Grid

from tests.engine.backends.helpers import fake_server, play, settings_for, without_models


def tsp_plan(games: int, light: str, ghost: str, variant: str) -> Grid:
    return Grid(game="tsp", seeds=games, agents=[[light, ghost]], params={"variant": [variant]})


@pytest.mark.parametrize("provider", ["openai", "anthropic", "vllm"])
@pytest.mark.parametrize("variant", ["baseline", "problem_solving"])
async def test_a_tsp_game_through_each_backend_plays_as_in_process(provider, variant):
    models = tsp_plan(6, f"{provider}:ibp_node", f"{provider}:joint_greedy", variant)
    scripted = tsp_plan(6, "ibp_node", "joint_greedy", variant)
    async with fake_server(latency=0.0) as server:
        records, _ = await play(models, settings_for(server))
        expected, _ = await play(scripted, settings_for(server))
        body = server.last_body
    assert [r.outcome for r in records] == [r.outcome for r in expected] == ["success"] * 6
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]
    for record in records:
        turns = {role: sum(t.role == role for t in record.turn_log) for role in ("light", "ghost")}
        for role, taken in turns.items():
            calls = record.usage[role].calls
            if variant == "baseline":
                assert calls == taken
            else:  # one grounding call for every partner message heard (light's first turn hears none)
                assert calls == 2 * taken - (role == "light")
    # The last request carried the agent's earlier turns: user, assistant, user, ... then this turn.
    messages = [m for m in body["messages"] if m["role"] != "system"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * (len(messages) // 2) + ["user"]
    assert len(messages) >= 3
    if provider == "anthropic":  # the end of the history is a prompt-cache breakpoint
        assert messages[-2]["content"][0]["cache_control"] == {"type": "ephemeral"}


async def test_a_grounding_reply_that_cannot_be_read_adds_nothing_and_ends_nothing():
    plan = tsp_plan(4, "openai:ibp_node", "openai:ibp_node", "problem_solving")
    async with fake_server(latency=0.0, bad_replies={"huge": 0.3}) as server:
        records, _ = await play(plan, settings_for(server))
    assert all(r.outcome in ("success", "failure") for r in records)
    assert sum(sum(t.format_error is not None for t in r.turn_log) for r in records) > 0
