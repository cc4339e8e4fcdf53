"""A run's batches after it stopped, against the local server through the real SDKs: the dashboard
shows the batches in flight; ``asymgames batches RUN`` lists them with their state at the provider,
and ``--cancel`` cancels those in progress and deletes the OpenAI files the run no longer needs."""

from __future__ import annotations

import io
import time

import anyio
import pytest
from rich.console import Console

from engine import Grid, PolicyFactory, run_games
from engine.backends import HubContext
from engine.backends.batch.log import BATCHES_FILE, BatchLog
from engine.backends.settings import BatchSettings
from engine.play.run import RunProgress
from engine.records.rundir import RunDir
from runners.batches import main as batches_main
from engine.session import survey
from runners.concurrent import main as run_main
from runners.dashboard import render_dashboard
from runners.dashboard.display import batch_line

from tests.e2e.test_batch_runs import _fake
from tests.e2e.test_model_runs import server_process

from tests.engine.backends.helpers import KEYS, fake_server, settings_for

LIMIT = 120  # seconds: fails a hang, never a slow machine's run
MODELS = ("openai:one_piece", "anthropic:noisy")
# Each model plays the first turn of some games: both have a batch in flight from the start.
PLAN = Grid(game="asympuzl", seeds=3, seed=3, agents=[list(MODELS), list(reversed(MODELS))])
BATCHES = BatchSettings(enabled=True, size=3, wait=30, poll=0.02, poll_max=0.1)  # a batch: one model's first turns


async def _stopped(run_path, server, monkeypatch, *, lose_the_id: bool = False) -> tuple[str, str]:
    """Play ``PLAN`` as a run in ``run_path`` until each model's first batch is at the server, then
    stop as a kill would; the dashboard and the batches' part of the status line (shown without a
    dashboard) as they were then. ``lose_the_id``: stopped before the batches' ids reached the log."""
    settings = settings_for(server, batch=BATCHES)
    RunDir.create(run_path, PLAN).save_model_settings(settings)
    if lose_the_id:
        monkeypatch.setattr(BatchLog, "sent", lambda self, tag, batch_id: None)
    factory = PolicyFactory(settings, environ=KEYS)
    factory.hub = factory.hub.for_run(HubContext(run_dir=run_path))
    with anyio.fail_after(LIMIT):
        async with factory, anyio.create_task_group() as group:
            group.start_soon(lambda: run_games(PLAN.specs_for(range(PLAN.total)), factory=factory, concurrency=64, on_record=lambda r: None))
            log = run_path / BATCHES_FILE
            while len(server.batches.batches) < 2 or not (lose_the_id or log.read_bytes().count(b'"sent"') == 2):
                await anyio.sleep(0.01)
            console = Console(record=True, width=160, file=io.StringIO())
            console.print(render_dashboard(RunProgress(total=PLAN.total), 1.0, factory.hub))
            line = batch_line(factory.hub, time.monotonic())
            group.cancel_scope.cancel()
    monkeypatch.undo()
    return console.export_text(), line


@pytest.mark.slow
async def test_the_dashboard_shows_each_models_batches_in_flight(tmp_path, monkeypatch):
    async with fake_server(latency=0.0, batch_delay=3600) as server:
        shown, line = await _stopped(tmp_path / "run", server, monkeypatch)
    assert "batches" in shown and "in flight" in shown and "oldest" in shown
    for model in MODELS:
        row = shown.split("batched model")[1].split(model)[1].splitlines()[0]
        # sent, in flight, requests (the first turn of the 3 games it opens), queued
        assert row.split()[:4] == ["1", "1", "3", "0"], row
        assert f"| {model} batches: 1 in flight (3 requests), 0 queued, oldest " in line, line


@pytest.mark.parametrize("lose_the_id", [False, True], ids=["recorded", "id-lost"])
async def test_cancel_stops_a_stopped_runs_batches_and_deletes_its_input_files(tmp_path, monkeypatch, lose_the_id):
    run = tmp_path / "run"
    async with fake_server(latency=0.0, batch_delay=3600) as server:
        service = server.batches
        await _stopped(run, server, monkeypatch, lose_the_id=lose_the_id)
        uploaded = {b.fields["input_file_id"] for b in service.batches.values() if not b.anthropic}
        assert len(uploaded) == 1 and uploaded <= set(service.files)
        with anyio.fail_after(LIMIT):
            rows = await survey(run, KEYS)
            assert [(r.model, r.state.status, r.state.total) for r in rows] == [
                (model, "in_progress", 3) for model in sorted(MODELS, key=[r.model for r in rows].index)]
            assert {r.logged for r in rows} == {"id not recorded" if lose_the_id else "sent"}
            assert {r.batch_id for r in rows} == set(service.batches)  # found again when the log lost them
            rows = await survey(run, KEYS, cancel=True)
            assert all(r.done[0] == "cancelled" for r in rows)
            while any(b.status != ("ended" if b.anthropic else "cancelled") for b in service.batches.values()):
                await anyio.sleep(0.01)
            again = await survey(run, KEYS, cancel=True)
        stats = service.stats()
    assert stats["batches_ended"] == {"cancelled": 2}
    assert not uploaded & set(service.files)  # the input file is gone; the games are not recorded: outputs kept
    assert all(b.fields.get("error_file_id") in service.files for b in service.batches.values() if not b.anthropic)
    assert {r.state.status for r in again} == {"cancelled", "canceled"} and all(r.done == [] for r in again)


def test_a_finished_runs_batches_are_listed_and_their_files_deleted(tmp_path, monkeypatch, capsys):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    run = tmp_path / "run"
    with server_process("--latency", "0", "--batch-delay", "0.01") as url:
        argv = ["--games", "2", "--alice", MODELS[0], "--bob", MODELS[1], "--no-dashboard", "--openai-url", url + "/v1",
                "--anthropic-url", url, "--out", str(run), "--batch", "--batch-wait", "0.05", "--batch-poll", "0.02"]
        assert run_main(argv) == 0
        made = _fake(url, "/fake/stats")
        capsys.readouterr()
        assert batches_main([str(run)]) == 0
        listed = capsys.readouterr().out
        assert batches_main([str(run), "--cancel"]) == 0
        cleaned = capsys.readouterr().out
        left = _fake(url, "/fake/stats")
    openai_batches = sum(1 for line in (run / BATCHES_FILE).read_text().splitlines() if '"batch":"batch_' in line)
    assert listed.count("collected") == made["batches"] > openai_batches > 0 and "0 in progress" in listed
    assert "completed" in listed and "ended" in listed
    # Every game recorded: each OpenAI batch's input and output files deleted, nothing cancelled.
    assert made["files"] == 2 * openai_batches and left["files"] == 0
    assert cleaned.count("deleted 2 files") == openai_batches and "cancelled 0" in cleaned


def test_a_directory_without_batches_is_refused(tmp_path, capsys):
    RunDir.create(tmp_path / "run", PLAN)
    assert batches_main([str(tmp_path / "run")]) == 2
    assert "sent no batch" in capsys.readouterr().err
