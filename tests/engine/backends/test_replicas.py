"""One model on several vLLM servers: calls spread over them by their room, and a server stopped
mid-run is taken out with its calls played on the others, no game lost."""

from __future__ import annotations

import anyio
import pytest

from engine import Grid
from engine.backends import BackendSettings
from engine.backends.replicas import split_urls

from tests.engine.backends.helpers import FAST, fake_server, play, without_models

SEQS = 4


def _plan(games: int) -> Grid:
    return Grid(game="asympuzl", seeds=games, seed=3, agents=[["vllm:share_everything", "vllm:share_everything"]])


def _settings(servers) -> BackendSettings:
    return BackendSettings(options=FAST, urls={"vllm": ",".join(s.url + "/v1" for s in servers)}, vllm_max_seqs=SEQS)


def test_the_flag_takes_several_servers_comma_separated():
    assert split_urls(" http://a:1/v1, http://b:2/v1 ,") == ["http://a:1/v1", "http://b:2/v1"]
    assert split_urls(None) == []


async def test_calls_spread_over_the_servers_and_the_games_are_those_played_on_one():
    plan = _plan(24)
    async with fake_server(latency=0.02, max_num_seqs=SEQS) as one:
        single, _ = await play(plan, _settings([one]))
    async with fake_server(latency=0.02, max_num_seqs=SEQS) as a, fake_server(latency=0.02, max_num_seqs=SEQS) as b, \
            fake_server(latency=0.02, max_num_seqs=SEQS) as c:
        spread, factory = await play(plan, _settings([a, b, c]))
        served = [s.stats.served for s in (a, b, c)]
        peaks = [s.stats.max_running for s in (a, b, c)]
    assert [without_models(r) for r in spread] == [without_models(r) for r in single]
    servers = factory.hub.summary()["models"]["vllm:share_everything"]["servers"]
    assert [s["calls"] for s in servers] == served
    assert sum(served) == sum(len(r.turn_log) for r in spread)
    assert min(served) >= sum(served) / 6  # each server got a fair part
    assert all(peak <= SEQS for peak in peaks)  # the fake batches SEQS at once; the rest queue
    assert all(s["out_of_service"] is None for s in servers)


async def test_a_server_stopped_mid_run_is_taken_out_and_no_game_is_lost():
    plan = _plan(40)
    async with fake_server(latency=0.02, max_num_seqs=SEQS) as a, fake_server(latency=0.02, max_num_seqs=SEQS) as b, \
            fake_server(latency=0.02, max_num_seqs=SEQS) as doomed:

        async def stop_when_busy():
            while doomed.stats.served < 20:
                await anyio.sleep(0.01)
            await doomed.stop()  # its calls in flight are cut off; new connections are refused

        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_when_busy)
            records, factory = await play(plan, _settings([a, b, doomed]))
        served_after = doomed.stats.served
    assert len(records) == 40
    assert [r.error for r in records if r.error] == []
    assert {r.outcome for r in records} <= {"success", "failure"}
    model = factory.hub.summary()["models"]["vllm:share_everything"]
    out = [s["out_of_service"] for s in model["servers"]]
    assert out[:2] == [None, None] and out[2] is not None
    assert model["servers"][2]["calls"] == served_after  # nothing was sent to it once it was out
    assert model["failed"] == 0
    assert model["connection_errors"] == 0  # a call cut off was sent to another server at once


@pytest.mark.parametrize("client", ["sdk"])
def test_several_servers_need_the_lean_client(client):
    from engine.backends import ModelHub

    hub = ModelHub(BackendSettings(urls={"vllm": "http://a:1/v1,http://b:2/v1"}, clients={"vllm": client}), environ={})
    with pytest.raises(ValueError, match="lean client only"):
        hub.check("vllm:m")
