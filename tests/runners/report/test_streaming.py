"""The report read as a stream (``read_totals``: the records one at a time, in game-id order,
whatever the order of the lines) gives the numbers of the records held in a list: every table, cell
for cell, on a run with its lines out of order, games written twice, damaged lines and a cut line."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import pytest

from engine.analysis import condition_fields, field_values, read_results, read_totals, scores_per_condition
from engine.records import ordered
from engine.records.record import UsageTotals, encode_record
from runners.report.cli import intro_lines
from runners.report.tables import build_tables
from tests.helpers import score_summaries
from tests.runners.test_report import ALICE_APP, BOB_APP, crafted_games, game

COMPARE = ("feedback", "own", "joint")


def scored_games():
    """The crafted games with scores and costs whose sums depend on the order they are added in."""
    rng = random.Random(7)
    records = []
    for record in crafted_games():
        usage = {role: UsageTotals(calls=2, prompt_tokens=100, completion_tokens=10, cost_usd=rng.random() / 7)
                 for role in record.spec.agents}
        scores = {ALICE_APP: rng.random() * 3, BOB_APP: rng.random() / 3}
        records.append(msgspec.structs.replace(record, scores=scores, usage=usage))
    far = game(10**12, 101, "success", solved=2)  # ids no run has: read apart from the others
    below = game(-3, 102, "failure")
    return records + [far, below]


def write_shuffled(path: Path) -> None:
    records = scored_games()
    lines = [encode_record(r) + b"\n" for r in records]
    random.Random(3).shuffle(lines)
    lines.insert(2, b"\n")  # a blank line
    lines.insert(4, b'{"game_id": 5, "spec": damaged\n')  # a damaged copy of game 5, written before its good one
    lines.insert(5, b"not json at all\n")
    replaced = msgspec.structs.replace(records[9], outcome="success", solved_turn=5)
    lines.append(encode_record(replaced) + b"\n")  # game 9 again: the last one wins
    lines.append(encode_record(records[3])[:-20] + b"\n")  # game 3 again, damaged: the good one stays
    cut = encode_record(game(16, 107, "success", solved=2))
    lines.append(cut[: len(cut) // 2])
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize("window", [ordered.WINDOW, 4])
def test_every_table_from_the_stream_equals_the_one_from_the_records(tmp_path, monkeypatch, window):
    monkeypatch.setattr(ordered, "WINDOW", window)  # 4: many windows, as a run of millions has
    path = tmp_path / "results.jsonl"
    write_shuffled(path)
    results = read_results(path)  # every record, in a list sorted by game id
    run, counts = read_totals(path, COMPARE)
    assert (counts.lines, counts.truncated, counts.duplicates) == (results.lines, results.truncated, results.duplicates)
    assert (counts.damaged, counts.first_damaged) == (len(results.damaged), results.damaged[:5])
    assert counts.duplicates == 1 and counts.damaged == 3 and counts.truncated  # damaged copies replace nothing
    assert run.games == len(results.records) == 18

    for rows in (["agents"], ["feedback"], ["alice"]):
        streamed, listed = build_tables(run, rows, COMPARE), build_tables(results.records, rows, COMPARE)
        assert [t.name for t in streamed] == [t.name for t in listed]
        for a, b in zip(streamed, listed):
            assert a == b, a.name
    assert intro_lines(run, counts, path)[1:] == [
        "last line cut short (run still writing or interrupted): skipped",
        "1 repeated game id: the last record of each kept",
        f"3 damaged lines skipped (line {', '.join(map(str, results.damaged))})",
        "1 game lost to infrastructure errors (infra_error): left out of every rate",
        "2 games ended in other errors: left out of every rate",
    ]


def test_means_are_summed_in_game_id_order_whatever_the_order_of_the_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(ordered, "WINDOW", 4)
    path = tmp_path / "results.jsonl"
    write_shuffled(path)
    records = read_results(path).records  # sorted by game id
    run, _ = read_totals(path)
    fields = condition_fields(run)
    for row in scores_per_condition(run, fields):
        group = [r for r in records if tuple(field_values(r).get(f, "") for f in fields) == row.key]
        assert row.scores == score_summaries(group)  # the list-based summary, to the last bit
