"""Batch mode from the command line, against the local server in its own process: a run killed with
SIGKILL while its batch is in flight is resumed, collects that batch and sends no request twice,
and plays the games a run without batches plays; the dry run prices batched calls at the batch
price; batch mode is refused where it cannot work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from engine.records.transcripts import iter_transcripts
from runners.concurrent import main as run_main
from tests.e2e.test_model_runs import ROOT, server_process

KEYS = {"OPENAI_API_KEY": "sk-test-batch-0000", "ANTHROPIC_API_KEY": "sk-ant-test-batch-0000"}
LIMIT = 120  # seconds: fails a hang, never a slow machine's run


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def _played(record: dict) -> dict:
    """A record less what only says how its calls were made (usage, sampling)."""
    record = {k: v for k, v in record.items() if k not in ("usage", "sampling")}
    record["turn_log"] = [{k: v for k, v in turn.items() if k != "usage"} for turn in record["turn_log"]]
    return record


def _messages(run: Path) -> dict[int, list[tuple[str, str]]]:
    return {game_id: [(turn.role, turn.message) for turn in t.turns] for game_id, t in iter_transcripts(run)}


def _fake(url: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url + path, data=data), timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_a_run_killed_mid_batch_resumes_collects_it_and_plays_the_games_of_a_run_without_batches(tmp_path, monkeypatch):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    run, plain = tmp_path / "batched", tmp_path / "plain"
    models = ["--games", "6", "--alice", "openai:one_piece", "--bob", "anthropic:noisy", "--no-dashboard"]
    batched = [*models, "--batch", "--batch-wait", "0.2", "--batch-poll", "0.05"]
    with server_process("--batch-delay", "3600") as url:  # batches end when the test says
        urls = ["--openai-url", url + "/v1", "--anthropic-url", url]
        runner = subprocess.Popen(
            [sys.executable, "-m", "runners.concurrent", *batched, *urls, "--out", str(run)],
            cwd=ROOT, env={**os.environ, **KEYS}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + LIMIT
            log = run / "batches.jsonl"
            while not (log.exists() and b'"sent"' in log.read_bytes()):  # the first batch is at the server
                assert runner.poll() is None, runner.stderr.read().decode()[-3000:]
                assert time.monotonic() < deadline, "no batch was sent"
                time.sleep(0.05)
        finally:
            runner.kill()  # SIGKILL: nothing after it runs
            runner.wait(timeout=30)
            runner.stderr.close()
        assert not (run / "results.jsonl").exists() or not _records(run)  # no game got past its first batch
        _fake(url, "/fake/batch-delay", {"seconds": 0.05})
        assert run_main(["--resume", str(run), "--no-dashboard"]) == 0
        assert run_main([*models, *urls, "--out", str(plain)]) == 0
        stats = _fake(url, "/fake/stats")
    records = _records(run)
    assert [r["game_id"] for r in records] == list(range(6)) and all(r["outcome"] == "success" for r in records)
    assert [_played(r) for r in records] == [_played(r) for r in _records(plain)]
    assert _messages(run) == _messages(plain)
    # Every request went out once: the batch in flight at the kill was collected, not sent again.
    assert stats["batch_repeats"] == [] and stats["batch_requests"] == stats["batch_custom_ids"]
    assert stats["batch_requests"] == sum(len(r["turn_log"]) for r in records)
    usage = json.loads((run / "usage.json").read_text())
    assert usage["options"]["batch"]["earlier_batches_collected"] == 1
    for figures in usage["models"].values():
        assert figures["batched"] == figures["calls"] > 0


def test_the_dry_run_prices_batched_calls_at_the_batch_price(tmp_path, monkeypatch, capsys):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    flags = ["--games", "400", "--alice", "openai:gpt-4o", "--bob", "anthropic:claude-sonnet-4-5", "--out", str(tmp_path / "r"),
             "--reply-tokens", "200", "--dry-run"]
    costs = []
    for extra in ([], ["--batch"]):
        with pytest.raises(SystemExit) as exit_info:
            run_main([*flags, *extra])
        assert exit_info.value.code == 0
        printed = capsys.readouterr().out
        costs.append(float(printed.split("Expected: ")[1].split("$")[1].split(";")[0].replace(",", "")))
    assert "anthropic:claude-sonnet-4-5, openai:gpt-4o in the providers' batches (--batch), at the batch price" in printed
    assert costs[0] > 1 and costs[1] == pytest.approx(costs[0] / 2, abs=0.011)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("flags, message", [
    (["--batch-size", "10"], "argument --batch-size: batch mode is off; give it with --batch"),
    (["--batch", "--executor", "ray"], "argument --batch: batches are sent by this process only; drop --executor ray"),
])
def test_batch_mode_where_it_cannot_work_is_one_line_and_status_2(tmp_path, monkeypatch, capsys, flags, message):
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["OPENAI_API_KEY"])
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--games", "2", "--alice", "openai:gpt-4o", "--out", str(tmp_path / "r"), *flags])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
