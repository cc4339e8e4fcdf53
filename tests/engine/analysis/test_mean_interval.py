"""The interval of a mean stays inside the range of its values (Student's t cut to the observed
range), at every n, for scores that can be negative too; the live tally, the summaries of records and
the human-study table give the same numbers."""

from __future__ import annotations

import math
import statistics

import pytest

from engine.analysis.seats import human_seats
from engine.analysis.stats import ScoreTally, mean_interval, t95
from tests.engine.test_report_humans import STUDY, record, turn
from tests.helpers import score_summaries


def t_interval(values: list[float]) -> tuple[float, float]:
    """The plain t interval, written out here."""
    n = len(values)
    half = t95(n - 1) * statistics.stdev(values) / math.sqrt(n)
    return (statistics.fmean(values) - half, statistics.fmean(values) + half)


def test_no_values_and_one_value():
    assert all(math.isnan(x) for x in mean_interval([]))
    mean, low, high = mean_interval([7.5])
    assert mean == 7.5 and math.isnan(low) and math.isnan(high)  # one value: no spread, no interval


def test_two_values_give_their_range():
    assert mean_interval([1.0, 4.0]) == (2.5, 1.0, 4.0)  # t: 2.5 +- 19.06, cut to [1, 4]
    assert mean_interval([-3.0, -1.0]) == (-2.0, -3.0, -1.0)


def test_five_values_keep_the_t_interval_where_it_fits():
    values = [4.0, 5.0, 5.5, 6.0, 4.5]
    low, high = t_interval(values)
    assert min(values) < low and high < max(values)
    assert mean_interval(values) == pytest.approx((5.0, low, high))


def test_five_values_whose_t_interval_leaves_the_range():
    values = [0.0, 0.0, 0.0, 0.0, 10.0]
    low, high = t_interval(values)
    assert low < 0  # the t interval of positive values below zero: what the report gave before
    assert mean_interval(values) == pytest.approx((2.0, 0.0, high))


def test_no_spread_gives_the_value_itself():
    assert mean_interval([3.0] * 5) == (3.0, 3.0, 3.0)
    assert mean_interval([0.1] * 7) == pytest.approx((0.1, 0.1, 0.1))  # no rounding outside the range
    low, high = ScoreTally().interval()
    assert math.isnan(low) and math.isnan(high)


def test_a_positive_score_no_longer_gets_a_negative_bound():
    values = [0.0, 0.0, 0.0, 9.0]
    assert t_interval(values) == pytest.approx((-4.9104, 9.4104), abs=1e-4)  # 2.25 +- 3.1824 * 4.5 / 2
    assert mean_interval(values) == (2.25, 0.0, 9.0)


def test_a_score_that_can_be_negative_keeps_its_negative_range():
    values = [-5.0, -1.0, -3.0, -2.0, -4.0]
    mean, low, high = mean_interval(values)
    t_low, t_high = t_interval(values)
    assert mean == -3.0
    assert low == pytest.approx(max(t_low, -5.0)) and low < -4  # not clamped at 0, nor at -1
    assert high == pytest.approx(min(t_high, -1.0)) and high < 0
    mixed = [-2.0, 3.0, -1.0, 8.0]
    mean, low, high = mean_interval(mixed)
    assert (low, high) == (-2.0, pytest.approx(min(t_interval(mixed)[1], 8.0)))
    assert low <= mean <= high


@pytest.mark.parametrize("n", [2, 3, 5, 8, 40])
def test_always_inside_the_observed_range_and_around_the_mean(n):
    values = [((i * 7919) % 13) ** 2 - 20.0 for i in range(n)]
    mean, low, high = mean_interval(values)
    assert min(values) <= low <= mean <= high <= max(values)


def test_the_tally_is_constant_memory_and_equals_the_summary_of_the_values():
    tally = ScoreTally()
    values = [0.0, 2.0, 0.0, 0.0, 9.0, 1.5]
    for v in values:
        tally.add(v)
    assert not hasattr(tally, "__dict__")  # a few numbers, no list of values
    assert all(isinstance(getattr(tally, name), (int, float, bool)) for name in tally.__slots__)
    assert (tally.summary().value, tally.summary().low, tally.summary().high) == mean_interval(values)


def test_score_summaries_use_the_same_interval():
    from tests.runners.test_report import game

    values = [0.0, 0.0, 0.0, 9.0]
    records = [game(i, 100 + i, "failure", scores={"rounds": v, "agreed": v > 0}) for i, v in enumerate(values)]
    summaries = score_summaries(records)
    rounds = summaries["rounds"]
    assert (rounds.kind, rounds.n, rounds.value, rounds.low, rounds.high) == ("mean", 4, 2.25, 0.0, 9.0)
    assert summaries["agreed"].kind == "rate" and summaries["agreed"].value == 0.25


def test_human_turns_per_game_stay_inside_their_range():
    """HMT of 0, 0, 0 and 9 turns: 2.25 [0, 9], where the t interval gave [-4.9, 9.4]."""
    logs = [[turn(1, "alice")]] * 3 + [[t for k in range(1, 10) for t in (turn(k, "alice"), turn(k, "bob", 5.0))]]
    records = [record(i, "failure", log, scores={"steps": float(len(log))}) for i, log in enumerate(logs)]
    _, (row,) = human_seats(records, ["agents"], study_of=lambda name: STUDY)
    human = row.human_turns
    assert (human.value, human.low, human.high) == (2.25, 0.0, 9.0)
    agents = row.agent_turns  # 1, 1, 1 and 9 turns
    assert (agents.value, agents.low, agents.high) == (3.0, 1.0, 9.0)
    steps = row.scores["steps"]
    assert 1.0 <= steps.low <= steps.value <= steps.high <= 18.0
