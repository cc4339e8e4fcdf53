"""Model runs from the command line, against the local server in its own process: API keys never
reach a file, games lost to the infrastructure are played again by --resume, bad input is refused."""

from __future__ import annotations

import gzip
import json
import shlex
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from runners.concurrent import main as run_main
from tests.helpers import transcript_lines

ROOT = Path(__file__).resolve().parents[2]
CANARY = "sk-canary-7f3a9c2e5b1d4860"


@contextmanager
def server_process(*flags: str):
    """``python -m runners.fake_llm`` on a free port; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "runners.fake_llm", *(["--port", "0"] if "--port" not in flags else []), *flags],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("fake model server on "), process.stderr.read()
        yield line.split()[4]
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def server_process_on(port: str, *flags: str):
    """``server_process`` on a given port (one a server just left: tried again until it is free)."""
    for _ in range(50):
        started = server_process("--port", port, *flags)
        try:
            url = started.__enter__()
        except AssertionError:  # the port is not free yet
            time.sleep(0.2)
            continue
        try:
            yield url
        finally:
            started.__exit__(None, None, None)
        return
    raise AssertionError(f"port {port} stayed busy")


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def _files(run: Path):
    return [p for p in run.rglob("*") if p.is_file()]


def test_the_api_key_never_reaches_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    with server_process() as url:  # accepts any key: the games run
        ok = tmp_path / "ok"
        code = run_main([
            "--games", "6", "--alice", "openai:share_everything", "--bob", "anthropic:one_piece",
            "--openai-url", url + "/v1", "--anthropic-url", url, "--out", str(ok),
            "--transcripts", "--log-level", "debug", "--no-dashboard",
        ])
    assert code == 0
    assert {r["outcome"] for r in _records(ok)} == {"success"}
    with server_process("--api-key", "sk-another-key-000000") as url:  # echoes the masked key in its 401
        refused = tmp_path / "refused"
        code = run_main([
            "--games", "2", "--alice", "openai:share_everything", "--bob", "openai:share_everything",
            "--openai-url", url + "/v1", "--out", str(refused), "--transcripts", "--log-level", "debug",
            "--no-dashboard",
        ])
    assert code == 3  # every game lost to the infrastructure
    assert {r["error"]["kind"] for r in _records(refused)} == {"infra_error"}
    assert "HTTP 401" in _records(refused)[0]["error"]["message"]
    printed = capsys.readouterr()
    assert "2 games in" in printed.out and "0 scored, 2 lost to the infrastructure, 0 ended in other errors" in printed.out
    assert "n/a" in printed.out and f"--resume {refused}" in printed.out  # no rate where nothing was scored
    files = _files(ok) + _files(refused)
    assert {p.name for p in files} >= {"results.jsonl", "run.log", "transcripts.jsonl.gz", "usage.json", "summary.json"}
    for fragment in (CANARY, CANARY[:8], CANARY[-8:]):
        for path in files:
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            assert fragment not in data.decode(errors="replace"), f"{fragment!r} in {path.name}"
        assert fragment not in printed.out + printed.err


def test_resume_plays_again_the_games_lost_to_the_infrastructure(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-resume-0000")
    run = tmp_path / "run"
    flags = ["--alice", "openai:share_everything", "--bob", "openai:one_piece", "--no-dashboard"]
    with server_process("--fault", "500=0.5", "--seed", "1") as url:
        code = run_main(["--games", "10", *flags, "--openai-url", url + "/v1", "--out", str(run), "--max-attempts", "1"])
    assert code == 3  # finished, with games lost: the exit status says so
    first = _records(run)
    lost = {r["game_id"] for r in first if r["outcome"] == "error"}
    assert lost and all(r["error"]["kind"] == "infra_error" for r in first if r["game_id"] in lost)
    kept = {r["game_id"]: r for r in first if r["game_id"] not in lost}
    port = url.rsplit(":", 1)[1].split("/")[0]
    with server_process_on(port) as url:  # the server mended, where it was: the run keeps its URL
        code = run_main([*flags, "--resume", str(run)])
    assert code == 0
    final = _records(run)
    assert [r["game_id"] for r in final] == list(range(10))
    assert all(r["outcome"] == "success" for r in final)
    for game_id, record in kept.items():  # games already played are not played again
        assert final[game_id] == record


def test_a_missing_key_is_refused_before_any_game(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--games", "2", "--alice", "openai:gpt-4o", "--out", str(tmp_path / "r")])
    assert exit_info.value.code == 2
    assert "--alice: openai:gpt-4o needs the environment variable OPENAI_API_KEY" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("flags, message", [
    (["--alice", "vllm:Qwen/Qwen3-8B"], "give the server's address with --vllm-url"),
    (["--alice", "mistral:large"], "unknown model provider"),
    (["--rpm", "openai=fast"], "argument --rpm"),
    (["--rpm", "cohere=100"], "unknown provider 'cohere'"),
    (["--temperature", "3"], "argument --temperature"),
    (["--price", "gpt-4o=1,2"], "argument --price"),
])
def test_bad_model_flags_get_one_line_and_status_2(tmp_path, capsys, flags, message, monkeypatch):
    monkeypatch.delenv("VLLM_BASE_URL", raising=False)
    monkeypatch.delenv("VLLM_EXECUTABLE", raising=False)
    monkeypatch.setenv("ASYMGAMES_HOME", str(tmp_path / "home"))  # no vLLM that setup-vllm installed
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--games", "1", "--out", str(tmp_path / "r"), *flags])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_usage_totals_count_every_process_of_a_resumed_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-usage-0000")
    run = tmp_path / "run"
    with server_process() as url:
        flags = ["--alice", "openai:share_everything", "--bob", "openai:one_piece", "--openai-url", url + "/v1", "--no-dashboard"]
        assert run_main(["--games", "6", *flags, "--temperature", "0.5", "--out", str(run)]) == 0
        first = json.loads((run / "usage.json").read_text())
        lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
        (run / "results.jsonl").write_text("".join(lines[:4]))  # two games to play again
        assert run_main([*flags, "--resume", str(run)]) == 0
    usage = json.loads((run / "usage.json").read_text())
    name = "openai:share_everything"
    calls = [p["models"][name]["calls"] for p in usage["processes"]]
    assert len(calls) == 2 and calls[0] == first["models"][name]["calls"] and 0 < calls[1] < calls[0]
    assert usage["models"][name]["calls"] == sum(calls)
    assert usage["models"][name]["prompt_tokens"] == sum(p["models"][name]["prompt_tokens"] for p in usage["processes"])
    assert [p["options"]["temperature"] for p in usage["processes"]] == [0.5, 0.5]  # the run's saved sampling


@pytest.mark.slow
def test_a_run_whose_first_games_all_fail_alike_stops_early_and_resumes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-0000")
    run = tmp_path / "run"
    flags = ["--games", "200", "--alice", "openai:share_everything", "--bob", "openai:share_everything",
             "--concurrency", "4", "--no-dashboard"]
    with server_process("--api-key", "sk-right-key-0000") as url:
        code = run_main([*flags, "--openai-url", url + "/v1", "--out", str(run)])
        printed = capsys.readouterr().out
        assert code == 3
        assert "Stopped early: the first 20 games were all lost the same way" in printed and "HTTP 401" in printed
        assert f"--resume {run}" in printed
        lost = _records(run)
        assert 20 <= len(lost) < 200 and {r["error"]["kind"] for r in lost} == {"infra_error"}
        monkeypatch.setenv("OPENAI_API_KEY", "sk-right-key-0000")  # fixed: the resumed run plays everything
        code = run_main([*flags, "--openai-url", url + "/v1", "--resume", str(run)])
    assert code == 0
    final = {r["game_id"]: r for r in _records(run)}
    assert len(final) == 200 and all(r["outcome"] == "success" for r in final.values())


@pytest.mark.slow
def test_a_provider_that_refuses_every_request_stops_the_run_early_quoting_its_error(tmp_path, monkeypatch, capsys):
    """A 400 to every call is not the model's failure, nor retried: the run stops after its first 20
    games with the provider's error on the closing line (status 3), not 200 games of errors."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-refused-0000")
    run = tmp_path / "run"
    with server_process("--fault", "400=1") as url:
        code = run_main(["--games", "200", "--model", "openai:share_everything", "--openai-url", url + "/v1",
                         "--concurrency", "4", "--no-dashboard", "--out", str(run)])
    printed = capsys.readouterr().out.strip().splitlines()
    assert code == 3
    assert printed[-1].startswith("Stopped early: the first 20 games all ended in the same error: RequestError")
    assert "HTTP 400" in printed[-1] and "Injected 400" in printed[-1] and f"--resume {run}" in printed[-1]
    found = _records(run)
    assert 20 <= len(found) < 200 and {r["error"]["kind"] for r in found} == {"request_error"}


def test_a_resume_plays_with_the_saved_sampling_and_refuses_a_conflicting_flag(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-sampling-0000")
    run = tmp_path / "run"
    agents = ["--alice", "openai:share_everything", "--bob", "openai:share_everything", "--no-dashboard"]
    sampling = ["--temperature", "0.9", "--top-p", "0.8", "--max-tokens", "300", "--structured", "--model-seed", "7"]
    with server_process() as url:
        assert run_main(["--games", "10", *agents, *sampling, "--openai-url", url + "/v1", "--out", str(run)]) == 0
        lines = (run / "results.jsonl").read_text().splitlines(keepends=True)
        (run / "results.jsonl").write_text("".join(lines[:4]))  # six games to play again
        capsys.readouterr()
        for flag, value in (("--temperature", "0"), ("--max-tokens", "4096"), ("--model-seed", "8"), ("--top-p", "1")):
            with pytest.raises(SystemExit) as exit_info:
                run_main(["--resume", str(run), flag, value])
            err = capsys.readouterr().err
            assert exit_info.value.code == 2 and err.count("\n") == 1 and f"argument {flag}: the run being resumed" in err
        # Nor do pacing and connection flags: a run keeps how its calls are sent and counted.
        for flag, value in (("--rpm", "6000"), ("--openai-url", "http://127.0.0.1:9/v1"), ("--max-attempts", "2"),
                            ("--client", "openai=sdk"), ("--price", "share_everything=1,1,1"), ("--cache", "on")):
            with pytest.raises(SystemExit) as exit_info:
                run_main(["--resume", str(run), flag, value])
            err = capsys.readouterr().err
            assert exit_info.value.code == 2 and err.count("\n") == 1 and "the run being resumed was saved with other" in err, (flag, err)
        # A flag given with its saved value is accepted; the printed command alone continues the run.
        assert run_main(["--resume", str(run), "--temperature", "0.9", "--openai-url", url + "/v1"]) == 0
    records = _records(run)
    want = {"temperature": 0.9, "top_p": 0.8, "max_tokens": 300, "seed": 7, "structured": True}
    assert len(records) == 10 and all(r["sampling"] == want for r in records)
    saved = json.loads((run / "models.json").read_text())
    assert saved["options"]["temperature"] == 0.9 and "openai" not in saved["rpm"] and saved["urls"]["openai"] == url + "/v1"
    assert "sk-test" not in (run / "models.json").read_text()


def test_the_printed_resume_command_is_complete_and_on_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-0000")
    run = tmp_path / "a run"
    flags = ["--games", "60", "--alice", "openai:share_everything", "--bob", "openai:share_everything",
             "--concurrency", "4", "--transcripts", "--no-dashboard", "--temperature", "0.3"]
    with server_process("--api-key", "sk-right-key-0000") as url:
        assert run_main([*flags, "--openai-url", url + "/v1", "--out", str(run)]) == 3
        lines = [line for line in capsys.readouterr().out.splitlines() if "continue with: " in line]
        assert len(lines) == 1
        command = lines[0].split("continue with: ", 1)[1]
        words = shlex.split(command)
        assert words[:3] == ["python", "-m", "runners.concurrent"]
        assert words[3:] == ["--resume", str(run), "--transcripts", "--concurrency", "4", "--no-dashboard"]
        monkeypatch.setenv("OPENAI_API_KEY", "sk-right-key-0000")
        assert run_main(words[3:]) == 0
    final = _records(run)
    assert len(final) == 60 and all(r["outcome"] == "success" and r["sampling"]["temperature"] == 0.3 for r in final)
    assert len(transcript_lines(run)) >= 60


def test_a_run_that_fails_in_different_ways_is_not_stopped_early():
    from engine.session.giveup import SameFailure

    class Record:
        def __init__(self, message):
            self.outcome, self.error = "error", type("E", (), {"kind": "infra_error", "message": message})()

    stops = []
    watcher = SameFailure(stops.append, limit=3)
    for message in ("m after 1 attempt: HTTP 401", "m after 3 attempts: HTTP 401", "m after 8 attempts: timed out"):
        watcher.game_finished(None, Record(message))
    assert stops == []
    watcher = SameFailure(stops.append, limit=3)
    for attempts in (1, 2, 3, 4):
        watcher.game_finished(None, Record(f"m after {attempts} attempts: HTTP 404"))
    assert stops == ["the first 3 games were all lost the same way: m: HTTP 404"]


@pytest.mark.parametrize("policy, flag", [("vllm:no-such-model", "--vllm-url"), ("openai:no-such-model", "--openai-url")])
def test_a_model_the_server_does_not_know_is_a_name_to_fix_before_resume(policy, flag, tmp_path, monkeypatch, capsys):
    """The server's 404 is not retried, and the games are lost to the infrastructure (not scored as
    the model's failure): fix the name, and --resume plays them again."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unknown-0000")
    with server_process("--model", "share_everything") as url:  # serves that model only: others get a 404
        run = tmp_path / "run"
        code = run_main(["--games", "2", "--model", policy, flag, url + "/v1", "--out", str(run), "--no-dashboard"])
    assert code == 3
    found = _records(run)
    assert [r["error"]["kind"] for r in found] == ["infra_error"] * 2
    assert all("after 1 attempt: HTTP 404" in r["error"]["message"] and "no-such-model" in r["error"]["message"] for r in found)
    assert f"--resume {run}" in capsys.readouterr().out
