"""Paired comparison of two values of one field: games paired by seed, success compared by
Newcombe's interval for the difference of paired proportions and McNemar's exact test.

The seeds and outcomes come from the run's totals, which keep them, in compact arrays, for the games
of the two compared values only (``RunTotals(compare=...)``). The games of a run's grid play every
condition's seeds in one order, so two sides are paired game by game in that order, with no memory of
their own; sides whose seeds come in other orders are paired through a dict of one side's seeds.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence

import msgspec

from engine.analysis.stats import Z95, wilson_interval
from engine.analysis.conditions import AGENTS, ReportError, ValueOrder, determines, field_names, layout, observed_values, roles_of, values_of
from engine.analysis.totals import ConditionTotals, Source, totals_of


def paired_difference_interval(
    both: int, first_only: int, second_only: int, neither: int, z: float = Z95
) -> tuple[float, float, float]:
    """The difference p1 - p2 of two proportions measured on the same pairs, and its confidence
    interval by Newcombe's hybrid score method (Newcombe 1998, method 10).

    ``both``, ``first_only``, ``second_only`` and ``neither`` count the pairs by outcome: success
    under both, under the first only, under the second only, under neither; p1 = (both +
    first_only) / n and p2 = (both + second_only) / n. The interval combines the Wilson intervals of
    p1 and p2, corrected for the correlation phi of the 2x2 table of pair outcomes; a positive
    cross-product ``both * neither - first_only * second_only`` is reduced by n/2 (to no less than 0)
    before phi is formed, and phi is 0 when a margin of the table is empty.
    Returns (difference, low, high), all fractions.
    """
    counts = (both, first_only, second_only, neither)
    if min(counts) < 0:
        raise ValueError(f"pair counts must not be negative, got {counts}")
    n = sum(counts)
    if n == 0:
        return (0.0, -1.0, 1.0)
    x1, x2 = both + first_only, both + second_only
    p1, p2 = x1 / n, x2 / n
    l1, u1 = wilson_interval(x1, n, z)
    l2, u2 = wilson_interval(x2, n, z)
    margins = x1 * (n - x1) * x2 * (n - x2)
    phi = 0.0
    if margins:
        cross: float = both * neither - first_only * second_only
        if cross > n / 2:
            cross -= n / 2
        elif cross > 0:
            cross = 0
        phi = cross / math.sqrt(margins)
    diff = p1 - p2
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    epsilon = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return (diff, max(-1.0, diff - delta), min(1.0, diff + epsilon))


def mcnemar_exact(first_only: int, second_only: int) -> float:
    """McNemar's exact test: the two-sided p-value of the discordant pairs (success under one
    condition only), which under no difference split as a fair coin does (binomial, p = 1/2).
    Twice the smaller tail, at most 1; 1 when no pair is discordant. Exact integer sums (math.comb)."""
    if first_only < 0 or second_only < 0:
        raise ValueError(f"pair counts must not be negative, got {(first_only, second_only)}")
    n = first_only + second_only
    tail = sum(math.comb(n, i) for i in range(min(first_only, second_only) + 1))
    return min(1.0, 2 * tail / 2**n)


class PairedRow(msgspec.Struct):
    key: tuple[str, ...]  # values of PairedComparison.fields
    pairs: int
    both: int
    a_only: int
    b_only: int
    neither: int
    unpaired: int  # games of A or B left out: no partner with the same seed, or a game error on either side
    difference: float  # success rate of B minus that of A, over the pairs
    low: float
    high: float
    p_value: float = 1.0  # McNemar's exact test of a_only against b_only

    @property
    def rate_a(self) -> float | None:
        return (self.both + self.a_only) / self.pairs if self.pairs else None

    @property
    def rate_b(self) -> float | None:
        return (self.both + self.b_only) / self.pairs if self.pairs else None


class PairedComparison(msgspec.Struct):
    field: str
    a: str
    b: str
    fields: list[str]  # fields that tell the groups apart
    rows: list[PairedRow]


def paired_comparison(source: Source, field: str, a: str, b: str) -> PairedComparison:
    """Success under ``field`` = b against ``field`` = a, on games paired by seed within each
    combination of the other condition fields. Pairs with a game error on either side are
    left out; a seed played more than once on one side is paired in game-id order. Run totals must
    have been made with ``compare=(field, a, b)``."""
    run = totals_of(source, compare=(field, a, b))
    names = field_names(run)
    if field not in names:
        raise ReportError(f"unknown field {field!r}; fields: {', '.join(names)}")
    if a == b:
        raise ReportError(f"the two values of {field} are the same ({a!r})")
    values = observed_values(run, field)
    for value in (a, b):
        if value not in values:
            raise ReportError(f"{field}={value} is not in the run; {field} takes {', '.join(values)}")
    if run.compare != (field, a, b):
        raise ValueError(f"these totals keep the seeds of {run.compare}, not of {(field, a, b)}")
    roles = roles_of(run)
    left_out = {field} | (set(roles) if field == AGENTS else set()) | ({AGENTS} if field in roles else set())
    # A field the compared one determines (T = 2N when comparing N) differs with it: not a pairing key.
    all_values = values_of(run)
    left_out |= {f for f in names if f not in left_out and determines(all_values, field, f)}
    pair_fields = [f for f in names if f not in left_out]
    shown = layout(run, [field]).columns

    sides: dict[tuple[str, ...], dict[str, list[ConditionTotals]]] = {}
    labels: dict[tuple[str, ...], tuple[str, ...]] = {}
    for condition in run.conditions:
        v = condition.values
        if v.get(field) not in (a, b):
            continue
        key = tuple(v.get(f, "") for f in pair_fields)
        labels[key] = tuple(v.get(f, "") for f in shown)
        sides.setdefault(key, {a: [], b: []})[v[field]].append(condition)

    rows = []
    for key, side in sides.items():
        first, second = _games(side[a]), _games(side[b])
        both, a_only, b_only, neither = table = _paired(first, second)
        pairs = sum(table)
        diff, low, high = paired_difference_interval(both, b_only, a_only, neither)
        unpaired = len(first[0]) + len(second[0]) - 2 * pairs
        p_value = mcnemar_exact(a_only, b_only)
        rows.append(PairedRow(labels[key], pairs, both, a_only, b_only, neither, unpaired, diff, low, high, p_value))
    order = ValueOrder(run, shown)
    rows.sort(key=lambda row: order.keys_of(shown, row.key))
    return PairedComparison(field, a, b, shown, rows)


Games = tuple[Sequence[int], Sequence[int]]  # seeds, and outcomes (0 success, 1 failure, 2 error), in game-id order


def _games(conditions: Sequence[ConditionTotals]) -> Games:
    """The seeds and outcomes of one side's games, in game-id order."""
    kept = [c.seeds for c in conditions if c.seeds is not None]
    if len(kept) == 1:
        return kept[0].seeds, kept[0].outcomes
    merged = list(heapq.merge(*(zip(k.ids, k.seeds, k.outcomes) for k in kept)))
    return [seed for _, seed, _ in merged], [outcome for _, _, outcome in merged]


def _paired(first: Games, second: Games) -> list[int]:
    """Pairs by outcome (both, first only, second only, neither): the k-th game of a seed on one side
    with the k-th of that seed on the other, pairs with an error on either side left out."""
    (seeds_a, outcomes_a), (seeds_b, outcomes_b) = first, second
    n = min(len(seeds_a), len(seeds_b))
    if seeds_a[:n] == seeds_b[:n]:  # one order of seeds on both sides: the k-th games are at one place
        matches: Iterator[tuple[int, int]] = zip(outcomes_a[:n], outcomes_b[:n])
    else:
        places: dict[int, list[int]] = {}
        for i, seed in enumerate(seeds_a):
            places.setdefault(seed, []).append(i)
        found = []
        for j, seed in enumerate(seeds_b):
            if places.get(seed):  # the first game of the seed on the first side not yet paired
                found.append((outcomes_a[places[seed].pop(0)], outcomes_b[j]))
        matches = iter(found)
    table = [0, 0, 0, 0]  # both, first only, second only, neither
    for oa, ob in matches:
        if oa == 2 or ob == 2:
            continue
        table[0 if oa == ob == 0 else 1 if oa == 0 else 2 if ob == 0 else 3] += 1
    return table
