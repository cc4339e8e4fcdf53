"""The paired table gives McNemar's exact p-value beside the difference and its interval, in the
text and in the CSV."""

from __future__ import annotations

from engine.analysis.paired import mcnemar_exact
from runners.report.cells import p_csv, p_text
from runners.report.tables import paired_table
from tests.runners.test_report import crafted_games, game


def test_p_values_are_written_to_three_decimals_and_small_ones_in_full_in_the_csv():
    assert [p_text(p) for p in (1.0, 0.0625, 0.021484375, 0.0004)] == ["1.000", "0.062", "0.021", "<0.001"]
    assert p_csv(0.021484375) == 0.02148 and p_csv(3.0517578125e-05) == 3.052e-05


def test_the_paired_table_has_a_mcnemar_column():
    table = paired_table(crafted_games(), "feedback", "own", "joint")
    p_column = table.header.index("McNemar p")
    assert table.header[p_column - 1] == "own only / joint only"
    rows = {row[0]: row for row in table.rows}
    assert rows["share_everything"][p_column] == "1.000"  # one pair each way
    assert rows["one_piece / ignore"][p_column] == "-"  # no pair
    assert table.csv_header[-1] == "mcnemar_p"
    assert "McNemar's exact test" in table.note


def test_a_clear_difference_gets_a_small_p_value():
    """Ten seeds: solved under joint, not under own, on nine of them; one the other way."""
    records = []
    for i in range(10):
        seed = 200 + i
        records.append(game(2 * i, seed, "failure" if i else "success", feedback="own", solved=None if i else 2))
        records.append(game(2 * i + 1, seed, "success" if i else "failure", feedback="joint", solved=3 if i else None))
    table = paired_table(records, "feedback", "own", "joint")
    (row,) = table.rows
    assert row[table.header.index("own only / joint only")] == "1 / 9"
    assert row[table.header.index("McNemar p")] == "0.021"
    assert table.csv_rows[0][-1] == p_csv(mcnemar_exact(1, 9)) == 0.02148
