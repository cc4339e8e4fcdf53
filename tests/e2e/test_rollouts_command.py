"""``asymgames rollouts`` from the command line, against the local model server in its own process:
a rollout killed with SIGKILL keeps the groups it wrote, and its resume writes the rest, each group
once, the same groups a rollout never stopped writes; bad input is refused before any file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runners.rollouts import main as rollouts_main
from tests.e2e.test_model_runs import ROOT, server_process

KEY = {"OPENAI_API_KEY": "sk-test-rollouts-0000"}
LIMIT = 120  # seconds: fails a hang, never a slow machine's run


def _lines(run: Path) -> list[bytes]:
    return (run / "rollouts.jsonl").read_bytes().splitlines(keepends=True)


def _by_group(lines: list[bytes]) -> dict[int, dict]:
    groups = [json.loads(line) for line in lines]
    assert len({g["group"] for g in groups}) == len(groups), "a group written twice"
    return {g["group"]: g for g in groups}


@pytest.mark.slow
def test_a_killed_rollout_keeps_its_groups_and_its_resume_writes_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv(*next(iter(KEY.items())))
    run, plain = tmp_path / "killed", tmp_path / "plain"
    with server_process("--latency", "0.1") as url:
        flags = ["--game", "chain", "--alice", "openai:noisy", "--bob", "openai:noisy", "--carol", "noisy", "--size", "4",
                 "--group", "3", "--games", "6", "--train", "alice", "--concurrency", "3",
                 "--openai-url", url + "/v1", "--no-dashboard"]
        runner = subprocess.Popen([sys.executable, "-m", "runners.rollouts", *flags, "--out", str(run)],
                                  cwd=ROOT, env={**os.environ, **KEY}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + LIMIT
            while not ((run / "rollouts.jsonl").exists() and (run / "rollouts.jsonl").read_bytes().count(b"\n") >= 1):
                assert runner.poll() is None, runner.stderr.read().decode()[-3000:]
                assert time.monotonic() < deadline, "no group was written"
                time.sleep(0.02)
        finally:
            runner.kill()  # SIGKILL: nothing after it runs
            runner.wait(timeout=30)
            runner.stderr.close()
        before = [line for line in _lines(run) if line.endswith(b"\n")]
        assert 1 <= len(before) < 6
        with (run / "rollouts.jsonl").open("ab") as f:
            f.write(b'{"group": 99, "seed"')  # a line a kill cut short
        assert rollouts_main(["--resume", str(run), "--no-dashboard"]) == 0
        assert rollouts_main([*flags, "--out", str(plain)]) == 0
        assert rollouts_main(["--resume", str(run), "--no-dashboard"]) == 0  # nothing left: nothing written twice
    after = _lines(run)
    assert after[: len(before)] == before  # the groups written before the kill, as they were
    assert sorted(_by_group(after)) == list(range(6))
    assert _by_group(after) == _by_group(_lines(plain))
    trainable = {(t["role"], t.get("trainable", False)) for g in _by_group(after).values() for t in g["trajectories"]}
    assert trainable == {("alice", True), ("bob", False), ("carol", False)}


def test_bad_input_is_refused_before_any_file(tmp_path, capsys):
    out = tmp_path / "run"
    for argv, said in [
        (["--game", "chain", "--train", "alice"], "trained seat 'alice' is played by"),
        (["--game", "chain", "--no-messages"], "a rollout keeps full transcripts"),
        (["--resume", str(out), "--group", "4"], "a rollout resumes with its saved group"),
    ]:
        with pytest.raises(SystemExit) as exited:
            rollouts_main([*argv, "--out", str(out), "--no-dashboard"])
        assert exited.value.code == 2 and said in capsys.readouterr().err
        assert not out.exists()


def test_a_scripted_rollout_writes_a_group_per_seed(tmp_path):
    out = tmp_path / "run"
    assert rollouts_main(["--game", "einstein", "--group", "2", "--games", "3", "--out", str(out), "--no-dashboard"]) == 0
    groups = _by_group(_lines(out))
    assert sorted(groups) == [0, 1, 2]
    for group in groups.values():
        assert len(group["games"]) == 2 and len(group["trajectories"]) == 4
        assert all("partial" in t["rewards"] and not t.get("trainable") for t in group["trajectories"])
