"""The interval of a mean: Student's t, cut to the range of its values from ``CUT_FROM`` (8) values
on, where the cut costs no coverage (below, the range of the values too often misses the mean:
``test_mean_coverage.py``), for scores that can be negative too; the live tally, the summaries of
records and the human-study table give the same numbers."""

from __future__ import annotations

import math
import statistics

import pytest

from engine.analysis.seats import human_seats
from engine.analysis.stats import ScoreTally, mean_interval, t95
from tests.engine.test_report_humans import STUDY, record, turn
from tests.helpers import score_summaries


CUT_FROM = 8  # values from which the interval is cut to their range (engine.analysis.stats.CUT_FROM)


def test_the_cut_starts_at_eight_values():
    from engine.analysis import stats

    assert stats.CUT_FROM == CUT_FROM


def t_interval(values: list[float]) -> tuple[float, float]:
    """The plain t interval, written out here."""
    n = len(values)
    half = t95(n - 1) * statistics.stdev(values) / math.sqrt(n)
    return (statistics.fmean(values) - half, statistics.fmean(values) + half)


def test_no_values_and_one_value():
    assert all(math.isnan(x) for x in mean_interval([]))
    mean, low, high = mean_interval([7.5])
    assert mean == 7.5 and math.isnan(low) and math.isnan(high)  # one value: no spread, no interval


def test_two_values_give_the_t_interval_not_their_range():
    """Their range holds the mean half the time: the interval is t's, 2.5 +- 19.06."""
    assert mean_interval([1.0, 4.0]) == pytest.approx((2.5, *t_interval([1.0, 4.0])))
    assert mean_interval([1.0, 4.0])[1:] == pytest.approx((2.5 - 19.0593, 2.5 + 19.0593))
    assert mean_interval([-3.0, -1.0]) == pytest.approx((-2.0, *t_interval([-3.0, -1.0])))


def test_five_values_keep_the_t_interval_where_it_fits():
    values = [4.0, 5.0, 5.5, 6.0, 4.5]
    low, high = t_interval(values)
    assert min(values) < low and high < max(values)
    assert mean_interval(values) == pytest.approx((5.0, low, high))


def test_values_whose_t_interval_leaves_the_range():
    few = [0.0, 0.0, 0.0, 0.0, 10.0]
    assert t_interval(few)[0] < 0 and mean_interval(few) == pytest.approx((2.0, *t_interval(few)))  # too few to cut
    values = [0.0] * (CUT_FROM - 1) + [16.0]
    low, high = t_interval(values)
    assert low < 0  # the t interval of positive values below zero
    assert mean_interval(values) == pytest.approx((2.0, 0.0, high))


def test_no_spread_gives_the_value_itself():
    assert mean_interval([3.0] * 5) == (3.0, 3.0, 3.0)
    assert mean_interval([0.1] * 7) == pytest.approx((0.1, 0.1, 0.1))  # no rounding outside the range
    low, high = ScoreTally().interval()
    assert math.isnan(low) and math.isnan(high)


def test_a_positive_score_gets_no_negative_bound_from_eight_values_on():
    values = [0.0] * 7 + [9.0]
    assert t_interval(values)[0] == pytest.approx(-1.5351, abs=1e-4)  # 1.125 +- 2.3646 * 3.182 / 2.828
    assert mean_interval(values) == pytest.approx((1.125, 0.0, t_interval(values)[1]))
    assert mean_interval([0.0, 0.0, 0.0, 9.0]) == pytest.approx((2.25, -4.9104, 9.4104), abs=1e-4)  # four: t as it is


def test_a_score_that_can_be_negative_keeps_its_negative_range():
    values = [-5.0, -1.0, -3.0, -2.0, -4.0, -3.0, -3.0, -3.0]
    mean, low, high = mean_interval(values)
    t_low, t_high = t_interval(values)
    assert mean == -3.0
    assert low == pytest.approx(max(t_low, -5.0)) and low < -3.5  # not clamped at 0, nor at -1
    assert high == pytest.approx(min(t_high, -1.0)) and high < 0
    mixed = [-2.0, 3.0, -1.0, 8.0, -2.0, -2.0, -2.0, -2.0]
    mean, low, high = mean_interval(mixed)
    assert (low, high) == (-2.0, pytest.approx(min(t_interval(mixed)[1], 8.0)))
    assert low <= mean <= high


@pytest.mark.parametrize("n", [2, 3, 5, 7, 8, 9, 40])
def test_inside_the_observed_range_from_eight_values_on_and_always_around_the_mean(n):
    values = [((i * 7919) % 13) ** 2 - 20.0 for i in range(n)]
    mean, low, high = mean_interval(values)
    assert low <= mean <= high
    if n >= CUT_FROM:
        assert min(values) <= low and high <= max(values)
    else:
        assert (low, high) == pytest.approx(t_interval(values))


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

    values = [0.0] * 7 + [9.0]
    records = [game(i, 100 + i, "failure", scores={"rounds": v, "agreed": v > 0}) for i, v in enumerate(values)]
    summaries = score_summaries(records)
    rounds = summaries["rounds"]
    assert (rounds.kind, rounds.n, rounds.value, rounds.low, rounds.high) == ("mean", 8, *mean_interval(values))
    assert rounds.low == 0.0
    assert summaries["agreed"].kind == "rate" and summaries["agreed"].value == 0.125


def test_human_turns_per_game_stay_inside_their_range():
    """HMT of 0 (seven games) and 9 turns: 1.125 [0, 3.79], where the t interval gave [-1.5, 3.8]."""
    logs = [[turn(1, "alice")]] * 7 + [[t for k in range(1, 10) for t in (turn(k, "alice"), turn(k, "bob", 5.0))]]
    records = [record(i, "failure", log, scores={"steps": float(len(log))}) for i, log in enumerate(logs)]
    _, (row,) = human_seats(records, ["agents"], study_of=lambda name: STUDY)
    human = row.human_turns
    assert (human.value, human.low, human.high) == mean_interval([0.0] * 7 + [9.0]) and human.low == 0.0
    agents = row.agent_turns  # 1 (seven games) and 9 turns
    assert (agents.value, agents.low, agents.high) == mean_interval([1.0] * 7 + [9.0]) and agents.low == 1.0
    steps = row.scores["steps"]
    assert 1.0 <= steps.low <= steps.value <= steps.high <= 18.0
