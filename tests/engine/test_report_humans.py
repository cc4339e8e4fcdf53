"""The numbers of the human-seats table against a hand computation on records built here: the
study's scores with their intervals (a person who walked away counts as not completed), participants,
the turns taken by agents and people (AMT, HMT), response times, timeouts and absent games."""

from __future__ import annotations

import math
import statistics

import pytest

from bus import HumanTurn
from engine import GameSpec, Options
from engine.policies.seat import HumanSeat
from engine.records.record import ErrorInfo, GameRecord
from engine.analysis import has_human, human_seats
from engine.analysis.seats import SUCCESS, study_columns
from engine.analysis.stats import mean_interval, wilson_interval
from puzzles import TurnLog, get_game

GAME = get_game("asympuzl")
STUDY = {"identical": "Completed", "s90": "Score >= 90", "steps": "Steps"}


def turn(n: int, role: str, seconds: float | None = None, timed_out: bool = False) -> TurnLog:
    human = HumanTurn(seconds, timed_out) if seconds is not None else None
    extra = {} if human is None else {"human": human}
    return TurnLog(turn=n, role=role, message_chars=0, reply_chars=0, applied=0, **extra)


def record(
    gid: int, outcome: str, log: list[TurnLog], *, partner: str = "share_everything", scores: dict | None = None,
    error: str | None = None, seat: HumanSeat | None = None, human: bool = True,
) -> GameRecord:
    spec = GameSpec(
        game_id=gid, seed=gid, params=GAME.rules.Params(),
        agents={"alice": partner, "bob": "human" if human else partner},
        options=Options(feedback=GAME.rules.default_feedback, max_turns=10),
    )
    extra = {} if seat is None else {"humans": {"bob": seat}}
    return GameRecord(
        game_id=gid, spec=spec, outcome=outcome, turns=len(log), scores=scores or {}, turn_log=log,
        error=None if error is None else ErrorInfo(error, "E", "why", "bob"), **extra,
    )


def run() -> list[GameRecord]:
    return [
        record(0, "success", [turn(1, "alice"), turn(1, "bob", 10.0), turn(2, "alice"), turn(2, "bob", 20.0)],
               scores={"identical": True, "s90": True, "steps": 4.0}, seat=HumanSeat("browser", "P01", 2, 0, 30.0)),
        record(1, "failure", [turn(1, "alice"), turn(1, "bob", 5.0), turn(2, "alice"), turn(2, "bob", 60.0, True), turn(3, "alice")],
               scores={"identical": False, "s90": True, "steps": 6.0}, seat=HumanSeat("browser", "P02", 2, 1, 65.0)),
        # The person stopped answering: the second timeout ended the game before its turn was logged.
        record(2, "error", [turn(1, "alice"), turn(1, "bob", 60.0, True), turn(2, "alice")], error="human_absent",
               seat=HumanSeat("browser", "P01", 2, 2, 120.0)),
        record(3, "error", [turn(1, "alice")], error="infra_error", seat=HumanSeat("browser", "P03", 0, 0, 0.0)),
        record(4, "success", [turn(1, "alice"), turn(1, "bob", 8.0)], partner="one_piece",
               scores={"identical": True, "s90": False, "steps": 2.0}, seat=HumanSeat("terminal")),
        record(5, "success", [turn(1, "alice"), turn(1, "bob")], scores={"identical": True, "s90": True, "steps": 2.0}, human=False),
    ]


def test_each_condition_with_a_person_gets_the_studys_scores_turns_and_times_as_computed_by_hand():
    records = run()
    columns, rows = human_seats(records, ["agents"], study_of=lambda name: STUDY)
    assert [(c.key, c.label, c.kind) for c in columns] == [
        ("identical", "Completed", "rate"), ("s90", "Score >= 90", "rate"), ("steps", "Steps", "mean"),
    ]
    assert [r.key for r in rows] == [("share_everything / human",), ("one_piece / human",)]  # no row without a person
    a, b = rows

    assert (a.games, a.n) == (4, 3)  # the infrastructure's loss is left out; the absent game stays in
    assert a.participants == ["P01", "P02", "P03"]
    completed = a.scores["identical"]  # yes, no, and no for the person who walked away
    assert (completed.n, completed.value) == (3, pytest.approx(1 / 3))
    assert (completed.low, completed.high) == pytest.approx(wilson_interval(1, 3))
    s90 = a.scores["s90"]
    assert (s90.n, s90.value) == (3, pytest.approx(2 / 3))
    assert (s90.low, s90.high) == pytest.approx(wilson_interval(2, 3))
    steps = a.scores["steps"]  # a number: over the games that gave it
    assert (steps.kind, steps.n) == ("mean", 2)
    assert (steps.value, steps.low, steps.high) == pytest.approx(mean_interval([4.0, 6.0]))

    assert a.agent_turns.n == 3
    assert (a.agent_turns.value, a.agent_turns.low, a.agent_turns.high) == pytest.approx(mean_interval([2, 3, 2]))
    assert (a.human_turns.value, a.human_turns.low, a.human_turns.high) == pytest.approx(mean_interval([2, 2, 1]))
    assert a.median_seconds == statistics.median([10.0, 20.0, 5.0])  # timed-out turns left out
    assert a.timeouts == pytest.approx((0 + 1 + 2) / 3)  # the seats' counts, the last one that ended the game too
    assert a.absent == 1

    assert (b.games, b.n, b.participants, b.absent) == (1, 1, [], 0)
    assert (b.scores["identical"].value, b.scores["s90"].value) == (1.0, 0.0)
    assert b.agent_turns.value == b.human_turns.value == 1.0 and math.isnan(b.agent_turns.low)  # one game: no interval
    assert (b.median_seconds, b.timeouts) == (8.0, 0.0)


def test_a_game_that_names_no_study_scores_is_reported_by_its_success_with_absent_games_as_failures():
    columns, rows = human_seats(run(), ["agents"], study_of=lambda name: {})
    assert [(c.key, c.label, c.kind) for c in columns] == [(SUCCESS, "Success", "rate")]
    success = rows[0].scores[SUCCESS]
    assert (success.n, success.value) == (3, pytest.approx(1 / 3))
    assert (success.low, success.high) == pytest.approx(wilson_interval(1, 3))


def test_the_study_scores_are_read_from_the_game_when_the_report_is_made():
    columns = study_columns(run())
    study = dict(GAME.records.human_study) or {SUCCESS: "Success"}
    assert [(c.key, c.label) for c in columns] == list(study.items())


def test_timeouts_come_from_the_turn_log_where_a_record_has_no_seat_summary_and_no_person_means_no_rows():
    records = [record(0, "failure", [turn(1, "alice"), turn(1, "bob", 60.0, True), turn(2, "alice"), turn(2, "bob", 3.0)])]
    assert has_human(records[0])
    _, (row,) = human_seats(records, [], study_of=lambda name: {})
    assert (row.key, row.timeouts, row.median_seconds, row.participants) == ((), 1.0, 3.0, [])
    assert human_seats([record(1, "success", [turn(1, "alice")], human=False)], ["agents"]) == ([], [])
