"""The contract's conformance check with many parameter sets, and whole games through the engine."""

import json

import pytest

from engine import Grid
from puzzles.einstein.game import GAME
from puzzles.einstein.params import EinsteinParams
from puzzles.testing import check_game
from tests.e2e.test_model_runs import server_process
from tests.engine.backends.helpers import fake_server, play, settings_for, without_models
from runners.concurrent import main as run_main


@pytest.mark.parametrize("params", [
    EinsteinParams(),
    EinsteinParams(actions="share"), EinsteinParams(actions="ask"), EinsteinParams(actions="none"),
    EinsteinParams(actions="share_ask/ask"), EinsteinParams(actions="share/none"), EinsteinParams(actions="ask/share"),
    EinsteinParams(blocks=5), EinsteinParams(blocks=6, actions="none"), EinsteinParams(blocks=6, verifier="reasoning"),
    EinsteinParams(prompt="gpt"), EinsteinParams(cot=False, notices=True), EinsteinParams(random_guess=False, actions="ask"),
])
def test_the_game_passes_the_conformance_check(params):
    check_game(GAME, params, seeds=range(3))


def _grid(agents, seeds=8, **params):
    return Grid(game="einstein", seeds=seeds, agents=[agents], params={k: [v] for k, v in params.items()})


async def test_games_through_the_engine_and_through_the_local_model_server_are_the_same():
    async with fake_server(latency=0.0) as server:
        scripted, _ = await play(_grid(["optimal", "seek_only"], blocks=5), settings_for(server))
        models, _ = await play(_grid(["openai:optimal", "anthropic:seek_only"], blocks=5), settings_for(server))
    assert [r.outcome for r in scripted] == ["success"] * 8
    for record in scripted:
        assert record.scores["success"] is True and record.scores["partial"] == 1.0 and "step_ratio" in record.scores
        assert record.metrics["game_id"].startswith("5_") and record.metrics["optimal_steps"] > 0
        steps = record.scores["steps"]
        assert record.solved_turn == (steps + 1) // 2 and len(record.turn_log) == steps  # one step per turn
    assert [without_models(r) for r in models] == [without_models(r) for r in scripted]
    assert models[0].usage["player1"].calls == (models[0].scores["steps"] + 1) // 2


async def test_the_turn_limit_is_thirty_steps_and_a_failure_counts_them_all():
    records, _ = await play(_grid(["random_mover", "random_mover"], seeds=6, blocks=6), settings_for(_NoServer()))
    for record in records:
        assert record.outcome == "failure" and record.turns == 15 and len(record.turn_log) == 30
        assert record.scores["steps"] == 30 and record.scores["step_ratio_all"] == 30 / record.metrics["optimal_steps"]
        assert "step_ratio" not in record.scores


class _NoServer:
    url = "http://127.0.0.1:9"


def test_a_model_run_from_the_command_line_against_the_local_server(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-einstein-0000")
    with server_process() as url:
        code = run_main([
            "--game", "einstein", "--games", "4", "--blocks", "5", "--actions", "share_ask/ask",
            "--player1", "openai:optimal", "--player2", "openai:optimal", "--openai-url", url + "/v1",
            "--out", str(tmp_path / "run"), "--no-dashboard",
        ])
    assert code == 0
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(records) == 4 and {r["outcome"] for r in records} == {"success"}
    assert all(r["spec"]["params"]["actions"] == "share_ask/ask" and r["metrics"]["game_id"].startswith("5_") for r in records)
