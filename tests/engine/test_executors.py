"""The Ray executor on a local cluster (one for the module): the same records as in this process,
byte for byte, none lost or doubled when a worker is killed mid-run, and the workers draw on one
rate limit, learned from the headers, not on a copy each."""

from __future__ import annotations

import anyio
import pytest

from engine import PolicyFactory, RunDir
from engine.executors import make_executor
from engine.ids import IdSet
from engine.session import finish, play_plan
from engine.backends import BackendSettings
from tests.engine.backends.helpers import FAST, KEYS, fake_server
from tests.helpers import grid

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(
        num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
        runtime_env={"env_vars": {"OPENAI_API_KEY": KEYS["OPENAI_API_KEY"]}},  # the workers' environment
    )
    yield
    ray.shutdown()


def _play(path, plan, executor, observers=()) -> bytes:
    run = RunDir.create(path, plan)

    async def main():
        await play_plan(run, plan, PolicyFactory(), recorded=IdSet(), concurrency=64, executor=executor, observers=observers)

    anyio.run(main)
    finish(run, plan, complete=True)
    return run.results_path.read_bytes()


def test_ray_workers_write_the_same_results_as_this_process(tmp_path):
    plan = grid(400, alice="noisy", bob="one_piece", feedback="joint")
    local = _play(tmp_path / "local", plan, make_executor("local"))
    remote = _play(tmp_path / "ray", plan, make_executor("ray", workers=2))
    assert remote == local and local.count(b"\n") == 400


class KillAWorker:
    """Kills the first worker once some games are back, while it still has batches."""

    def __init__(self, executor, after: int) -> None:
        self.executor, self.after, self.seen = executor, after, 0

    def game_started(self, spec):
        return None

    def game_finished(self, spec, record):
        self.seen += 1
        if self.seen == self.after:
            ray.kill(self.executor.actors[0])


def test_a_worker_killed_mid_run_loses_no_game_and_records_none_twice(tmp_path):
    plan = grid(1500, alice="noisy", bob="noisy")
    local = _play(tmp_path / "local", plan, make_executor("local"))
    executor = make_executor("ray", workers=2)
    remote = _play(tmp_path / "ray", plan, executor, observers=[KillAWorker(executor, after=100)])
    assert remote == local
    assert executor.worker_stats[0][1] < executor.worker_stats[1][1]  # the killed worker played fewer


def test_workers_draw_on_one_limit_learned_from_the_headers(tmp_path):
    """The server allows 6000 requests a minute and says so in its headers; the run sets no limit.
    Each worker alone would learn the whole limit and the two would send twice it."""
    plan = grid(200, alice="openai:share_everything", bob="openai:share_everything")
    run = RunDir.create(tmp_path / "run", plan)
    executor = make_executor("ray", workers=2)

    async def main():
        async with fake_server(latency=0.01, rpm=6000) as server:
            settings = BackendSettings(options=FAST, urls={"openai": server.url + "/v1"}, clients={"openai": "lean"})
            factory = PolicyFactory(settings, environ=KEYS)
            await play_plan(run, plan, factory, recorded=IdSet(), concurrency=64, executor=executor)
            return server.stats

    stats = anyio.run(main)
    finish(run, plan, complete=True)
    records = run.records()
    assert len(records) == 200 and not [r.error for r in records if r.error]
    refused = stats.refused.get("429", 0)
    assert stats.requests > 500
    assert refused <= 0.02 * stats.requests, (refused, stats.requests)
    assert sum(executor.worker_stats[w][1] for w in (0, 1)) == 200 and min(executor.worker_stats[w][1] for w in (0, 1)) > 0
