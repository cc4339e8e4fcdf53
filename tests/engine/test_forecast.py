"""The forecast against a real run through the local model server: calls within 10%, tokens within
20% (the server counts with the labelled estimate, the forecast with the run's tokenizer), and the
time the limits give within 10% of the calls the run made over the limit (not a clock: the machine
may be slower than the limit)."""

from __future__ import annotations

import pytest

from engine import PolicyFactory, run_games
from engine.spending.forecast import forecast, play_sampled
from engine.play.pacing import GameStarts
from tests.engine.backends.helpers import KEYS, fake_server, settings_for
from tests.helpers import grid


async def test_the_forecast_matches_a_run_through_the_local_server():
    games, rpm = 40, 6000
    plan = grid(games, alice="openai:share_everything", bob="openai:one_piece", size=4)
    async with fake_server(latency=0.02, rpm=rpm) as server:
        settings = settings_for(server, rpm={"openai": rpm}, shared_limits=["openai"])
        sampled = await play_sampled(plan, settings)
        assert server.stats.requests == 0  # the forecast makes no call
        fc = forecast(plan, sampled, settings, to_play=range(games))
        factory = PolicyFactory(settings, environ=KEYS)
        records = []
        async with factory:
            await run_games(
                plan.specs_for(range(games)), factory=factory, concurrency=64, on_record=records.append,
                starts=GameStarts(factory.hub),
            )
    assert all(r.outcome == "success" for r in records)
    for name, model in fc.models.items():
        stats = factory.hub.backend(name).limiter.stats
        assert model.calls == pytest.approx(stats.calls, rel=0.10)
        assert model.prompt_tokens == pytest.approx(stats.prompt_tokens, rel=0.20)
        assert model.completion_tokens == pytest.approx(stats.completion_tokens, rel=0.20)
        assert model.calls_max >= model.calls
    calls = sum(factory.hub.backend(name).limiter.stats.calls for name in fc.models)
    assert fc.minutes == pytest.approx(calls / rpm, rel=0.10)  # the shared limit's time for the calls made (not a clock)
    assert fc.games == games and fc.sampled == 2 and fc.cost is None  # these models have no price


async def test_a_forecast_prices_what_it_counts_and_scales_to_the_games_left():
    plan = grid(30, alice="openai:gpt-4o", bob="openai:gpt-4o-mini")
    settings = settings_for(type("S", (), {"url": "http://127.0.0.1:9"})())  # never called
    sampled = await play_sampled(plan, settings, reply_tokens=300)
    full = forecast(plan, sampled, settings, to_play=range(30), reply_tokens=300)
    half = forecast(plan, sampled, settings, to_play=range(15, 30), reply_tokens=300)
    for name, price in (("openai:gpt-4o", (2.5, 10.0)), ("openai:gpt-4o-mini", (0.15, 0.6))):
        m = full.models[name]
        assert m.completion_tokens == pytest.approx(300 * m.calls)
        assert m.cost == pytest.approx((m.prompt_tokens * price[0] + m.completion_tokens * price[1]) / 1e6)
        assert half.models[name].calls == pytest.approx(m.calls / 2)
    assert full.minutes is None and full.unlimited == ["openai:gpt-4o", "openai:gpt-4o-mini"]


async def test_a_resumed_run_s_measured_prefix_cache_share_prices_the_prompt_tokens():
    plan = grid(10, alice="openai:gpt-4o", bob="openai:gpt-4o")
    settings = settings_for(type("S", (), {"url": "http://127.0.0.1:9"})())  # never called
    sampled = await play_sampled(plan, settings, reply_tokens=100)
    earlier = {"models": {"openai:gpt-4o": {"calls": 10, "prompt_tokens": 1000, "cached_tokens": 400, "completion_tokens": 50}}}
    plain = forecast(plan, sampled, settings, to_play=range(10), reply_tokens=100).models["openai:gpt-4o"]
    cached = forecast(plan, sampled, settings, to_play=range(10), reply_tokens=100, earlier=earlier).models["openai:gpt-4o"]
    assert (plain.cached_share, cached.cached_share) == (0.0, 0.4)
    input_price, cached_price = 2.5, 1.25  # gpt-4o, dollars per million prompt tokens
    saved = cached.prompt_tokens * 0.4 * (input_price - cached_price) / 1e6
    assert cached.cost == pytest.approx(plain.cost - saved, rel=1e-3)
