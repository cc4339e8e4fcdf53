"""StepR is measured against the paper's planner, which places a block only where its bin can be
known (and guesses only where no information can reach a player): a guess that lands beats it, in
any mode, and the report says so under its scores."""

from __future__ import annotations

from engine import RunDir
from runners.concurrent import main as run_main
from runners.report.cli import main as report_main


def test_a_guess_that_lands_beats_the_planner_and_the_report_says_so(tmp_path):
    run = tmp_path / "run"
    flags = ["--game", "einstein", "--actions", "share", "--blocks", "4", "--agent", "player1=optimal",
             "--agent", "player2=optimal", "--games", "4", "--out", str(run), "--no-dashboard"]
    assert run_main(flags) == 0
    records = {r.game_id: r for r in RunDir.open(run).records()}
    lucky = records[3]  # solved in 5 steps where the planner's plan takes 6
    assert lucky.scores["success"] and lucky.metrics["optimal_steps"] == 6 and lucky.scores["steps"] == 5
    assert lucky.scores["step_ratio"] < 1
    assert report_main([str(run), "--no-plots"]) == 0
    tables = (run / "report" / "tables.md").read_text()
    assert "optimal steps of the paper's planner" in tables and "StepR can be below 1" in tables
