"""A run with the response cache on, played again from the command line against the local server in
its own process: the second run and a resume make no call, cost nothing, and record the same games."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from runners.concurrent import main as run_main

from tests.e2e.test_model_runs import server_process
from tests.helpers import transcript_lines


def _requests(url: str) -> int:
    with urllib.request.urlopen(url + "/fake/stats") as response:
        return json.loads(response.read())["requests"]


def _games(run: Path, name: str = "results.jsonl") -> list[dict]:
    """The run's lines by game id, less what only the model calls give (usage and its times)."""
    games = [json.loads(line) for line in (run / name).read_text().splitlines()] if name == "results.jsonl" else transcript_lines(run)
    for game in games:
        game.pop("usage", None)
        for turn in game["turn_log"] if name == "results.jsonl" else game["turns"]:
            turn.pop("usage", None)
            turn.pop("latency", None)
    return sorted(games, key=lambda g: g["game_id"])


def _usage(run: Path) -> list[dict]:
    return [u for line in (run / "results.jsonl").read_text().splitlines() for u in json.loads(line)["usage"].values()]


def test_a_cached_run_played_again_makes_no_call_and_records_the_same_games(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cache-0000")
    first, again = tmp_path / "first", tmp_path / "again"
    flags = ["--games", "6", "--alice", "openai:share_everything", "--bob", "openai:one_piece", "--no-dashboard",
             "--price", "share_everything=1,0.5,2", "--price", "one_piece=1,0.5,2", "--cache", "on",
             "--cache-dir", str(tmp_path / "cache")]
    with server_process("--latency", "0") as url:
        assert run_main([*flags, "--openai-url", url + "/v1", "--out", str(first)]) == 0
        made = _requests(url)
        assert made > 0 and all(u["cost_usd"] > 0 and "cache_hits" not in u for u in _usage(first))
        assert run_main([*flags, "--openai-url", url + "/v1", "--out", str(again)]) == 0
        assert _requests(url) == made  # not one call reached the server
        games, transcripts = _games(first), _games(first, "transcripts")
        lines = (first / "results.jsonl").read_text().splitlines(keepends=True)
        (first / "results.jsonl").write_text("".join(lines[:2]))  # four games to play again
        assert run_main(["--resume", str(first)]) == 0  # the cache is saved with the run
        assert _requests(url) == made
    assert len(games) == 6 and _games(again) == games and _games(first) == games
    assert _games(again, "transcripts") == transcripts
    for usage in _usage(again):
        assert usage["cache_hits"] == usage["calls"] > 0 and usage["cost_usd"] == 0 and "prompt_tokens" not in usage
    totals = json.loads((again / "usage.json").read_text())["models"]
    assert all(m["calls"] == 0 and m["cache_hits"] > 0 and m["cost_usd"] == 0 for m in totals.values())
    resumed = json.loads((first / "usage.json").read_text())["processes"]
    assert [sum(m["cache_hits"] for m in p["models"].values()) > 0 for p in resumed] == [False, True]
