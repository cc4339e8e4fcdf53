"""Summary statistics over game records: success with Wilson intervals, and every score a game
gives (booleans as rates with Wilson intervals, numbers as means with 95% t intervals)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import msgspec

from .records import GameRecord

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


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of ``values`` and its 95% t interval (mean, low, high); NaN where undefined."""
    n = len(values)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = sum(values) / n
    if n == 1:
        return (mean, math.nan, math.nan)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t95(n - 1) * sd / math.sqrt(n)
    return (mean, mean - half, mean + half)


class ScoreSummary(msgspec.Struct):
    """One score over the games of a condition that ended without error. ``kind`` is "rate" for a
    boolean score (``value`` the share of games where it holds, Wilson interval) or "mean"."""

    kind: str
    n: int
    value: float
    low: float
    high: float


def score_summaries(records: Sequence[GameRecord]) -> dict[str, ScoreSummary]:
    """Every score of the records, in first-seen order, over the games that ended without error."""
    values: dict[str, list] = {}
    for record in records:
        if record.outcome == "error":
            continue
        for key, value in record.scores.items():
            values.setdefault(key, []).append(value)
    out = {}
    for key, found in values.items():
        if all(isinstance(v, bool) for v in found):
            hits = sum(found)
            low, high = wilson_interval(hits, len(found))
            out[key] = ScoreSummary("rate", len(found), hits / len(found), low, high)
        else:
            mean, low, high = mean_interval([float(v) for v in found])
            out[key] = ScoreSummary("mean", len(found), mean, low, high)
    return out


class ScoreTally:
    """One score summed as games finish (for the live counters): a rate if every value so far was
    a boolean, else a mean. Constant work per game; ``summary()`` is the same as ``score_summaries``
    over the games counted."""

    __slots__ = ("n", "total", "squares", "booleans")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.squares = 0.0
        self.booleans = True

    def add(self, value: bool | float) -> None:
        self.n += 1
        self.booleans = self.booleans and isinstance(value, bool)
        self.total += float(value)
        self.squares += float(value) ** 2

    def summary(self) -> ScoreSummary:
        n = self.n
        if n == 0:
            return ScoreSummary("mean", 0, math.nan, math.nan, math.nan)
        if self.booleans:
            low, high = wilson_interval(round(self.total), n)
            return ScoreSummary("rate", n, self.total / n, low, high)
        mean = self.total / n
        if n == 1:
            return ScoreSummary("mean", 1, mean, math.nan, math.nan)
        sd = math.sqrt(max(0.0, (self.squares - n * mean * mean) / (n - 1)))
        half = t95(n - 1) * sd / math.sqrt(n)
        return ScoreSummary("mean", n, mean, mean - half, mean + half)


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


def summarize(records: Iterable[GameRecord]) -> list[ConditionSummary]:
    """One summary per condition, in order of first appearance. Games that ended in error are
    counted apart and left out of the success rate."""
    groups: dict[str, list[GameRecord]] = {}
    for record in records:
        groups.setdefault(record.spec.condition(), []).append(record)
    summaries = []
    for condition, group in groups.items():
        scored = [r for r in group if r.outcome != "error"]
        successes = sum(r.outcome == "success" for r in scored)
        low, high = wilson_interval(successes, len(scored))
        solved = [r.solved_turn for r in scored if r.solved_turn is not None]
        kinds: dict[str, int] = {}
        for r in group:
            if r.error is not None:
                kinds[r.error.kind] = kinds.get(r.error.kind, 0) + 1
        summaries.append(
            ConditionSummary(
                condition=condition,
                fields=group[0].spec.condition_fields(),
                games=len(group),
                successes=successes,
                failures=len(scored) - successes,
                errors=len(group) - len(scored),
                success_rate=successes / len(scored) if scored else 0.0,
                ci_low=low,
                ci_high=high,
                mean_solved_turn=sum(solved) / len(solved) if solved else None,
                scores=score_summaries(group),
                format_errors=sum(sum(r.format_errors.values()) for r in group),
                invalid_actions=sum(sum(r.invalid_actions.values()) for r in group),
                error_kinds=kinds,
            )
        )
    return summaries
