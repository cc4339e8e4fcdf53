"""The model backends end to end: the lean client and the real openai and anthropic SDKs against a
local server that speaks their wire protocols, with rate limits, faults and a batching model. The
failure tests run on every path an ``openai:`` call can take (``OPENAI_PATHS``: either client,
replies whole or streamed): each sorts every failure the same way."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from engine.backends import ModelOptions
from engine.backends.settings import DEFAULT_MAX_TOKENS
from engine.backends.lean import LeanClient
from puzzles import GAMES

from tests.engine.backends.helpers import FAST, KEYS, OPENAI_PATHS, fake_server, play, settings_for, without_models
from tests.helpers import grid


PATHS = pytest.mark.parametrize("path", OPENAI_PATHS)
EVERY_BACKEND = {  # provider, settings: vllm is lean unless asked, openai and anthropic go through their SDKs
    **{f"openai-{path}": ("openai", how) for path, how in OPENAI_PATHS.items()},
    "anthropic": ("anthropic", {}), "anthropic-stream": ("anthropic", {"stream": True}),
    "vllm": ("vllm", {}), "vllm-sdk": ("vllm", {"clients": {"vllm": "sdk"}}),
}


@pytest.mark.parametrize("backend", EVERY_BACKEND)
async def test_a_game_through_each_backend_plays_as_the_scripted_strategy(backend):
    provider, how = EVERY_BACKEND[backend]
    config = grid(12, size=4, alice=f"{provider}:share_everything", bob=f"{provider}:one_piece")
    scripted = grid(12, size=4, alice="share_everything", bob="one_piece")
    async with fake_server(latency=0.0) as server:
        records, factory = await play(config, settings_for(server, **how))
        expected, _ = await play(scripted, settings_for(server))
    assert [r.outcome for r in records] == ["success"] * 12
    # The whole path (prompt, HTTP, SDK, parsing, actions) gives the same games as playing in process.
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]
    assert server.last_body.get("stream", False) == how.get("stream", False)
    lean = backend in ("openai-lean", "openai-lean-stream", "vllm")  # vllm: lean unless asked
    assert isinstance(factory.hub.provider(factory.hub.backends()[0].name).client, LeanClient) == lean
    usage = records[0].usage
    assert set(usage) == {"alice", "bob"}
    assert usage["alice"].calls == records[0].turns
    assert usage["alice"].prompt_tokens > 0 and usage["alice"].completion_tokens > 0
    assert usage["alice"].message_tokens > 0
    assert usage["alice"].cached_tokens > 0  # the server caches the repeated system prompt
    turn = records[0].turn_log[0]
    assert turn.usage.model == f"{provider}:share_everything"
    assert factory.hub.summary()["options"]["max_tokens"] == DEFAULT_MAX_TOKENS == 1024
    summary = factory.hub.summary()["models"][f"{provider}:share_everything"]
    assert summary["calls"] == summary["attempts"] == sum(r.usage["alice"].calls for r in records)


@pytest.mark.parametrize("agents", [
    {"alice": "share_everything", "bob": "one_piece"},
    {"alice": "one_piece", "bob": "share_everything", "carol": "one_piece"},
    {"alice": "share_everything", "bob": "share_everything", "carol": "share_everything", "dave": "one_piece"},
])
async def test_a_chain_game_through_the_server_plays_as_in_process(agents):
    models = {role: f"openai:{name}" for role, name in agents.items()}
    async with fake_server(latency=0.0) as server:
        records, _ = await play(grid(6, game="chain", size=4, **models), settings_for(server))
        expected, _ = await play(grid(6, game="chain", size=4, **agents), settings_for(server))
        assert server.stats.served == sum(r.usage[role].calls for r in records for role in agents)
    assert [r.outcome for r in records] == [r.outcome for r in expected]
    assert any(r.outcome == "success" for r in records)
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]


async def test_the_model_name_picks_the_strategy_and_unread_prompts_get_no_json():
    config = grid(3, size=4, alice="openai:one_piece", bob="openai:Org/ONE-PIECE")
    async with fake_server(latency=0.0, strategy="ignore") as server:
        records, _ = await play(config, settings_for(server))
        expected, _ = await play(grid(3, size=4, alice="one_piece", bob="one_piece"), settings_for(server))
        fallback, _ = await play(grid(3, size=4, alice="openai:gpt-4o", bob="openai:gpt-4o"), settings_for(server))
        ignored, _ = await play(grid(3, size=4, alice="ignore", bob="ignore"), settings_for(server))
        text = await server.players.reply("share_everything", "You are nobody.", ["Hello."])
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]
    assert [without_models(r) for r in fallback] == [without_models(r) for r in ignored]  # --strategy
    assert "{" not in text and "cannot read this prompt" in text


async def test_model_names_keep_their_case_and_reach_the_server():
    config = grid(1, alice="vllm:Org/Share-Everything", bob="vllm:Org/Share-Everything")
    async with fake_server(latency=0.0) as server:
        records, _ = await play(config, settings_for(server))
        assert server.last_body["model"] == "Org/Share-Everything"
    assert records[0].outcome == "success"


@PATHS
async def test_structured_output_is_requested_from_each_backend(path):
    options = ModelOptions(structured=True, timeout=5.0)
    async with fake_server(latency=0.0) as server:
        await play(grid(1, alice="openai:share_everything", bob="openai:share_everything"), settings_for(server, options=options, **OPENAI_PATHS[path]))
        schema = server.last_body["response_format"]["json_schema"]["schema"]
        assert schema["required"] == ["message", "actions"]
        assert server.last_body["temperature"] == 0.0 and server.last_body["max_completion_tokens"] == DEFAULT_MAX_TOKENS
        await play(grid(1, alice="anthropic:share_everything", bob="anthropic:share_everything"), settings_for(server, options=options))
        assert server.last_body["output_config"]["format"]["schema"]["properties"]["actions"]["type"] == "array"
        assert server.last_body["max_tokens"] == DEFAULT_MAX_TOKENS


@PATHS
async def test_429_with_retry_after_is_honoured_and_every_game_completes(path):
    config = grid(20, alice="openai:share_everything", bob="openai:share_everything")
    options = msgspec.structs.replace(FAST, backoff_max=1.0)  # a pause up to 1 s is taken as asked
    async with fake_server(latency=0.01, faults={"429": 0.3}, retry_after=0.2, seed=3) as server:
        records, factory = await play(config, settings_for(server, options=options, **OPENAI_PATHS[path]))
        refused = server.stats.refused.get("429", 0)
    assert [r.outcome for r in records] == ["success"] * 20
    stats = factory.hub.backends()[0].limiter.stats
    assert refused > 0 and stats.rate_limited == refused
    assert stats.attempts == stats.calls + refused
    waited = sum(t.usage.waited for r in records for t in r.turn_log if t.usage.attempts > 1)
    retried = sum(1 for r in records for t in r.turn_log if t.usage.attempts > 1)
    assert retried > 0 and waited / retried >= 0.2  # each retried call paused at least retry-after


@pytest.mark.parametrize("path", ["sdk", "lean"])
async def test_a_429_storm_lowers_the_in_flight_cap_and_loses_no_game(path):
    config = grid(60, alice="openai:share_everything", bob="openai:share_everything")
    settings_kwargs = {"max_in_flight": 64, **OPENAI_PATHS[path]}
    async with fake_server(latency=0.02, storms=[(0.1, 0.6)], retry_after=0.1) as server:
        settings = settings_for(server, **settings_kwargs)
        records, factory = await play(config, settings, concurrency=60)
        assert server.stats.refused.get("429", 0) > 0
    limiter = factory.hub.backends()[0].limiter
    assert [r.outcome for r in records] == ["success"] * 60
    assert limiter.stats.rate_limited > 0
    assert limiter.cap < 64  # shrank during the storm (and grows back only one call at a time)


@PATHS
@pytest.mark.parametrize("fault, cause", [
    ("500", "HTTP 500: Error code: 500 - Injected 500."), ("503", "HTTP 503: Error code: 503 - Injected 503."),
    ("529", "HTTP 529"), ("malformed", "malformed reply"), ("incomplete", "malformed reply"),
    ("truncated", "connection error (ClientPayloadError"),
])
async def test_server_faults_are_retried_then_recorded_as_infrastructure_errors(fault, cause, path):
    options = ModelOptions(timeout=5.0, max_attempts=3, backoff_base=0.01, backoff_max=0.02)
    config = grid(4, alice="openai:share_everything", bob="openai:share_everything")
    async with fake_server(latency=0.0, faults={fault: 1.0}, retry_after=0.01) as server:
        records, factory = await play(config, settings_for(server, options=options, **OPENAI_PATHS[path]))
    for record in records:
        assert record.outcome == "error"
        assert record.error.kind == "infra_error"
        assert "after 3 attempts" in record.error.message and cause in record.error.message
        assert record.error.actor == "alice"
    stats = factory.hub.backends()[0].limiter.stats
    assert stats.attempts == 3 * 4 and stats.failed == 4 and stats.calls == 0


@pytest.mark.parametrize("backend", ["anthropic", "anthropic-stream", "openai-sdk", "openai-lean", "openai-lean-stream"])
async def test_timeouts_are_retried_then_recorded_as_infrastructure_errors(backend):
    provider, how = EVERY_BACKEND[backend]
    options = ModelOptions(timeout=0.3, max_attempts=2, backoff_base=0.01, backoff_max=0.02)
    config = grid(3, alice=f"{provider}:share_everything", bob=f"{provider}:share_everything")
    async with fake_server(latency=0.0, faults={"timeout": 1.0}, hang=30.0) as server:
        records, factory = await play(config, settings_for(server, options=options, **how))
    assert {r.error.message for r in records} == {f"{provider}:share_everything after 2 attempts: timed out"}
    assert factory.hub.backends()[0].limiter.stats.timeouts == 6


@pytest.mark.parametrize("path", ["sdk", "lean"])
@pytest.mark.parametrize("fault", ["500", "529", "malformed", "incomplete", "truncated", "timeout"])
async def test_occasional_faults_are_absorbed_by_retries(fault, path):
    options = ModelOptions(timeout=0.5, max_attempts=10, backoff_base=0.01, backoff_max=0.05)
    config = grid(16, alice="openai:share_everything", bob="anthropic:one_piece")
    async with fake_server(latency=0.0, faults={fault: 0.25}, hang=30.0, retry_after=0.01, seed=5) as server:
        records, factory = await play(config, settings_for(server, options=options, **OPENAI_PATHS[path]))
        assert sum(server.stats.refused.values()) > 0
    assert [r.outcome for r in records] == ["success"] * 16
    assert sum(b.limiter.stats.attempts - b.limiter.stats.calls for b in factory.hub.backends()) > 0


@PATHS
async def test_connection_refused_is_an_infrastructure_error(path):
    options = ModelOptions(timeout=1.0, max_attempts=2, backoff_base=0.01, backoff_max=0.02)
    async with fake_server() as server:
        url = server.url
    config = grid(2, alice="openai:share_everything", bob="openai:share_everything")
    from engine.backends import BackendSettings

    records, _ = await play(config, BackendSettings(options=options, urls={"openai": url + "/v1"}, **OPENAI_PATHS[path]))
    assert all(r.error.kind == "infra_error" for r in records)
    assert all("connection error (ClientConnectorError" in r.error.message for r in records)


@PATHS
async def test_a_bad_key_is_an_infrastructure_error_and_is_not_retried(path):
    config = grid(2, alice="openai:share_everything", bob="openai:share_everything")
    async with fake_server(api_key="sk-the-right-key-1234") as server:
        records, factory = await play(config, settings_for(server, **OPENAI_PATHS[path]))
    assert all(r.error.kind == "infra_error" and "HTTP 401" in r.error.message for r in records)
    assert KEYS["OPENAI_API_KEY"] not in records[0].error.message
    assert "sk-test-" not in records[0].error.message  # the server echoes the masked key; it is scrubbed
    assert factory.hub.backends()[0].limiter.stats.attempts == 2  # one per game: 401 is not retried


async def test_unparseable_model_output_is_the_models_failure_not_an_infrastructure_error():
    # A server that knows only AsymPuzl cannot read a chain prompt, so it answers without JSON: a
    # format error every turn.
    config = grid(2, game="chain", alice="openai:share_everything", bob="openai:share_everything", max_turns=2)
    async with fake_server(games={"asympuzl": GAMES["asympuzl"]}, latency=0.0) as server:
        records, _ = await play(config, settings_for(server))
    for record in records:
        assert record.outcome == "failure" and record.error is None
        assert record.format_errors == {"alice": 2, "bob": 2}
        assert record.usage["alice"].calls == 2


async def test_vllm_keeps_calls_in_flight_near_the_servers_batch_size():
    # Slow enough generations that this process (SDK, engine and server at once) is not the bottleneck.
    seqs, games = 16, 160
    config = grid(games, size=3, alice="vllm:share_everything", bob="vllm:share_everything")
    async with fake_server(latency=0.15, max_num_seqs=seqs) as server:
        settings = settings_for(server, vllm_max_seqs=seqs)
        records, factory = await play(config, settings, concurrency=120)
        samples = server.stats.samples
    assert [r.outcome for r in records] == ["success"] * games
    # What does not depend on this machine's speed: the batch is filled, and the calls in flight stay
    # near it, not at the 120 games in flight. How full it stays is a figure (benchmarks/bench_backends.py).
    assert max(running for _, running, _, _ in samples) == seqs
    assert max(waiting for _, _, waiting, _ in samples) <= seqs
    assert factory.hub.loads["vllm:share_everything"].samples > 0  # /metrics was read


async def test_the_report_counts_tokens_per_turn_of_model_turns():
    from engine.analysis import size_units, sizes_per_turn

    config = grid(4, alice="openai:share_everything", bob="share_everything")
    async with fake_server(latency=0.0) as server:
        records, _ = await play(config, settings_for(server))
    assert size_units(records) == ["chars", "tokens"]
    row = sizes_per_turn(records, [], "tokens")[0]
    alice_turns = [t for r in records for t in r.turn_log if t.role == "alice"]
    assert row.roles["alice"].turns == len(alice_turns)
    assert row.roles["alice"].message == sum(t.usage.message_tokens for t in alice_turns) / len(alice_turns)
    assert row.roles["alice"].reply == sum(t.usage.completion_tokens for t in alice_turns) / len(alice_turns)
    assert row.roles["bob"].turns == 0  # the scripted Bob makes no model calls
    assert "bob" not in records[0].usage


@pytest.mark.parametrize("backend", ["anthropic", "openai-sdk", "openai-lean", "vllm"])
async def test_a_refused_request_is_a_request_error_and_is_not_retried(backend):
    provider, how = EVERY_BACKEND[backend]
    config = grid(3, alice=f"{provider}:share_everything", bob=f"{provider}:share_everything")
    async with fake_server(latency=0.0, faults={"400": 1.0}) as server:
        records, factory = await play(config, settings_for(server, **how))
    assert {r.error.kind for r in records} == {"request_error"}
    assert "after 1 attempt: HTTP 400" in records[0].error.message
    assert factory.hub.backends()[0].limiter.stats.attempts == 3


@pytest.mark.parametrize("path", ["sdk", "lean"])
async def test_a_long_retry_after_is_cut_to_the_longest_back_off(path):
    options = ModelOptions(timeout=5.0, max_attempts=20, backoff_base=0.01, backoff_max=0.1)
    config = grid(4, alice="openai:share_everything", bob="openai:share_everything")
    async with fake_server(latency=0.0, storms=[(0.0, 0.5)], retry_after=3600.0) as server:
        with anyio.fail_after(10):
            records, _ = await play(config, settings_for(server, options=options, **OPENAI_PATHS[path]))
    assert [r.outcome for r in records] == ["success"] * 4
