"""Nothing a model writes can stop a run: replies with half of a surrogate pair, control characters,
thousands of braces or an endless length, sent by the local server through the real SDKs, are
stored, transcribed, reported and replayed; the games go on."""

from __future__ import annotations

import io
import json

from rich.console import Console

from runners.concurrent import main as run_main
from runners.replay import main as replay_main
from runners.report import main as report_main
from tests.e2e.test_model_runs import server_process
from tests.helpers import transcript_lines


def _run(tmp_path, name, *server_flags, games="6"):
    with server_process(*server_flags) as url:
        out = tmp_path / name
        code = run_main([
            "--games", games, "--alice", "openai:share_everything", "--bob", "anthropic:share_everything",
            "--openai-url", url + "/v1", "--anthropic-url", url, "--out", str(out), "--transcripts", "--no-dashboard",
        ])
    return code, out


def _records(run):
    return [json.loads(line) for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def test_broken_unicode_and_control_characters_are_stored_and_the_games_go_on(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    code, run = _run(tmp_path, "run", "--bad-reply", "surrogate=1", "--bad-reply", "control=1")
    assert code == 0
    records = _records(run)
    assert len(records) == 6 and {r["outcome"] for r in records} == {"success"}
    turn = transcript_lines(run)[0]["turns"][0]
    assert turn["reply"].startswith("\x00\x07\x1b[2J\x7f \ufffd ")  # control characters kept; the raw half pair replaced
    assert turn["message"].startswith("\x00\x1b\ufffd")  # the half pair escaped in the reply's JSON, replaced
    capsys.readouterr()
    assert report_main([str(run), "--no-plots"]) == 0
    out = io.StringIO()
    assert replay_main([str(run), "0"], console=Console(file=out, width=200)) == 0
    assert "\ufffd" in out.getvalue()


def test_brace_floods_are_read_in_time_and_overlong_replies_are_format_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    code, run = _run(tmp_path, "braces", "--bad-reply", "braces=1", games="4")
    assert code == 0 and {r["outcome"] for r in _records(run)} == {"success"}
    code, run = _run(tmp_path, "huge", "--bad-reply", "huge=1", games="2")
    assert code == 0
    for record in _records(run):
        assert record["outcome"] == "failure" and record["error"] is None
        errors = [t["format_error"] for t in record["turn_log"]]
        assert all(e is not None and "characters long, over the limit of 100000" in e for e in errors)
        assert all(t["reply_chars"] > 100_000 for t in record["turn_log"])
