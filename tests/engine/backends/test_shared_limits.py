"""Two models on one account's limit: with ``shared_limits`` they draw on one pair of buckets; each
with its own bucket, each draws on its own. Played through the local server, which enforces the
limit across models."""

from __future__ import annotations

from tests.engine.backends.helpers import fake_server, play, settings_for
from tests.helpers import grid

RPM = 3000  # the run is told 90% of it, for each model or for both


async def _refused(shared: bool) -> tuple[int, list]:
    config = grid(60, alice="openai:share_everything", bob="openai:model-b")
    # The server's limit, across models, holds what the run may send: apart, each model may send 90%
    # of RPM, and at one limit of RPM how many calls would run out of retries depends on the machine.
    async with fake_server(latency=0.01, rpm=RPM if shared else 2 * RPM) as server:
        settings = settings_for(server, rpm={"openai": 0.9 * RPM}, shared_limits=["openai"] if shared else [])
        records, factory = await play(config, settings)
        refused = server.stats.refused.get("429", 0)
    limiters = [b.limiter for b in factory.hub.backends()]
    assert len(limiters) == 2 and all(r.outcome == "success" for r in records)
    assert (limiters[0].requests is limiters[1].requests) == shared
    return refused, limiters


async def test_models_that_share_a_limit_draw_on_one_pair_of_buckets():
    """Shared, the two models draw on one request bucket and one token bucket at the rate given;
    apart, each on its own at that rate. (How many 429s a server sends either way depends on how
    fast this machine is: a figure for a benchmark, not a test; the bucket's own arithmetic is
    tested under a fake clock in test_model_parts.)"""
    for shared in (True, False):
        _, limiters = await _refused(shared)
        assert all(limiter.requests.per_minute == 0.9 * RPM for limiter in limiters)
        assert (limiters[0].tokens is limiters[1].tokens) == shared
