"""Ctrl-C and SIGTERM stop a run gently: no game starts after the signal, the games in flight are
given the grace period to finish and be recorded, a second signal stops at once, and the stop line
says how many games in flight were stopped (to be played again by --resume)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.e2e.test_model_runs import ROOT, server_process

GAMES = 24


def start_run(url: str, out, *extra: str) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "runners.concurrent", "--games", str(GAMES), "--alice", "openai:one_piece", "--bob",
        "openai:one_piece", "--openai-url", url + "/v1", "--concurrency", "8", "--out", str(out), "--no-dashboard",
        "--log-level", "debug", *extra,
    ]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-grace-0000"}
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for_a_record(out, proc) -> None:
    path = out / "results.jsonl"
    while not (path.exists() and path.read_bytes().count(b"\n") >= 1):
        if proc.poll() is not None:
            pytest.fail(f"run ended before it could be interrupted: {proc.stdout.read()}")
        time.sleep(0.02)


def games_that_played_a_turn(out) -> set[int]:
    lines = (json.loads(line) for line in (out / "run.log").read_text().splitlines())
    return {line["game_id"] for line in lines if line.get("event") == "turn"}


def recorded(out) -> list[int]:
    return [json.loads(line)["game_id"] for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_games_in_flight_finish_within_the_grace_period_and_none_starts(how, tmp_path):
    out = tmp_path / "run"
    with server_process("--latency", "0.2") as url:
        proc = start_run(url, out, "--grace", "600")
        wait_for_a_record(out, proc)
        proc.send_signal(how)
        output, _ = proc.communicate(timeout=300)
        assert proc.returncode == 130, output
        games = recorded(out)
        assert len(games) < GAMES and len(set(games)) == len(games)
        assert games_that_played_a_turn(out) <= set(games)  # every game that began was recorded
        assert "Stopping: no game starts" in output and "in flight stopped" not in output and "Traceback" not in output
        resumed = subprocess.run([sys.executable, "-m", "runners.concurrent", "--resume", str(out), "--no-dashboard"],
                                 cwd=ROOT, env={**os.environ, "OPENAI_API_KEY": "sk-test-grace-0000"},
                                 capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert sorted(recorded(out)) == list(range(GAMES))


def test_a_second_signal_stops_at_once_and_says_what_will_replay(tmp_path):
    out = tmp_path / "run"
    with server_process("--latency", "0.2") as url:
        proc = start_run(url, out, "--grace", "600")
        wait_for_a_record(out, proc)
        proc.send_signal(signal.SIGINT)
        while "Stopping" not in (line := proc.stdout.readline()):
            assert line, "the run ended without the stopping line"
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    stopped = int(output.split(" in flight stopped")[0].split("; ")[-1].split()[0])
    began = games_that_played_a_turn(out)
    assert stopped >= 1 and len(began - set(recorded(out))) <= stopped
