"""The flat table of a run's games: ``games.csv`` at the end of a run, ``games_df`` as a frame."""

from __future__ import annotations

import csv
import sys

import msgspec
import pytest

from engine import RunDir
from engine.analysis import GAMES_FILE, game_row, games_df
from engine.records.record import ErrorInfo, UsageTotals
from runners.sweep import main as sweep_main


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Two conditions of AsymPuzl (feedback none and joint), 6 games each."""
    grid = tmp_path_factory.mktemp("grid") / "grid.toml"
    grid.write_text('seeds = 6\nfeedback = ["none", "joint"]\nagents = [["share_everything", "one_piece"]]\n')
    out = tmp_path_factory.mktemp("runs") / "run"
    assert sweep_main([str(grid), "--out", str(out), "--no-dashboard"]) == 0
    return out


def test_a_run_ends_with_one_row_per_game_holding_its_fields_and_scores(run):
    with open(run / GAMES_FILE, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    records = RunDir(run).records()
    assert len(rows) == len(records) == 12
    assert [int(r["game_id"]) for r in rows] == sorted(r.game_id for r in records)
    by_id = {r.game_id: r for r in records}
    for row in rows:
        record = by_id[int(row["game_id"])]
        assert row["seed"] == str(record.spec.seed) and row["outcome"] == record.outcome
        assert row["condition"] == record.spec.condition()
        for field, value in record.spec.condition_fields().items():
            assert row[field] == value
        for key, value in record.scores.items():
            assert row[f"score_{key}"] == str(value)
        assert row["turns"] == str(record.turns) and row["error"] == ""
    assert {r["feedback"] for r in rows} == {"none", "joint"}
    assert "calls" not in rows[0]  # no model played


def test_a_row_sums_the_agents_errors_and_model_calls_and_keeps_an_unknown_price_unknown(run):
    record = RunDir(run).records()[0]
    record = msgspec.structs.replace(
        record, format_errors={"alice": 2, "bob": 1}, invalid_actions={"bob": 4},
        error=ErrorInfo(kind="infra_error", type="InfraError", message="gone"),
        usage={"alice": UsageTotals(calls=3, prompt_tokens=100, completion_tokens=20, cost_usd=0.5),
               "bob": UsageTotals(calls=2, prompt_tokens=50, completion_tokens=10, cost_usd=None)},
    )
    row = game_row(record)
    assert (row["format_errors"], row["invalid_actions"], row["error"]) == (3, 4, "infra_error")
    assert (row["calls"], row["prompt_tokens"], row["completion_tokens"], row["cost_usd"]) == (5, 150, 30, None)


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_games_df_gives_the_rows_as_a_frame(run, library):
    pytest.importorskip(library, reason=f"{library} is not installed (pip install {library})")
    frame = games_df(run, library=library)
    assert frame.shape[0] == 12
    assert list(frame.columns)[:3] == ["game_id", "seed", "condition"]
    with open(run / GAMES_FILE, newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert list(frame.columns) == header
    rows = frame.to_dict("records") if library == "pandas" else frame.to_dicts()
    assert [r["game_id"] for r in rows] == list(range(12))
    assert {r["feedback"] for r in rows} == {"none", "joint"}


def test_games_df_without_its_library_says_what_to_install(run, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # an import of it fails, as where it is not installed
    with pytest.raises(ImportError, match="pip install pandas"):
        games_df(run)
    with pytest.raises(ValueError, match="'pandas' or 'polars'"):
        games_df(run, library="excel")
