"""The dashboard shows every score of the game as it goes, with the same numbers as the records."""

import io

import anyio
from rich.console import Console

from engine import PolicyFactory, RunProgress, run_games
from runners.dashboard import render_dashboard, score_cell
from tests.helpers import grid, score_summaries


def test_live_score_tallies_equal_the_summaries_of_the_records_and_are_shown():
    plan = grid(40, 2, alice="noisy", bob="noisy", feedback="own")
    progress = RunProgress(total=40)
    progress.know_conditions(plan.condition_specs())
    records = []
    anyio.run(lambda: run_games(plan.specs_for(range(40)), factory=PolicyFactory(), concurrency=8,
                                on_record=records.append, progress=progress))
    expected = score_summaries(records)
    assert list(progress.scores) == list(expected) == [
        "actions_per_position.alice", "actions_per_position.bob", "writes_per_position.alice", "writes_per_position.bob",
    ]
    for key, summary in expected.items():
        live = progress.scores[key].summary()
        assert (live.kind, live.n) == (summary.kind, summary.n)
        assert abs(live.value - summary.value) < 1e-9 and abs(live.low - summary.low) < 1e-9
    out = io.StringIO()
    Console(file=out, width=200).print(render_dashboard(progress, 2.0))
    text = out.getvalue()
    assert f"actions/pos alice {score_cell(expected['actions_per_position.alice'])}" in text
    assert f"writes/pos bob {score_cell(expected['writes_per_position.bob'])}" in text


def test_boolean_scores_tally_as_rates_with_wilson_intervals():
    from engine.analysis.stats import ScoreTally, wilson_interval

    tally = ScoreTally()
    for value in [True] * 7 + [False] * 3:
        tally.add(value)
    summary = tally.summary()
    assert (summary.kind, summary.n, summary.value) == ("rate", 10, 0.7)
    assert (summary.low, summary.high) == wilson_interval(7, 10)


def test_a_mean_whose_bounds_are_negative_reads_as_two_numbers():
    from engine.analysis.stats import ScoreTally

    tally = ScoreTally()
    for value in (-5.0, -1.0, -3.0):
        tally.add(value)
    cell = score_cell(tally.summary())
    assert cell.startswith("-3.00 [") and "--" not in cell and cell.count(", ") == 1
