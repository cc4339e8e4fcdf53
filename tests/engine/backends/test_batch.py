"""Batch mode through the real ``openai`` and ``anthropic`` SDKs against the local server's batch APIs:
the games are those of calls one at a time, at the batch price; failed requests, expired and
cancelled batches are sent again; a run stopped while a batch was in flight collects it when it
goes on, and no request is sent twice."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from engine import Grid, PolicyFactory, run_games
from engine.backends import HubContext
from engine.backends.batch.log import BATCHES_FILE, BatchLog
from engine.backends.prices import PriceTable
from engine.backends.sdk import sdk_client
from engine.backends.settings import BatchSettings, ModelOptions

from tests.engine.backends.helpers import KEYS, fake_server, play, settings_for, without_models

FAST_BATCHES = BatchSettings(enabled=True, wait=0.05, poll=0.02, poll_max=0.1)
PATIENT = ModelOptions(timeout=5.0, max_attempts=20, backoff_base=0.01, backoff_max=0.05)  # faults below: never 20 in a row
PRICES = {"one_piece": (2.0, 1.0, 8.0), "noisy": (3.0, 0.3, 15.0, 3.75)}
LIMIT = 120  # seconds: fails a hang, never a slow machine's run


def _plan(alice: str = "openai", bob: str = "anthropic", seeds: int = 6) -> Grid:
    return Grid(game="asympuzl", seeds=seeds, seed=3, agents=[[f"{alice}:one_piece", f"{bob}:noisy"]])


def _batched(server, **fields):
    return settings_for(server, batch=FAST_BATCHES, prices=PRICES, **fields)


async def _plain(plan: Grid) -> list:
    """The games called one at a time, on a server of their own."""
    async with fake_server(latency=0.0) as server:
        records, _ = await play(plan, settings_for(server, prices=PRICES))
    return records


async def test_a_batched_run_plays_the_same_games_at_half_the_price():
    plan = _plan()
    expected = await _plain(plan)
    async with fake_server(latency=0.0, batch_delay=0.02) as server:
        with anyio.fail_after(LIMIT):
            records, factory = await play(plan, _batched(server))
        stats = server.batches.stats()
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]
    assert all(r.outcome == "success" for r in records) and sum(r.turns for r in records) > 12
    assert stats["batch_repeats"] == [] and stats["batch_requests"] == stats["batch_custom_ids"] > 0
    # One batch per agent turn: each carries one call of every game still playing.
    assert stats["batches"] == max(len(r.turn_log) for r in records)
    prices = PriceTable(PRICES)
    for record in records:
        for turn in record.turn_log:
            usage = turn.usage
            provider, model = usage.model.split(":")
            full = prices.cost(provider, model, usage.prompt_tokens, usage.cached_tokens, 0, usage.completion_tokens)
            assert usage.batched == 1 and usage.cost_usd == pytest.approx(full / 2, abs=1e-8)
    summary = factory.hub.summary()
    assert summary["options"]["batch"]["batches_sent"] == stats["batches"]
    for figures in summary["models"].values():
        assert figures["batched"] == figures["calls"] == figures["attempts"] > 0


async def test_failed_requests_are_sent_again_in_later_batches_and_the_games_complete():
    plan = _plan()
    expected = await _plain(plan)
    async with fake_server(latency=0.0, batch_delay=0.02, faults={"500": 0.15, "529": 0.05, "malformed": 0.05}) as server:
        with anyio.fail_after(LIMIT):
            records, factory = await play(plan, _batched(server, options=PATIENT))
        stats = server.batches.stats()
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]
    counted = factory.hub.summary()["models"]
    assert sum(m["server_errors"] for m in counted.values()) > 0 and sum(m["rate_limited"] for m in counted.values()) > 0
    assert sum(m["malformed"] for m in counted.values()) > 0
    assert stats["batch_repeats"] == []  # a request sent again is a new attempt, with an id of its own
    assert any(turn.usage.attempts > 1 for r in records for turn in r.turn_log)


async def test_a_refused_request_in_a_batch_is_the_game_s_request_error_and_not_sent_again():
    plan = _plan(seeds=2)
    async with fake_server(latency=0.0, batch_delay=0.02, faults={"400": 1.0}) as server:
        with anyio.fail_after(LIMIT):
            records, _ = await play(plan, _batched(server))
        stats = server.batches.stats()
    assert [r.error.kind for r in records] == ["request_error"] * 2
    assert "after 1 attempt in batches: HTTP 400" in records[0].error.message
    assert stats["batch_requests"] == 2


async def test_a_batch_refused_for_its_key_loses_its_games_and_the_key_reaches_no_file(tmp_path):
    plan = _plan("openai", "openai", seeds=2)
    async with fake_server(latency=0.0, batch_delay=0.02, api_key="sk-another-key-000000") as server:
        factory = PolicyFactory(_batched(server), environ=KEYS)
        factory.hub = factory.hub.for_run(HubContext(run_dir=tmp_path))
        records = []
        with anyio.fail_after(LIMIT):
            async with factory:
                await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=8, on_record=records.append)
    assert [r.error.kind for r in records] == ["infra_error"] * 2  # a key to fix, then --resume
    assert all("after 1 attempt in batches: HTTP 401" in r.error.message for r in records)
    kept = (tmp_path / BATCHES_FILE).read_text()
    assert '"dropped"' in kept and "HTTP 401" in kept
    key = KEYS["OPENAI_API_KEY"]
    for fragment in (key, key[:8], key[-8:]):
        assert fragment not in kept and all(fragment not in r.error.message for r in records)


async def test_an_expired_batch_s_unrun_requests_are_sent_again():
    plan = _plan()
    expected = await _plain(plan)
    async with fake_server(latency=0.0, batch_delay=0.02, batch_faults={"expired": 0.3}) as server:
        with anyio.fail_after(LIMIT):
            records, factory = await play(plan, _batched(server, options=PATIENT))
        stats = server.batches.stats()
    assert stats["batches_ended"]["expired"] >= 1  # the second batch's draw is 0.04 (seed 0)
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]
    assert sum(m["timeouts"] for m in factory.hub.summary()["models"].values()) > 0
    assert stats["batch_repeats"] == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_cancelled_batch_is_sent_again(provider):
    plan = _plan(provider, provider, seeds=3)
    expected = await _plain(plan)
    async with fake_server(latency=0.0, batch_delay=3600) as server:
        service = server.batches

        async def cancel_the_first_batch() -> None:  # as a person would, in the provider's console
            while not service.batches:
                await anyio.sleep(0.01)
            first = next(iter(service.batches))
            if provider == "openai":
                client = sdk_client("openai", KEYS["OPENAI_API_KEY"], server.url + "/v1", 2)
                assert (await client.batches.cancel(first)).status == "cancelling"
            else:
                client = sdk_client("anthropic", KEYS["ANTHROPIC_API_KEY"], server.url, 2)
                assert (await client.messages.batches.cancel(first)).processing_status == "canceling"
            await client.close()
            service.delay = 0.02  # the batches sent after it end at once
            for batch in service.batches.values():
                batch.wake.set()

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as group:
                group.start_soon(cancel_the_first_batch)
                records, _ = await play(plan, _batched(server))
        stats = service.stats()
    assert stats["batches_ended"]["cancelled"] == 1
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]
    assert stats["batch_repeats"] == []


async def _stopped_mid_batch(plan: Grid, server, run_dir, *, lose_the_id: bool = False) -> None:
    """Play ``plan`` in ``run_dir`` until its first batch is at the server, then stop as a kill
    would (nothing after: no collecting, no record of the games). ``lose_the_id``: stopped between
    sending the batch and recording its id."""
    settings = _batched(server)
    factory = PolicyFactory(settings, environ=KEYS)
    factory.hub = factory.hub.for_run(HubContext(run_dir=run_dir))
    if lose_the_id:
        original = BatchLog.sent
        BatchLog.sent = lambda self, tag, batch_id: None  # type: ignore[method-assign]
    try:
        with anyio.fail_after(LIMIT):
            async with factory, anyio.create_task_group() as group:
                group.start_soon(lambda: run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=64, on_record=lambda r: None))
                log = run_dir / BATCHES_FILE
                while not server.batches.batches or not (lose_the_id or b'"sent"' in log.read_bytes()):
                    await anyio.sleep(0.01)
                group.cancel_scope.cancel()
    finally:
        if lose_the_id:
            BatchLog.sent = original  # type: ignore[method-assign]


@pytest.mark.parametrize(("provider", "lose_the_id"), [("openai", False), ("openai", True), ("anthropic", False), ("anthropic", True)],
                         ids=["openai-recorded", "openai-id-lost", "anthropic-recorded", "anthropic-id-lost"])
async def test_a_run_stopped_mid_batch_collects_it_when_it_goes_on(tmp_path, provider, lose_the_id):
    # id-lost: stopped after the provider took the batch and before its id reached the log. OpenAI's
    # batch is found by its tag; Anthropic's by when it was made, its size, then its custom ids.
    plan = _plan(provider, provider, seeds=4)
    expected = await _plain(plan)
    async with fake_server(latency=0.0, batch_delay=3600) as server:
        await _stopped_mid_batch(plan, server, tmp_path, lose_the_id=lose_the_id)
        lines = [msgspec.json.decode(line) for line in (tmp_path / BATCHES_FILE).read_bytes().splitlines()]
        assert [next(iter(line)) for line in lines] == ["run", "intent"] + ([] if lose_the_id else ["sent"])
        server.batches.delay = 0.02
        for batch in server.batches.batches.values():
            batch.wake.set()
        settings = _batched(server)
        factory = PolicyFactory(settings, environ=KEYS)
        factory.hub = factory.hub.for_run(HubContext(run_dir=tmp_path, replayed=lambda game_id: True))
        records = []
        with anyio.fail_after(LIMIT):
            async with factory:
                await run_games(plan.specs_for(range(plan.total)), factory=factory, concurrency=64, on_record=records.append)
        stats = server.batches.stats()
    records.sort(key=lambda r: r.game_id)
    assert [without_models(r) for r in records] == [without_models(r) for r in expected]
    assert stats["batch_repeats"] == [] and stats["batch_requests"] == stats["batch_custom_ids"]
    assert factory.hub.summary()["options"]["batch"]["earlier_batches_collected"] == 1
    # The first turn's calls were answered from the batch sent before the stop: counted once, here.
    made = sum(1 for r in records for turn in r.turn_log if turn.usage.model == f"{provider}:one_piece")
    assert factory.hub.backend(f"{provider}:one_piece").limiter.stats.calls == made


async def test_named_endpoints_that_declare_a_batch_api_are_batched_and_the_others_are_not():
    from engine.backends.endpoints import Endpoint

    plan = Grid(game="asympuzl", seeds=3, seed=3, agents=[["mine:one_piece", "theirs:noisy"], ["plain:one_piece", "theirs:noisy"]])
    async with fake_server(latency=0.0, batch_delay=0.02) as server:
        endpoints = {
            "mine": Endpoint(kind="openai", url=server.url + "/v1", key_env="OPENAI_API_KEY", batches=True),
            "theirs": Endpoint(kind="anthropic", url=server.url, key_env="ANTHROPIC_API_KEY", batches=True),
            "plain": Endpoint(kind="openai", url=server.url + "/v1", key_env="OPENAI_API_KEY"),
        }
        with anyio.fail_after(LIMIT):
            records, factory = await play(plan, _batched(server, endpoints=endpoints))
        stats = server.batches.stats()
        bodies = [body for b in server.batches.batches.values() if not b.anthropic for _, body in b.requests]
    assert all(r.outcome == "success" for r in records)
    assert bodies and all("max_tokens" in b and "max_completion_tokens" not in b for b in bodies)  # a compatible server's field
    assert stats["batch_repeats"] == [] and stats["batch_requests"] > 0
    summary = factory.hub.summary()
    assert summary["options"]["batch"]["unbatched_models"] == ["plain:one_piece"]
    models = summary["models"]
    assert models["mine:one_piece"]["batched"] == models["mine:one_piece"]["calls"] > 0
    assert models["theirs:noisy"]["batched"] == models["theirs:noisy"]["calls"] > 0
    assert models["plain:one_piece"]["batched"] == 0 < models["plain:one_piece"]["calls"]
    assert stats["batch_requests"] == models["mine:one_piece"]["calls"] + models["theirs:noisy"]["calls"]


def test_only_an_openai_or_anthropic_endpoint_declares_a_batch_api():
    from engine.backends.endpoints import Endpoint

    with pytest.raises(ValueError, match="batches = true needs kind openai or anthropic"):
        Endpoint(kind="vllm", url="http://127.0.0.1:8000/v1", batches=True)
