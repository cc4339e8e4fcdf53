"""Best of n with model agents, through the real SDKs and the lean client against the local server: every candidate is a
call of its own (counted in the turn's usage, each with its own seed), replies that cannot be read
are passed over by the verifier, and a lost turn is still a spent step."""

from __future__ import annotations

import msgspec
import pytest

from actors.llm import LLMPolicy
from bus import Usage
from engine import Grid, PolicyFactory
from engine.backends.clients import Completion
from puzzles.base import TurnContext

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
                await backend.complete("system", "user", None, (), sample=sample)
                body = server.last_body
                assert (body["seed"], body["temperature"], body["top_p"]) == (11 + sample, 0.2, 0.9)


class Scripted:
    """A backend double: sample i answers "reply i"."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    async def complete(self, system, user, schema=None, history=(), *, sample=0):
        self.calls.append((user, history, sample))
        return Completion(f"reply {sample}", Usage(model="m", prompt_tokens=10, completion_tokens=2))


class ChatPrompter:
    chat_memory = True

    def render(self, context):
        return "system", f"turn {context.turn}"

    def schema(self, context):
        return None


def context(turn: int) -> TurnContext:
    return TurnContext(game_id=0, role="a", turn=turn, max_turns=5, view=None, feedback=None, conversation=())


async def test_with_chat_memory_the_chat_goes_on_with_the_candidate_played():
    backend = Scripted()
    policy = LLMPolicy(backend, ChatPrompter())
    assert await policy.replies(context(1), 3) == ["reply 0", "reply 1", "reply 2"]
    assert policy.last_usage.calls == 3 and policy.last_usage.prompt_tokens == 30
    policy.chose(2)
    await policy.replies(context(2), 2)
    assert {c[1] for c in backend.calls[3:]} == {(("turn 1", "reply 2"),)}
    assert sorted(c[2] for c in backend.calls) == [0, 0, 1, 1, 2]
