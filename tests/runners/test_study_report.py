"""The report's participants table, from records alone: each participant's games, finished and left
unfinished (walked away, their partner walked away, other errors), their time on task and the
conditions and seats they had, in every format the report writes; a run without a person has none."""

from __future__ import annotations

import csv
from pathlib import Path

import msgspec
import pytest

from engine.plan.spec import GameSpec, Options
from engine.policies.seat import HumanSeat
from engine.records.record import ErrorInfo, GameRecord, encode_record
from puzzles import get_game
from runners.report import main as report_main
from runners.report.participants import ParticipantTally, participants_table

GAME = get_game("asympuzl")
PARTNER = "share_everything"


def record(gid: int, people: dict[str, str], outcome: str = "success", error: ErrorInfo | None = None) -> GameRecord:
    """A game with ``people`` (role -> participant) in their seats, the other seat scripted."""
    agents = {role: "human" if role in people else PARTNER for role in ("alice", "bob")}
    spec = GameSpec(
        game_id=gid, seed=gid, params=GAME.rules.Params(), agents=agents,
        options=Options(feedback=GAME.rules.default_feedback, max_turns=4),
    )
    humans = {role: HumanSeat(front="browser", participant=p, turns=2, timeouts=0, seconds=1.5) for role, p in people.items()}
    return GameRecord(game_id=gid, spec=spec, outcome=outcome, turns=4, error=error, humans=humans)  # type: ignore[arg-type]


def absent(role: str) -> ErrorInfo:
    return ErrorInfo(kind="human_absent", type="HumanAbsent", message="gone", actor=role)


RECORDS = [
    record(0, {"bob": "P1"}),
    record(1, {"alice": "P1"}, "failure"),
    record(2, {"bob": "P2"}, "error", absent("bob")),  # P2 walked away
    record(3, {"alice": "P1", "bob": "P2"}, "error", absent("bob")),  # P2 walked away, P1's partner did
    record(4, {"bob": "P1"}, "error", ErrorInfo(kind="infra_error", type="APIError", message="down")),
    record(5, {}),  # no person
]


def test_each_participant_counts_their_games_finished_and_unfinished() -> None:
    tally = ParticipantTally(["agents"]).add_all(RECORDS)
    assert list(tally.people) == ["P1", "P2"]
    p1, p2 = tally.people["P1"], tally.people["P2"]
    assert (p1.games, p1.finished, p1.walked_away, p1.partner_away, p1.other_errors) == (4, 2, 0, 1, 1)
    assert (p2.games, p2.finished, p2.walked_away, p2.partner_away, p2.other_errors) == (2, 0, 2, 0, 0)
    assert p1.seconds == pytest.approx(6.0) and p1.turns == 8
    assert p1.seats == {"bob": 2, "alice": 2}
    assert p1.conditions == {f"{PARTNER} / human": 2, f"human / {PARTNER}": 1, "human": 1}
    assert participants_table(ParticipantTally(["agents"]).add_all(RECORDS[5:])) is None


def write_run(path: Path, records: list[GameRecord]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))
    return path


def test_the_report_writes_the_participants_table_in_every_format(tmp_path: Path, capsys) -> None:
    later = msgspec.structs.replace(RECORDS[4], outcome="success", error=None)  # game 4 written again: the last wins
    run = write_run(tmp_path / "run", [*RECORDS, later])
    assert report_main([str(run), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    out = run / "report"
    with (out / "participants.csv").open() as f:
        rows = {r["participant"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"P1", "P2"}
    p1 = rows["P1"]
    assert (p1["games"], p1["finished"], p1["unfinished"], p1["partner_absent"], p1["other_errors"]) == ("4", "3", "1", "1", "0")
    assert float(p1["seconds_on_task"]) == pytest.approx(6.0)
    assert p1["seats"] == "bob=2;alice=2"
    assert (rows["P2"]["unfinished"], rows["P2"]["human_absent"]) == ("2", "2")
    markdown = (out / "tables.md").read_text()
    assert "## Participants" in markdown and "| P2 | 2 | 0 | 2 | 2 |" in markdown
    assert markdown.index("## Human seats") < markdown.index("## Participants")
    assert "\\caption{Participants}" in (out / "tables.tex").read_text()
    assert '<h2 id="participants">Participants</h2>' in (out / "report.html").read_text()
    assert "Participants" in printed and "participants.csv" in printed

    write_run(run, RECORDS[5:])  # no person now: the table and its stale CSV go
    assert report_main([str(run), "--no-plots"]) == 0
    assert not (out / "participants.csv").exists()
    assert "Participants" not in (out / "tables.md").read_text()


STUDY = """
name = "named"
allow_scripted = true
[[blocks]]
game = "tsp"
rounds = 2
max_turns = 1
  [[blocks.conditions]]
  name = "scripted-partner"
  partner = "full_share"
  games = 4
  [[blocks.conditions]]
  name = "two-people"
  partner = "person"
  games = 4
"""


def test_a_study_blocks_report_names_its_conditions_as_the_study_does(tmp_path):
    from engine.study import cells, condition_names, load_study
    from engine.study.design import agents, block_grid
    from runners.report.participants import study_names

    (tmp_path / "study.toml").write_text(STUDY)
    study = load_study(tmp_path / "study.toml")
    names = condition_names(study, 0)
    assert sorted(set(names.values())) == ["scripted-partner", "two-people"]
    grid = block_grid(study, 0)
    block = tmp_path / "block-0-tsp"
    block.mkdir()
    by_agents = {tuple(spec.agents.values()): spec for spec in grid.condition_specs()}
    lines = []
    for cell in cells(study, 0):
        spec = by_agents[tuple(agents(study, cell).values())]  # the condition's first game, as the plan has it
        people = {role: f"P{spec.game_id}{role}" for role, policy in spec.agents.items() if policy == "human"}
        humans = {role: HumanSeat(front="browser", participant=p, turns=1, timeouts=0, seconds=1.0) for role, p in people.items()}
        lines.append(encode_record(GameRecord(game_id=spec.game_id, spec=spec, outcome="success", turns=1, humans=humans)))
    lines = sorted(set(lines))
    (block / "results.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (block / "config.json").write_bytes(msgspec.json.encode({"format": 2, "config": msgspec.to_builtins(grid)}))
    assert study_names(block) == names and study_names(tmp_path) == {}
    assert report_main([str(block), "--no-plots", "--out", str(tmp_path / "report")]) == 0
    with open(tmp_path / "report" / "participants.csv", newline="") as f:
        conditions = {row["conditions"].split("=")[0] for row in csv.DictReader(f)}
    assert conditions == {"scripted-partner", "two-people"}  # never "human" or "full_share / human"
    with open(tmp_path / "report" / "humans.csv", newline="") as f:
        named = {row["study_condition"] for row in csv.DictReader(f)}
    assert named == {"scripted-partner", "two-people"}
    assert "| study condition |" in (tmp_path / "report" / "tables.md").read_text()
