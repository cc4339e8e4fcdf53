"""The games' own analyses over a run: each game that ended without error reaches its game's
analysis once, from the last whole transcript line written for it, with its condition named by the
fields that vary; damaged lines and missing transcripts are counted, never fatal."""

from __future__ import annotations

import dataclasses

import msgspec

from engine.analysis import played
from engine.records.record import encode_record
from engine.records.transcripts import Transcript, TranscriptTurn
from puzzles import AnalysisTable, PlayedGame, get_game
from runners.report import main
from tests.runners.test_report import game


class Counting:
    """Remembers every game it is given."""

    seen: list[PlayedGame]

    def __init__(self) -> None:
        self.seen = []
        Counting.last = self

    def add(self, g: PlayedGame) -> None:
        self.seen.append(g)

    def tables(self) -> list[AnalysisTable]:
        if not self.seen:
            return []
        rows = [[g.condition, g.outcome, len(g.turns), g.turns[0].message if g.turns else None] for g in self.seen]
        return [AnalysisTable(name="seen", title="Games seen", columns=["condition", "outcome", "turns", "first"], rows=rows, labels=2)]


def with_counting(monkeypatch):
    real = get_game("asympuzl")
    counted = dataclasses.replace(real, records=dataclasses.replace(real.records, analyses=Counting))
    monkeypatch.setattr(played, "get_game", lambda name: counted)


def transcript_line(record, message: str) -> bytes:
    t = Transcript(game_id=record.spec.game_id, spec=record.spec, outcome=record.outcome,
                   turns=[TranscriptTurn(turn=1, role="alice", message=message, actions=[{"position": 1}])])
    return msgspec.json.encode(t) + b"\n"


def write_run(run_dir, records, transcripts: bytes) -> None:
    run_dir.mkdir()
    (run_dir / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))
    (run_dir / "transcripts.jsonl").write_bytes(transcripts)


def test_each_scored_game_reaches_the_analysis_once_from_its_last_whole_line(tmp_path, monkeypatch):
    with_counting(monkeypatch)
    records = [game(0, 1, "success"), game(1, 2, "failure", feedback="joint"), game(2, 3, "error", error="infra_error"),
               game(3, 4, "success"), game(4, 5, "failure")]
    lines = (transcript_line(records[0], "first copy") + transcript_line(records[0], "second copy")
             + transcript_line(records[1], "joint game") + transcript_line(records[2], "an error")
             + b'{"game_id":3,"spec": damaged\n' + transcript_line(records[4], "cut")[:30])
    write_run(tmp_path / "run", records, lines)
    found = played.run_analyses(records, tmp_path / "run")
    (only,) = found.games
    assert (only.game, only.games, only.without_transcript, only.errors) == ("asympuzl", 2, 2, 1)
    seen = {g.seed: g for g in Counting.last.seen}
    assert set(seen) == {1, 2}
    assert seen[1].turns[0].message == "second copy" and seen[1].turns[0].actions == ({"position": 1},)
    assert seen[1].condition == "feedback=own" and seen[2].condition == "feedback=joint"
    assert seen[1].params["size"] == 5 and seen[1].agents == {"alice": "share_everything", "bob": "share_everything"}


def test_a_run_without_transcripts_says_so(tmp_path, monkeypatch):
    with_counting(monkeypatch)
    records = [game(0, 1, "success")]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.jsonl").write_bytes(encode_record(records[0]) + b"\n")
    found = played.run_analyses(records, tmp_path / "run")
    assert not found.transcripts and found.games[0].games == 0 and found.games[0].without_transcript == 1


def test_the_report_prints_and_writes_the_analyses(tmp_path, monkeypatch, capsys):
    with_counting(monkeypatch)
    records = [game(0, 1, "success"), game(1, 2, "failure")]
    hostile = "[bold red]\x1b[2J\u202e<script>"
    write_run(tmp_path / "run", records, transcript_line(records[0], hostile) + transcript_line(records[1], "plain"))
    assert main([str(tmp_path / "run"), "--analyses", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "Games seen" in out and "Analyses of asympuzl: 2 games read from transcripts" in out
    assert "\x1b[2J" not in out
    csv_text = (tmp_path / "run" / "report" / "analysis_asympuzl_seen.csv").read_text()
    assert "plain" in csv_text and "<script>" in csv_text  # the CSV keeps the text; the page escapes it
    assert "<script>" not in (tmp_path / "run" / "report" / "report.html").read_text()
    assert main([str(tmp_path / "run"), "--no-plots"]) == 0  # without the flag: no analysis files left behind
    assert not (tmp_path / "run" / "report" / "analysis_asympuzl_seen.csv").exists()
