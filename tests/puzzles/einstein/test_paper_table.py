"""The Einstein report's Table 1 in the paper's layout (``puzzles.einstein.paper_table``): the
numbers of blocks pooled into one row per condition, SR, Sub.R and Corr.R in %, StepR over solved
games, each "figure ± standard error", checked against the paper's own figures and an independent
computation; and it reaches the report's ``--analyses`` tables from a sweep over N."""

from __future__ import annotations

import math
import statistics

from puzzles import PlayedGame
from puzzles.einstein.analyses import EinsteinAnalyses
from puzzles.einstein.paper_table import PaperTable1, pooled_label
from runners.report.cli import main as report_main
from runners.sweep import main as sweep_main


def game(condition: str, blocks: int, solved: bool, partial: float, ratio: float | None = None, corrected: float | None = None) -> PlayedGame:
    scores: dict = {"success": solved, "partial": partial}
    if ratio is not None:
        scores["step_ratio"] = ratio
    if corrected is not None:
        scores["corrected_rate"] = corrected
    return PlayedGame(condition=condition, agents={}, params={"game": "einstein", "blocks": blocks}, seed=blocks,
                      outcome="success" if solved else "failure", scores=scores, metrics={}, turns=())


def test_the_papers_standard_error_of_a_success_rate():
    """The paper: SR 51.00 ± 2.89 over its 300 games (153 solved), 89.33 ± 1.78 (268)."""
    for solved, printed in ((153, "51.00 ± 2.89"), (268, "89.33 ± 1.78")):
        table = PaperTable1()
        for i in range(300):
            table.add(game(f"N={4 + i % 3}, actions=share_ask", 4 + i % 3, i < solved, 1.0 if i < solved else 0.5, 1.5 if i < solved else None))
        (out,) = table.tables()
        (row,) = out.rows
        assert row[:4] == ["actions=share_ask", "4, 5, 6", 300, printed]


def test_each_figure_against_an_independent_computation():
    partial = [1.0, 0.75, 0.5, 1.0, 0.25, 1.0, 0.8]
    ratio = {0: 1.2, 3: 1.6, 5: 2.5}
    corrected = [0.1, 0.0, 0.3, 0.2, 0.0, 0.1, 0.05]
    table = PaperTable1()
    for i, p in enumerate(partial):
        table.add(game(f"N={4 + i % 3}, verifier=reasoning", 4 + i % 3, i in ratio, p, ratio.get(i), corrected[i]))
    (row,) = table.tables()[0].rows

    def shown(values: list[float], scale: float) -> str:
        return f"{scale * statistics.fmean(values):.2f} ± {scale * statistics.stdev(values) / math.sqrt(len(values)):.2f}"

    rate = 3 / 7
    assert row[0] == "verifier=reasoning" and row[2] == 7
    assert row[3] == f"{100 * rate:.2f} ± {100 * math.sqrt(rate * (1 - rate) / 7):.2f}"
    assert row[4] == shown(partial, 100) and row[5] == shown(list(ratio.values()), 1) and row[6] == shown(corrected, 100)


def test_one_row_per_condition_without_its_number_of_blocks():
    assert pooled_label("N=5, actions=share, agents=optimal") == "actions=share, agents=optimal"
    assert pooled_label("N=5") == "all"
    table = PaperTable1()
    for blocks in (4, 5, 6):
        for actions in ("share", "ask"):
            table.add(game(f"N={blocks}, actions={actions}", blocks, True, 1.0, 1.0))
    rows = table.tables()[0].rows
    assert [(r[0], r[1], r[2], r[5]) for r in rows] == [("actions=ask", "4, 5, 6", 3, "1.00 ± 0.00"), ("actions=share", "4, 5, 6", 3, "1.00 ± 0.00")]


def test_the_report_prints_it_for_a_sweep_over_the_numbers_of_blocks(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text('name = "t"\ngame = "einstein"\nseeds = 3\nagents = [["optimal", "optimal"]]\nblocks = [4, 5, 6]\n')
    run = tmp_path / "run"
    assert sweep_main([str(grid), "--out", str(run), "--no-dashboard"]) == 0
    assert report_main([str(run), "--analyses", "--no-plots"]) == 0
    tables = (run / "report" / "tables.md").read_text()
    assert "Table 1 as the paper prints it" in tables
    assert "| all | 4, 5, 6 | 9 | 100.00 ± 0.00 | 100.00 ± 0.00 |" in tables
    assert {type(p).__name__ for p in EinsteinAnalyses().parts} == {"EinsteinActionUse", "PaperTable1"}
