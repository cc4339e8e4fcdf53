"""The Ray executor on a local cluster (one for the module): the same records as in this process,
byte for byte, none lost or doubled when a worker is killed mid-run, and the workers draw on one
rate limit, learned from the headers, not on a copy each."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import anyio
import pytest
from anyio import wait_all_tasks_blocked

from engine import PolicyFactory, RunDir
from engine.executors import make_executor
from engine.records.ids import IdSet
from engine.session.playing import finish, play_plan
from engine.backends import BackendSettings, ModelOptions
from engine.backends import HubContext, InfraError, ModelHub, Request
from engine.backends.wrappers import Wrapper
from engine.executors.tally import UsageReports
from engine.spending.budget import Caps, Spending
from runners.fake_llm.server import FakeConfig, FakeServer
from tests.engine.backends.helpers import FAST, KEYS, fake_server, settings_for
from runners.concurrent import main as run_main
from tests.e2e.test_model_runs import _records, server_process
from tests.e2e.test_spending import AGENTS, PRICES
from tests.helpers import grid, transcript_lines
from tests.processes import running

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # a Ray cluster for the module, a run or more on it per test

SURE = ModelOptions(timeout=60.0, max_attempts=8, backoff_base=0.01, backoff_max=0.05)  # no call timed out on a loaded machine


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(
        num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
        runtime_env={"env_vars": {"OPENAI_API_KEY": KEYS["OPENAI_API_KEY"]}},  # the workers' environment
    )
    yield
    ray.shutdown()


def _play(path, plan, executor, observers=(), transcripts=False) -> bytes:
    run = RunDir.create(path, plan)

    async def main():
        await play_plan(
            run, plan, PolicyFactory(), recorded=IdSet(), concurrency=64, executor=executor, observers=observers,
            transcripts=transcripts,
        )

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
    assert refused <= 0.05 * stats.requests, (refused, stats.requests)  # 27% without the ledger; timing on a loaded machine adds a few
    assert sum(executor.worker_stats[w][1] for w in (0, 1)) == 200 and min(executor.worker_stats[w][1] for w in (0, 1)) > 0
    usage = json.loads((run.path / "usage.json").read_text())
    assert len(usage["processes"]) == 2  # each worker's calls
    assert sum(m["calls"] for m in usage["models"].values()) == stats.served


def test_the_calls_of_a_worker_killed_mid_run_count_once_in_the_usage(tmp_path):
    """Worker 0 is killed with ``kill -9`` mid-run, its calls running: its lost games are played again
    by worker 1, and usage.json counts every call the server answered once, the dead worker's
    included, but for calls whose reply reached no game: at most one per seat of each game worker 0
    lost (a seat's calls are made one at a time), since no reply reaches a game before its call is
    counted in the tally. A spending cap counts the dead worker's calls beyond its records as the run
    goes: at the end it has what usage.json has."""
    plan = grid(300, alice="openai:share_everything", bob="openai:share_everything")
    seats = 2
    run = RunDir.create(tmp_path / "run", plan)
    executor = make_executor("ray", workers=2)
    factory_box = []
    answered: Counter[int] = Counter()  # game id -> calls the server answered for it

    async def kill_worker_0(server: FakeServer) -> None:
        while not executor.actors:
            await anyio.sleep(0.01)
        pid = await executor.actors[0].__ray_call__.remote(lambda worker: os.getpid())
        while server.stats.served < 200:
            await anyio.sleep(0.01)
        os.kill(pid, signal.SIGKILL)

    async def main():
        server = FakeServer(FakeConfig(latency=0.01))
        play = server._play

        async def counting(body, system, users, game, call):
            text = await play(body, system, users, game, call)
            answered[int(game.split(";")[0].split("-")[-1])] += 1  # the header: "<run token>-<game id>;seed=<seed>"
            return text

        server._play = counting
        await server.start()
        try:
            settings = BackendSettings(options=SURE, urls={"openai": server.url + "/v1"}, clients={"openai": "lean"})
            factory = PolicyFactory(settings, environ=KEYS)
            spending = Spending(factory.hub, plan.total, caps=Caps(max_tokens=10**12))  # a cap that never binds
            factory_box.append(spending)
            async with anyio.create_task_group() as tg:
                tg.start_soon(kill_worker_0, server)
                await play_plan(run, plan, factory, recorded=IdSet(), concurrency=16, executor=executor, spending=spending)
                tg.cancel_scope.cancel()
            return server.stats
        finally:
            await server.stop()

    stats = anyio.run(main)
    finish(run, plan, complete=True)
    records = run.records()
    assert sorted(r.game_id for r in records) == list(range(300))
    assert 0 in executor.dead and 0 < executor.worker_stats[0][1] < executor.worker_stats[1][1]
    usage = json.loads((run.path / "usage.json").read_text())
    assert len(usage["processes"]) == 2 and all(p["models"]["openai:share_everything"]["calls"] for p in usage["processes"])
    used = {r.game_id: sum(u.calls for u in r.usage.values()) for r in records}  # the replies each record holds
    lost = {game: answered[game] - used[game] for game in used}  # answered for worker 0 in games it lost
    assert sum(answered.values()) == stats.served and min(lost.values()) >= 0 and max(lost.values()) > 0
    counted = sum(m["calls"] for m in usage["models"].values())
    assert 0 <= stats.served - counted <= sum(min(n, seats) for n in lost.values())
    (spending,) = factory_box
    in_records = sum(u.prompt_tokens + u.completion_tokens for r in records for u in r.usage.values())
    in_usage = sum(m["prompt_tokens"] + m["completion_tokens"] for m in usage["models"].values())
    assert spending.finished_tokens == in_records < in_usage  # the records leave out the dead worker's lost calls
    assert spending.tokens == in_usage  # the cap counted them


def test_a_call_ends_once_a_report_taken_after_it_landed_one_report_in_flight():
    """``UsageReports``: each call's end waits for a report taken after it; while one is in flight,
    the calls that end wait for the next, which counts them all."""
    calls, landed, gates, done = [0], [], [], []

    async def remote(worker, summary):
        gates.append(anyio.Event())
        await gates[-1].wait()
        landed.append(summary["calls"])

    reports = UsageReports(SimpleNamespace(report=SimpleNamespace(remote=remote)), 0)

    async def call(n):
        calls[0] += 1
        await reports.after_call()
        done.append((n, list(landed)))  # what the tally had when the reply was returned

    async def main():
        async with anyio.create_task_group() as tg:
            tg.start_soon(reports.keep_sending, lambda: {"calls": calls[0]})
            tg.start_soon(call, 1)
            await wait_all_tasks_blocked()
            tg.start_soon(call, 2)
            tg.start_soon(call, 3)
            await wait_all_tasks_blocked()
            assert len(gates) == 1 and not done  # the report of call 1 in flight; 2 and 3 wait for the next
            gates[0].set()
            await wait_all_tasks_blocked()
            assert done == [(1, [1])] and len(gates) == 2
            gates[1].set()
            await wait_all_tasks_blocked()
            assert sorted(done) == [(1, [1]), (2, [1, 3]), (3, [1, 3])] and len(gates) == 2
            tg.cancel_scope.cancel()

    anyio.run(main)


def layers(backend):
    """The backends a call goes through, outermost first."""
    while isinstance(backend, Wrapper):
        yield backend
        backend = backend.inner
    yield backend


def test_the_hub_awaits_its_hook_as_each_call_ends_answered_or_failed_and_has_none_in_one_process():
    async def main():
        async with fake_server(latency=0.0, models=["share_everything"], only_models=True) as server:
            seen = []

            async def after_call():
                await anyio.sleep(0)  # a report on its way
                seen.append(sum(b.limiter.stats.calls + b.limiter.stats.failed for b in hub.backends()))

            hub = ModelHub(settings_for(server, clients={"openai": "lean"}), environ=KEYS, context=HubContext(after_call=after_call))
            async with hub:
                await hub.backend("openai:share_everything").complete(Request("system", "user"))
                assert seen == [1]
                with pytest.raises(InfraError):  # 404: given up at once
                    await hub.backend("openai:unknown").complete(Request("system", "user"))
                assert seen == [1, 2]
            plain = ModelHub(settings_for(server), environ=KEYS).backend("openai:share_everything")
            assert [type(b).__name__ for b in layers(plain)] == ["PacedCalls", "OpenAIBackend"]

    anyio.run(main)


@pytest.mark.parametrize("detail", [True, "messages"])
def test_transcripts_made_by_the_workers_are_those_made_in_this_process(tmp_path, detail):
    plan = grid(120, alice="noisy", bob="one_piece", feedback="both")
    _play(tmp_path / "local", plan, make_executor("local"), transcripts=detail)
    _play(tmp_path / "ray", plan, make_executor("ray", workers=2), transcripts=detail)
    local, remote = (_transcripts(tmp_path / where) for where in ("local", "ray"))
    assert len(local) == 120 and remote == local


def _transcripts(run) -> list[dict]:
    """The transcripts by game, less the time each policy took."""
    found = transcript_lines(run)
    for transcript in found:
        for turn in transcript["turns"]:
            turn.pop("latency", None)
    return sorted(found, key=lambda t: t["game_id"])


def test_a_cost_cap_stops_the_cluster_and_the_workers_usage_is_the_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["OPENAI_API_KEY"])
    run = tmp_path / "run"
    with server_process() as url:
        flags = [*AGENTS, *PRICES, "--openai-url", url + "/v1"]
        code = run_main(["--games", "40", *flags, "--out", str(run), "--max-cost", "0.5", "--concurrency", "8",
                         "--executor", "ray", "--workers", "2"])
        printed = capsys.readouterr().out
        assert code == 5, printed
        first = _records(run)
        spent = sum(u["cost_usd"] for r in first for u in r["usage"].values())
        assert 0 < len(first) < 40 and spent <= 0.5
        usage = json.loads((run / "usage.json").read_text())
        assert 1 <= len(usage["processes"]) <= 2  # one per worker that called a model
        assert sum(m["calls"] for m in usage["models"].values()) == sum(len(r["turn_log"]) for r in first)
        assert round(sum(m["cost_usd"] for m in usage["models"].values()), 6) == round(spent, 6)
        assert run_main([*flags, "--resume", str(run), "--max-cost", "100"]) == 0
    assert sorted(r["game_id"] for r in _records(run)) == list(range(40))


OWN_CLUSTER = """
import json, os, sys
from pathlib import Path

import anyio

from engine import PolicyFactory, RunDir
from engine.executors import make_executor
from engine.records.ids import IdSet
from engine.session.playing import play_plan
from tests.helpers import grid
from tests.processes import descendants

plan = grid(60, alice="noisy", bob="one_piece")
run = RunDir.create(Path(sys.argv[1]), plan)
executor = make_executor("ray", workers=2)
anyio.run(lambda: play_plan(run, plan, PolicyFactory(), recorded=IdSet(), concurrency=16, executor=executor))
print(json.dumps({"records": len(run.records()), "started": executor.startup.started_cluster, "processes": descendants(os.getpid())}))
"""


def test_the_cluster_a_run_starts_has_none_of_the_unused_processes_and_ends_with_the_run(tmp_path):
    """A run's own local cluster (in a process of its own: this module's is started by the fixture):
    the games are played; Ray's autoscaler monitor, log monitor and API server are not started; and
    the cluster's processes end with the run."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", OWN_CLUSTER, str(tmp_path / "run")], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    processes = {int(pid): command for pid, command in found["processes"].items()}
    try:
        assert found["records"] == 60 and found["started"]
        assert any("gcs_server" in command for command in processes.values())
        assert not [command for command in processes.values() if "monitor.py" in command or "dashboard.py" in command], processes
        for _ in range(600):  # Ray stops its processes as the driver exits (a bound against a hang)
            if not [pid for pid, command in processes.items() if running(pid, command)]:
                break
            time.sleep(0.1)
        left = [pid for pid, command in processes.items() if running(pid, command)]
        assert not left, {pid: processes[pid] for pid in left}
    finally:
        for pid, command in processes.items():  # none should be left; any that is is ended here, by its id
            if running(pid, command):
                os.kill(pid, signal.SIGKILL)



def test_games_played_by_ray_workers_play_with_the_weights_the_driver_pinned(tmp_path):
    """A game's weights go with its batch: the worker's calls are sent to the version the driver
    pinned (``weights.jsonl``), swapped mid-run as in one process."""
    import msgspec

    from tests.engine.test_onpolicy import GRID, adapter, play, served_as_pinned, stats

    first, second = adapter(tmp_path / "a", "noisy", b"step 1"), adapter(tmp_path / "b", "share_everything", b"step 2")
    grid = msgspec.structs.replace(GRID, seeds=6)
    with server_process() as url:
        groups, weights = play(url, tmp_path / "run", [second], before=[first], grid=grid,
                               executor=make_executor("ray", workers=2), concurrency=4)
        served = stats(url)
    calls = served_as_pinned(groups, served)
    assert calls[1] > 0  # the games pinned before the swap: version 1, an adapter, not the base model
    assert set(calls) <= {1, 2}
