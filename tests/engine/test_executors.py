"""The Ray executor on a local cluster (one for the module): the same records as in this process,
byte for byte, and none lost or doubled when a worker is killed mid-run."""

from __future__ import annotations

import anyio
import pytest

from engine import PolicyFactory, RunDir
from engine.executors import make_executor
from engine.ids import IdSet
from engine.session import finish, play_plan
from tests.helpers import grid

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
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
