"""Spending from the command line: a forecast that makes no call and writes nothing, a cost cap that
stops starting games and a resume that finishes the run, and a cap refused for a model with no price."""

from __future__ import annotations

import json
import re

import pytest

from runners.concurrent import main as run_main
from tests.e2e.test_model_runs import _records, server_process

AGENTS = ["--alice", "openai:share_everything", "--bob", "openai:one_piece", "--no-dashboard"]
PRICES = ["--price", "share_everything=10,10,10", "--price", "one_piece=10,10,10"]  # $ per million: about a cent a call


def test_a_dry_run_prints_the_forecast_and_neither_calls_nor_writes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-forecast-0000")
    with server_process() as url:
        out = tmp_path / "run"
        code = None
        with pytest.raises(SystemExit) as exit_info:
            run_main(["--games", "500", *AGENTS, *PRICES, "--openai-url", url + "/v1", "--rpm", "600", "--out", str(out), "--dry-run"])
        code = exit_info.value.code
        import urllib.request

        served = json.loads(urllib.request.urlopen(url + "/fake/stats").read())
    printed = capsys.readouterr().out
    assert code == 0 and not out.exists() and served["requests"] == 0
    assert "forecast: 500 games to play" in printed and "openai:share_everything" in printed
    assert "Time at the limits:" in printed and "Expected:" in printed


def test_a_cost_cap_stops_starting_games_and_a_resume_with_a_higher_cap_finishes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cap-0000")
    run = tmp_path / "run"
    with server_process() as url:
        flags = [*AGENTS, *PRICES, "--openai-url", url + "/v1"]
        code = run_main(["--games", "40", *flags, "--out", str(run), "--max-cost", "0.5", "--concurrency", "8"])
        printed = capsys.readouterr().out
        assert code == 5, printed
        assert "Stopped starting games at the cost cap (--max-cost 0.5)" in printed and f"--resume {run}" in printed
        first = _records(run)
        spent = sum(u["cost_usd"] for r in first for u in r["usage"].values())
        assert 0 < len(first) < 40 and spent <= 0.5
        usage = json.loads((run / "usage.json").read_text())
        assert sum(m["cost_usd"] for m in usage["models"].values()) <= 0.5
        assert run_main([*flags, "--resume", str(run), "--max-cost", "100"]) == 0
    final = _records(run)
    assert sorted(r["game_id"] for r in final) == list(range(40))
    assert all(r["outcome"] == "success" for r in final)
    assert "spent $" in capsys.readouterr().out


def test_a_cost_cap_needs_a_price_for_every_model(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cap-0000")
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--games", "2", *AGENTS, "--openai-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "r"), "--max-cost", "5"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "argument --max-cost: openai:share_everything has no price" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("cap", [1, pytest.param(5, marks=pytest.mark.slow)])
def test_a_cost_cap_stops_within_one_games_cost_of_it_and_says_spent_and_committed_apart(cap, tmp_path, monkeypatch, capsys):
    """Games of the local server at its prices: the run stops starting games when the next would pass
    the cap, however far the first estimate was from the real cost."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cap-0000")
    run = tmp_path / "run"
    with server_process() as url:
        code = run_main(["--games", "2000", *AGENTS, *PRICES, "--openai-url", url + "/v1", "--out", str(run),
                         "--max-cost", str(cap), "--concurrency", "16"])
    printed = capsys.readouterr().out
    assert code == 5, printed
    records = _records(run)
    costs = [sum(u["cost_usd"] for u in r["usage"].values()) for r in records]
    spent, dearest = sum(costs), max(costs)
    assert cap - dearest <= spent <= cap + dearest, (spent, dearest, len(records))
    assert f"Stopped starting games at the cost cap (--max-cost {cap}): ${spent:.2f} spent, $0.00 more committed" in printed


def test_the_forecast_of_a_resume_prices_the_games_replay_errors_plays_again(tmp_path, monkeypatch, capsys):
    """Games a model played that ended in an error not a player's (here the partner's policy of one's
    own raised) are played again by ``--replay-errors``: the resume's forecast counts them and their cost."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-forecast-0000")
    run = tmp_path / "run"
    crashing = "bob=tests.engine.test_custom_policies:Crashing"
    with server_process() as url:
        code = run_main(["--games", "100", "--alice", "openai:share_everything", "--agent", crashing, "--no-dashboard",
                         "--price", "share_everything=10,10,10", "--openai-url", url + "/v1", "--concurrency", "4", "--out", str(run)])
    assert code == 3
    failed = len(_records(run))
    assert 20 <= failed < 100
    capsys.readouterr()
    costs = {}
    for flags, games in (([], 100 - failed), (["--replay-errors"], 100)):
        with pytest.raises(SystemExit) as exit_info:
            run_main(["--resume", str(run), *flags, "--dry-run", "--no-dashboard"])
        printed = capsys.readouterr().out
        assert exit_info.value.code == 0 and f"forecast: {games} games to play" in printed, printed
        costs[games] = float(re.search(r"Expected: [\d,]+ calls, [\d,]+ tokens, \$([\d.]+)", printed).group(1))
    assert costs[100] > costs[100 - failed] > 0
