"""Two models on one account's limit: with ``shared_limits`` they draw on one pair of buckets, so a
server that enforces the limit across models refuses (almost) nothing; each with its own bucket, each
draws on its own."""

from __future__ import annotations

from tests.engine.backends.helpers import fake_server, play, settings_for
from tests.helpers import grid

RPM = 3000  # the server's limit, across models; the run is told 90% of it


async def _refused(shared: bool) -> tuple[int, list]:
    config = grid(60, alice="openai:share_everything", bob="openai:model-b")
    async with fake_server(latency=0.01, rpm=RPM) as server:
        settings = settings_for(server, rpm={"openai": 0.9 * RPM}, shared_limits=["openai"] if shared else [])
        records, factory = await play(config, settings)
        refused = server.stats.refused.get("429", 0)
    limiters = [b.limiter for b in factory.hub.backends()]
    assert len(limiters) == 2 and all(r.outcome == "success" for r in records)
    assert (limiters[0].requests is limiters[1].requests) == shared
    return refused, limiters


async def test_models_that_share_a_limit_stay_within_it_together():
    """Shared, the two models never send more than the limit between them, however fast the machine
    (a slower one only sends less), so the server refuses (almost) nothing. How much more two
    separate buckets send depends on how fast this machine is: a figure for a benchmark, not a test."""
    shared, _ = await _refused(True)
    assert shared <= 5, shared  # 0 to 2 in trials
