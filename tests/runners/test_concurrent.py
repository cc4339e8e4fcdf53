"""The command line: arguments, results files, determinism, interruption and resume."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import RunDir
from runners.concurrent import main

ROOT = Path(__file__).resolve().parents[2]
RUNNER = [sys.executable, "-m", "runners.concurrent"]


def run_cli(*args, cwd=ROOT):
    return subprocess.run([*RUNNER, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--games", "0"], "--games"),
        (["--games", "ten"], "--games"),
        (["--size", "1"], "--size"),
        (["--size", "35", "--distractors", "10"], "--size"),
        (["--distractors", "11"], "--distractors"),
        (["--distractors-in", "carol"], "--distractors-in"),
        (["--feedback", "partial"], "--feedback"),
        (["--max-turns", "-3"], "--max-turns"),
        (["--max-turns", "1001"], "--max-turns"),
        (["--size", "41"], "--size"),
        (["--history", "some"], "--history"),
        (["--alice", "genius"], "--alice"),
        (["--bob", "openai:gpt-4o"], "--bob"),
        (["--concurrency", "0"], "--concurrency"),
        (["--frobnicate"], "--frobnicate"),
    ],
)
def test_bad_argument_is_one_line_naming_it_with_status_2(args, flag, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--out", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err and "Traceback" not in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_main_job_writes_config_results_log_and_summary(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["--games", "50", "--size", "4", "--out", str(out), "--no-dashboard"]) == 0
    printed = capsys.readouterr().out
    assert "success %" in printed and str(out / "results.jsonl") in printed
    run = RunDir.open(out)
    assert run.config().seeds == 50 and run.config().params["size"] == [4]
    records = run.records()
    assert [r.game_id for r in records] == list(range(50))
    assert all(r.outcome == "success" and r.solved_turn == 2 and r.spec.max_turns == 8 for r in records)
    assert (out / "summary.json").exists()
    assert '"event": "run_finished"' in (out / "run.log").read_text()


def test_existing_run_dir_is_not_overwritten(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--games", "5", "--out", str(out), "--no-dashboard"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["--games", "5", "--out", str(out)])
    assert exit_info.value.code == 2 and "--resume" in capsys.readouterr().err


def test_same_seed_gives_byte_identical_results(tmp_path):
    args = ["--games", "150", "--alice", "noisy", "--bob", "one_piece", "--feedback", "both", "--seed", "9", "--no-dashboard"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b"), "--concurrency", "7"]) == 0
    a = (tmp_path / "a" / "results.jsonl").read_bytes()
    assert a == (tmp_path / "b" / "results.jsonl").read_bytes()
    assert main([*args[:-2], "10", "--no-dashboard", "--out", str(tmp_path / "c")]) == 0
    assert a != (tmp_path / "c" / "results.jsonl").read_bytes()


def _wait_for_lines(path: Path, at_least: int, proc, timeout=60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= at_least:
            return
        if proc.poll() is not None:
            pytest.fail(f"run ended before it could be interrupted: {proc.stdout.read()}")
        time.sleep(0.01)
    pytest.fail("no records appeared")


GAME_ARGS = ["--games", "1500", "--alice", "noisy", "--bob", "noisy", "--feedback", "joint", "--seed", "3", "--concurrency", "32", "--no-dashboard"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "run"
    result = run_cli(*GAME_ARGS, "--out", str(out))
    assert result.returncode == 0, result.stderr
    return (out / "results.jsonl").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_interrupted_and_resumed_run_equals_an_uninterrupted_one(how, uninterrupted, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([*RUNNER, *GAME_ARGS, "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _wait_for_lines(out / "results.jsonl", 100, proc)
    proc.send_signal(how)
    output, _ = proc.communicate(timeout=60)
    partial = (out / "results.jsonl").read_bytes()
    done = partial.count(b"\n")
    assert 100 <= done < 1500
    if how == signal.SIGINT:
        assert proc.returncode == 130
        assert "Interrupted" in output and "--resume" in output and "Traceback" not in output
        assert partial.endswith(b"\n")  # a clean stop leaves only whole records
    resumed = run_cli("--resume", str(out), "--no-dashboard")
    assert resumed.returncode == 0, resumed.stderr
    assert (out / "results.jsonl").read_bytes() == uninterrupted


def test_resume_drops_a_record_cut_short_and_never_writes_one_twice(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--games", "30", "--out", str(out), "--no-dashboard"])
    full = (out / "results.jsonl").read_bytes()
    lines = full.splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(b"".join(lines[:10]) + lines[10][:57])  # killed mid-write
    assert main(["--resume", str(out), "--no-dashboard"]) == 0
    assert (out / "results.jsonl").read_bytes() == full
    assert main(["--resume", str(out), "--no-dashboard"]) == 0  # nothing left to do
    assert (out / "results.jsonl").read_bytes() == full


def test_resume_refuses_different_game_arguments(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--games", "5", "--out", str(out), "--no-dashboard"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["--resume", str(out), "--size", "7"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "--size" in err and err.count("\n") == 1
    with pytest.raises(SystemExit):
        main(["--resume", str(tmp_path / "missing")])
    assert "not a run directory" in capsys.readouterr().err


def test_unusable_out_path_is_a_one_line_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker, blocker / "run"):
        with pytest.raises(SystemExit) as exit_info:
            main(["--games", "3", "--out", str(out)])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and "--out" in err and err.count("\n") == 1


def test_damaged_results_on_resume_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--games", "5", "--out", str(out), "--no-dashboard"])
    lines = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(lines[0] + b"{not json}\n" + lines[1])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["--resume", str(out)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "line 2 is damaged" in err and err.count("\n") == 1
    assert f"--resume {out} --repair" in err


def test_repair_moves_damaged_lines_and_foreign_games_aside_and_the_run_finishes(tmp_path, capsys):
    import io

    from rich.console import Console

    from runners.replay import main as replay_main

    out, whole = tmp_path / "run", tmp_path / "whole"
    main(["--games", "6", "--out", str(out), "--no-dashboard"])
    main(["--games", "6", "--out", str(whole), "--no-dashboard"])
    lines = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    foreign = lines[2].replace(b'{"game_id":2,', b'{"game_id":99,', 1)
    damaged = b'{"game_id": 3, "spec": "garbage"}\n'
    (out / "results.jsonl").write_bytes(lines[0] + b"{not json}\n" + lines[1] + foreign + damaged + lines[4])
    capsys.readouterr()
    with pytest.raises(SystemExit):
        replay_main([str(out), "0"], console=Console(file=io.StringIO()))
    assert "results.jsonl line 2 is damaged" in capsys.readouterr().err  # the file and the line, not a decoder's words
    assert main(["--resume", str(out), "--repair", "--no-dashboard"]) == 0
    assert "Repaired: 3 damaged lines moved to" in capsys.readouterr().out
    aside = (out / "results.damaged.jsonl").read_bytes()
    assert aside == b"{not json}\n" + foreign + damaged
    assert (out / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()
    with pytest.raises(SystemExit):
        main(["--games", "3", "--out", str(tmp_path / "new"), "--repair"])
    assert "--repair" in capsys.readouterr().err


def test_a_record_of_a_game_outside_the_plan_is_refused_on_resume(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--games", "3", "--out", str(out), "--no-dashboard"])
    line = (out / "results.jsonl").read_bytes().splitlines(keepends=True)[0]
    with (out / "results.jsonl").open("ab") as f:
        f.write(line.replace(b'{"game_id":0,', b'{"game_id":7,', 1))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["--resume", str(out)])
    assert "holds game 7, which the run's plan of 3 games does not have" in capsys.readouterr().err


def test_resume_checks_the_saved_config(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--games", "5", "--out", str(out), "--no-dashboard"])
    config = out / "config.json"
    saved = json.loads(config.read_text())
    saved["config"]["params"]["size"] = [1]
    config.write_text(json.dumps(saved))
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["--resume", str(out)])
    assert exit_info.value.code == 2 and "--size" in capsys.readouterr().err


def test_policy_names_are_saved_in_one_spelling_and_turn_limit_compares_as_used(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--games", "5", "--alice", "Share-Everything", "--out", str(out), "--no-dashboard"])
    assert RunDir.open(out).config().agents == [["share_everything", "share_everything"]]
    assert main(["--resume", str(out), "--alice", "share-everything", "--max-turns", "10", "--no-dashboard"]) == 0


def test_a_run_directory_in_use_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    main(["--games", "5", "--out", str(out), "--no-dashboard"])
    holder = RunDir.open(out).lock()
    try:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            main(["--resume", str(out)])
        assert exit_info.value.code == 2 and "in use by another process" in capsys.readouterr().err
    finally:
        holder.close()


def test_a_full_disk_stops_the_run_cleanly_and_resume_finishes_it_byte_identical(tmp_path):
    """Caused for real: the run's process may write files of 120 kB at most (as on a full disk)."""
    import resource

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (120_000, 120_000))

    out = tmp_path / "run"
    stopped = subprocess.run([*RUNNER, "--games", "400", "--no-dashboard", "--out", str(out)], cwd=ROOT,
                             capture_output=True, text=True, timeout=120, preexec_fn=small_files)
    assert stopped.returncode == 4, stopped.stderr[-2000:]
    assert "Stopped: " in stopped.stdout and "File too large" in stopped.stdout and f"--resume {out}" in stopped.stdout
    assert "Traceback" not in stopped.stdout + stopped.stderr
    results = (out / "results.jsonl").read_bytes()
    assert results.endswith(b"\n") and 0 < results.count(b"\n") < 400  # whole records only
    assert main(["--resume", str(out), "--no-dashboard"]) == 0
    whole = tmp_path / "whole"
    assert main(["--games", "400", "--no-dashboard", "--out", str(whole)]) == 0
    assert (out / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()


def test_limit_plays_the_first_games_of_the_plan_and_resume_plays_the_rest(tmp_path, capsys):
    whole, limited = tmp_path / "whole", tmp_path / "limited"
    sweep = ["--games", "9", "--no-dashboard"]
    assert main([*sweep, "--out", str(whole)]) == 0
    assert main([*sweep, "--out", str(limited), "--limit", "4"]) == 0
    out = capsys.readouterr().out
    assert "Played as far as --limit 4: 4 of 9 games recorded" in out and f"--resume {limited}" in out
    assert sorted(r.game_id for r in RunDir.open(limited).records()) == [0, 1, 2, 3]
    assert main(["--resume", str(limited), "--no-dashboard", "--limit", "100"]) == 0
    assert "9 games in" in capsys.readouterr().out  # the limit past the plan's end: the run is complete
    assert (limited / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()


def test_model_fills_every_seat_not_named_and_resume_checks_it(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["--games", "2", "--model", "noisy", "--bob", "one_piece", "--out", str(out), "--no-dashboard"]) == 0
    assert RunDir.open(out).config().agents == [["noisy", "one_piece"]]
    with pytest.raises(SystemExit):
        main(["--resume", str(out), "--model", "ignore"])
    assert "argument --model: the run being resumed has --model noisy, got ignore" in capsys.readouterr().err


@pytest.mark.parametrize("typed, saved_as", [("openai/gpt-4o", "openai:gpt-4o"), ("OpenRouter/meta-llama/llama-3.1-8b", "openrouter:meta-llama/llama-3.1-8b")])
def test_provider_slash_model_is_read_as_provider_colon_model(typed, saved_as):
    from engine.policies.factory import PolicyFactory

    assert PolicyFactory().canonical(typed) == saved_as
    assert PolicyFactory().canonical("nobody/knows") == "nobody/knows"  # not an endpoint: refused later as it was typed


def test_a_record_that_contradicts_the_plan_is_refused_on_resume_and_repair_moves_it_aside(tmp_path, capsys):
    whole, edited = tmp_path / "whole", tmp_path / "edited"
    assert main(["--games", "6", "--no-dashboard", "--out", str(whole)]) == 0
    assert main(["--games", "6", "--no-dashboard", "--out", str(edited), "--limit", "4"]) == 0
    lines = (edited / "results.jsonl").read_text().splitlines()
    record = json.loads(lines[2])
    record["spec"]["seed"] += 1  # the game as another seed would have been, kept as game 2
    lines[2] = json.dumps(record, separators=(",", ":"))
    (edited / "results.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["--resume", str(edited), "--no-dashboard"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"results.jsonl line 3 holds game {record['game_id']} with another seed than the run's plan gives it" in err
    assert f"--resume {edited} --repair" in err
    assert main(["--resume", str(edited), "--repair", "--no-dashboard"]) == 0
    assert "Repaired: 1 damaged line moved to" in capsys.readouterr().out
    assert (edited / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()
    assert json.loads((edited / "results.damaged.jsonl").read_text())["spec"]["seed"] == record["spec"]["seed"]
