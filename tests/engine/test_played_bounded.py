"""The analyses fold the records one at a time, in game-id order, without keeping them: the
report's --analyses reads the results again record by record, whatever order they and the
transcripts were written in, and gives the tables it gave when it held every record."""

from __future__ import annotations

import random

from engine.analysis import played, reading, read_totals
from engine.records.record import encode_record
from runners.report import main
from tests.engine.test_played import Counting, transcript_line, with_counting, write_run
from tests.runners.test_report import game


def _records():
    return [game(i, 100 + i, "failure" if i % 3 else "success", feedback="joint" if i >= 6 else "own") for i in range(12)]


def test_each_record_is_folded_as_it_is_read_not_after_all_are(tmp_path, monkeypatch):
    with_counting(monkeypatch)
    records = _records()
    write_run(tmp_path / "run", records, b"".join(transcript_line(r, f"game {r.game_id}") for r in records))
    given = []
    adds = []

    def one_at_a_time():
        for record in records:
            given.append(record.game_id)
            yield record

    real_add = Counting.add
    monkeypatch.setattr(Counting, "add", lambda self, g: (adds.append(len(given)), real_add(self, g)))
    found = played.run_analyses(one_at_a_time(), tmp_path / "run", records)
    assert adds == list(range(1, 13))  # game k folded when k records had been read, none kept ahead
    assert found.games[0].games == 12


def test_games_fold_in_game_id_order_whatever_order_they_were_written_in(tmp_path, monkeypatch):
    with_counting(monkeypatch)
    records = _records()
    in_order, shuffled = tmp_path / "in_order", tmp_path / "shuffled"
    write_run(in_order, records, b"".join(transcript_line(r, f"game {r.game_id}") for r in records))
    mixed = records[:]
    random.Random(3).shuffle(mixed)
    write_run(shuffled, mixed, b"".join(transcript_line(r, f"game {r.game_id}") for r in reversed(mixed)))
    (shuffled / "results.jsonl").write_bytes(  # a game written twice and a damaged line too
        b"{not json}\n" + encode_record(records[4]) + b"\n" + (shuffled / "results.jsonl").read_bytes()
    )
    assert [r.game_id for r in reading.recorded_games(shuffled / "results.jsonl")] == list(range(12))
    seen = []
    for run in (in_order, shuffled):
        totals, _ = read_totals(run / "results.jsonl")
        found = played.run_analyses(reading.recorded_games(run / "results.jsonl"), run, totals)
        seen.append(([g.seed for g in Counting.last.seen], found))
    assert seen[0] == seen[1]
    assert seen[0][0] == [100 + i for i in range(12)]
    assert {g.condition for g in Counting.last.seen} == {"feedback=own", "feedback=joint"}


def test_the_report_reads_the_analyses_without_holding_the_records(tmp_path, monkeypatch, capsys):
    with_counting(monkeypatch)
    records = _records()
    write_run(tmp_path / "run", records, b"".join(transcript_line(r, f"game {r.game_id}") for r in records))

    def no_list(path):
        raise AssertionError("the report read every record into a list")

    monkeypatch.setattr("engine.analysis.reading.read_results", no_list)
    monkeypatch.setattr("engine.analysis.read_results", no_list)
    assert main([str(tmp_path / "run"), "--analyses", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "Analyses of asympuzl: 12 games read from transcripts" in out
    rows = (tmp_path / "run" / "report" / "analysis_asympuzl_seen.csv").read_text().splitlines()[1:]
    assert [row.split(",")[-1] for row in rows] == [f"game {i}" for i in range(12)]
