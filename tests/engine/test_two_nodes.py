"""The Ray executor on a real cluster of two nodes on this machine (``ray.cluster_utils.Cluster``):
the driver joins it by its address, as ``--ray-address`` does, one worker runs on each node, and
every game is recorded once."""

from __future__ import annotations

import anyio
import pytest

from engine import PolicyFactory, RunDir
from engine.executors import make_executor
from engine.records.ids import IdSet
from engine.session.playing import finish, play_plan
from tests.helpers import grid

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402 - after the skip

pytestmark = pytest.mark.slow  # a Ray cluster of two nodes


@pytest.fixture
def two_nodes():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_a_run_on_two_nodes_plays_every_game_once_on_both(two_nodes, tmp_path):
    plan = grid(600, alice="noisy", bob="one_piece")
    run = RunDir.create(tmp_path / "run", plan)
    executor = make_executor("ray", workers=2, address=two_nodes.address)  # a CPU each: one worker per node

    async def main():
        await play_plan(run, plan, PolicyFactory(), recorded=IdSet(), concurrency=64, executor=executor)

    anyio.run(main)
    finish(run, plan, complete=True)
    ids = [record.game_id for record in run.records()]
    assert sorted(ids) == list(range(600))
    nodes = {node.node_id for node in [two_nodes.head_node, *two_nodes.worker_nodes]}
    assert len(nodes) == 2 and {executor.nodes[w][0] for w in (0, 1)} == nodes
    assert all(executor.worker_stats[w][1] > 0 for w in (0, 1))
