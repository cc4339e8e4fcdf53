"""Summary statistics over game records: success with Wilson intervals, and every score a game
gives (booleans as rates with Wilson intervals, numbers as means with the interval below).

A proportion's Wilson interval lies in [0, 1]. A mean's interval is Student's t interval, from
``CUT_FROM`` values on cut to the range of the values observed (``mean_interval``): turns per game
0, 0, 0, 0, 0, 0, 0 and 9 give 1.13 [-1.53, 3.78] by t; cut: [0, 3.78]. Why this method:

- Coverage. The range of n values holds the true mean (a continuous score symmetric about it) with
  probability 1 - 2^(1-n) only: 50% at n = 2, 75% at n = 3, 87.5% at n = 4, 99.2% at n = 8. Cut to
  it, the 95% t interval covered the mean of normal data 50% of the time at n = 2, 75% at n = 3,
  93% at n = 5 and 94.4% at n = 6; from n = 8 as often as the t interval itself (20,000 samples
  each). So below ``CUT_FROM`` values the interval is the t interval as it is, which may leave the
  values' range (a turn count can get a negative lower bound); from there on it is cut, which then
  costs no coverage. ``tests/engine/analysis/test_mean_coverage.py`` checks the coverage by
  simulation with a fixed seed. The t interval assumes roughly normal means; for very skewed scores
  at small n it covers less, as any t interval does.
- The range is the one observed, never an assumed 0: a score that can be negative keeps its
  negative bounds. The observed range lies inside the possible one, so from ``CUT_FROM`` values
  the interval does too.
- Constant memory and work per game: count, mean, sum of squared deviations (Welford's update),
  smallest and largest value; no stored values, no random draws. The dashboard's live tally, the
  run's summary and the report compute it by the same code (``ScoreTally``), so they agree.

At n = 1 a mean has no interval (NaN); with no spread the interval is the value itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import msgspec

Z95 = 1.959963984540054

CUT_FROM = 8
"""From this many values on, a mean's interval is cut to the values' range (see the module's docstring)."""


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion, as fractions in [0, 1]."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


# Student's t, two-sided 95%, for 1 to 30 degrees of freedom.
_T95 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)


def t95(df: int) -> float:
    """Student's t quantile for a two-sided 95% interval: from a table up to 30 degrees of freedom,
    beyond by the Cornish-Fisher expansion around the normal quantile (error below 1e-4)."""
    if df < 1:
        return math.inf
    if df <= len(_T95):
        return _T95[df - 1]
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


class ScoreSummary(msgspec.Struct):
    """One score over the games of a condition that ended without error. ``kind`` is "rate" for a
    boolean score (``value`` the share of games where it holds, Wilson interval) or "mean" (the
    t interval, cut to the observed range from ``CUT_FROM`` values on; NaN bounds below two values)."""

    kind: str
    n: int
    value: float
    low: float
    high: float


class ScoreTally:
    """One score summed as games finish: a rate if every value so far was a boolean, else a mean.
    Constant memory and work per game; every summary of a score is made by one of these (the live
    counters, the run's summary, the report), so they all give the same numbers."""

    __slots__ = ("n", "hits", "mean", "squares", "smallest", "largest", "booleans")

    def __init__(self) -> None:
        self.n = 0
        self.hits = 0  # values that are True
        self.mean = 0.0
        self.squares = 0.0  # sum of squared deviations from the mean (Welford)
        self.smallest = math.inf
        self.largest = -math.inf
        self.booleans = True

    def add(self, value: bool | float) -> None:
        x = float(value)
        self.n += 1
        self.booleans = self.booleans and isinstance(value, bool)
        self.hits += value is True
        delta = x - self.mean
        self.mean += delta / self.n
        self.squares += delta * (x - self.mean)
        self.smallest = min(self.smallest, x)
        self.largest = max(self.largest, x)

    def interval(self) -> tuple[float, float]:
        """The 95% t interval of the mean, from ``CUT_FROM`` values on cut to [smallest, largest];
        NaN below two values."""
        n = self.n
        if n < 2:
            return (math.nan, math.nan)
        half = t95(n - 1) * math.sqrt(max(0.0, self.squares) / (n - 1)) / math.sqrt(n)
        mean = min(max(self.mean, self.smallest), self.largest)  # against rounding
        if n < CUT_FROM:
            return (mean - half, mean + half)
        return (max(self.smallest, mean - half), min(self.largest, mean + half))

    def summary(self) -> ScoreSummary:
        if self.booleans and self.n:
            low, high = wilson_interval(self.hits, self.n)
            return ScoreSummary("rate", self.n, self.hits / self.n, low, high)
        return self.mean_summary()

    def mean_summary(self) -> ScoreSummary:
        """The mean with its interval, whatever the values (booleans as 0 and 1); NaN for none."""
        if self.n == 0:
            return ScoreSummary("mean", 0, math.nan, math.nan, math.nan)
        return ScoreSummary("mean", self.n, self.mean, *self.interval())


def tally_scores(tallies: dict[str, ScoreTally], scores: Mapping[str, bool | float]) -> None:
    """Add each of ``scores`` to its tally in ``tallies``, a new one for a score first seen."""
    for key, value in scores.items():
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = ScoreTally()
        tally.add(value)


def mean_interval(values: Iterable[float]) -> tuple[float, float, float]:
    """The mean of ``values`` and its 95% interval: Student's t, cut to the values' range from
    ``CUT_FROM`` values on (see the module's docstring). (mean, low, high); low and high NaN below two values, all NaN for none."""
    tally = ScoreTally()
    for value in values:
        tally.add(float(value))
    if tally.n == 0:
        return (math.nan, math.nan, math.nan)
    return (tally.mean, *tally.interval())


class ConditionSummary(msgspec.Struct):
    condition: str
    fields: dict[str, str]
    games: int
    successes: int
    failures: int
    errors: int
    success_rate: float  # among games that ended without error
    ci_low: float
    ci_high: float
    mean_solved_turn: float | None
    scores: dict[str, ScoreSummary]
    format_errors: int
    invalid_actions: int
    error_kinds: dict[str, int]
    cut_replies: int = 0  # unreadable replies the run's token limit cut (not in ``format_errors``)
    calls: int = 0  # model calls, when models played
    tokens: int = 0  # their prompt + completion tokens
    cost_usd: float | None = None  # None: no model played, or one has no price
