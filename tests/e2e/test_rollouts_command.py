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


def test_bad_input_is_refused_before_any_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(*next(iter(KEY.items())))
    out = tmp_path / "run"
    for argv, said in [
        (["--game", "chain", "--train", "alice"], "trained seat 'alice' is played by"),
        (["--game", "chain", "--no-messages"], "a rollout keeps full transcripts"),
        (["--resume", str(out), "--group", "4"], "a rollout resumes with its saved group"),
        (["--game", "chain", "--weights-dir", str(tmp_path / "none")], "is not a folder"),
        (["--game", "chain", "--alice", "openai:noisy", "--train", "alice", "--weights-dir", str(tmp_path)],
         "openai:noisy is not on a vLLM server the run names"),
        (["--game", "chain", "--alice", "vllm:a", "--bob", "vllm:b", "--vllm-url", "http://127.0.0.1:9/v1", "--weights-dir", str(tmp_path)],
         "the trained seats are played by 2 models"),
        (["--game", "chain", "--alice", "vllm:a", "--train", "alice", "--vllm-url", "http://127.0.0.1:9/v1,http://127.0.0.1:10/v1",
          "--weights-dir", str(tmp_path)], "is on several vLLM servers"),
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


def test_an_adapter_renamed_into_the_weights_folder_mid_run_plays_the_games_started_after(tmp_path, monkeypatch):
    """``--weights-dir``: the run starts on the base model; an adapter a trainer renames into the
    folder once the first group is written is loaded, and the later games play with it."""
    from engine.rollouts import GroupFile, weights_dir
    from engine.serving.swap import adapter_digest
    from tests.engine.test_onpolicy import adapter, stats

    monkeypatch.setattr(weights_dir, "SCAN_EVERY", 0.01)
    folder, out = tmp_path / "adapters", tmp_path / "run"
    folder.mkdir()
    staged = adapter(folder, ".noisy", b"step 1")  # written under a dot name: not taken yet
    ready = folder / "noisy"  # the local server plays an adapter as the strategy its folder is named after

    class RenameAfterTheFirstGroup(GroupFile):
        def _group(self, number, records):
            super()._group(number, records)
            if not ready.exists():
                staged.rename(ready)

    monkeypatch.setattr("runners.rollouts.GroupFile", RenameAfterTheFirstGroup)
    with server_process("--latency", "0.02") as url:
        assert rollouts_main(["--game", "chain", "--alice", "vllm:share_everything", "--bob", "vllm:noisy", "--carol", "noisy",
                              "--size", "3", "--group", "2", "--games", "6", "--train", "alice", "--concurrency", "1",
                              "--vllm-url", url + "/v1", "--weights-dir", str(folder), "--out", str(out), "--no-dashboard"]) == 0
        served = stats(url)
    seats = [t for g in _by_group(_lines(out)).values() for t in g["trajectories"] if t["role"] == "alice"]
    pins = [json.loads(line) for line in (out / "weights.jsonl").read_text().splitlines()]  # as the games started
    versions = [pin["weights"]["version"] for pin in pins]  # one game at a time
    assert versions == sorted(versions) and versions[0] == 0 and versions[-1] == 1
    assert {t["game_id"]: t["weights"] for t in seats} == {pin["game_id"]: pin["weights"] for pin in pins}
    new = next(t["weights"] for t in seats if t["weights"]["version"] == 1)
    assert new == {"version": 1, "served": "share_everything@1", "sha256": adapter_digest(ready)}
    assert served["adapters"] == {"share_everything@1": "noisy"}
    for version, name in ((0, "share_everything"), (1, "share_everything@1")):
        assert served["served_models"][name] == sum(len(t["steps"]) for t in seats if t["weights"]["version"] == version)
