"""What a report measures per condition: success (overall, by turn, against a size), the games'
scores, the size of what agents write, errors, and model calls.

Each measure is worked out from the run's totals (``engine.analysis.totals``): the conditions of a
group are added up, never the records. Every function also takes a list of records, folded first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import msgspec

from engine.records.record import INFRA_ERROR
from engine.analysis.stats import Z95, ScoreSummary, wilson_interval
from engine.analysis.conditions import AGENTS, Layout, group_by, layout, roles_of, size_field
from engine.analysis.totals import SIZE_UNITS, ConditionTotals, Source, combined_scores, summed, totals_of


# ---------------------------------------------------------------------------------------------
# Success


class SuccessCell(msgspec.Struct, frozen=True):
    """Success among the games of one cell. ``n`` leaves out the games that ended in an error."""

    games: int
    errors: int  # games that ended in an error, infrastructure or other
    infra_errors: int
    n: int
    successes: int
    low: float  # Wilson 95% interval, as fractions
    high: float

    @property
    def rate(self) -> float | None:
        return self.successes / self.n if self.n else None


def success_cell(group: Sequence[ConditionTotals], z: float = Z95) -> SuccessCell:
    """Success over the games of a group of conditions."""
    games = sum(c.games for c in group)
    errors = sum(c.errors for c in group)
    successes = sum(c.successes for c in group)
    low, high = wilson_interval(successes, games - errors, z)
    return SuccessCell(games, errors, sum(c.infra for c in group), games - errors, successes, low, high)


class SuccessTable(msgspec.Struct):
    layout: Layout
    row_keys: list[tuple[str, ...]]
    column_keys: list[tuple[str, ...]]
    cells: dict[tuple[tuple[str, ...], tuple[str, ...]], SuccessCell]

    def cell(self, row: tuple[str, ...], column: tuple[str, ...]) -> SuccessCell | None:
        return self.cells.get((row, column))


def success_table(source: Source, rows: Sequence[str] = (AGENTS,)) -> SuccessTable:
    """Success per cell in the papers' layout: one row per value of ``rows``, one column per
    combination of the other fields that vary across the run."""
    run = totals_of(source)
    frame = layout(run, rows)
    cells = {}
    for key, group in group_by(run, frame.rows + frame.columns):
        row, column = key[: len(frame.rows)], key[len(frame.rows) :]
        cells[(row, column)] = success_cell(group)
    row_keys = [key for key, _ in group_by(run, frame.rows)]
    column_keys = [key for key, _ in group_by(run, frame.columns)]
    return SuccessTable(frame, row_keys, column_keys, cells)


class TurnCurve(msgspec.Struct):
    """Games solved within K turns, for K = 1 .. the largest turn limit of the run."""

    key: tuple[str, ...]
    n: int
    solved_by: list[int]  # solved_by[K - 1]: games solved at turn K or earlier

    @property
    def rates(self) -> list[float | None]:
        return [s / self.n if self.n else None for s in self.solved_by]


def success_by_turn(source: Source, fields: Sequence[str]) -> list[TurnCurve]:
    run = totals_of(source)
    max_turn = max((c.max_turns for c in run.conditions), default=0)
    curves = []
    for key, group in group_by(run, fields):
        solved = summed(c.solved for c in group)
        solved_by = list(itertools.accumulate(solved.get(k, 0) for k in range(1, max_turn + 1)))
        curves.append(TurnCurve(key, sum(c.games - c.errors for c in group), solved_by))
    return curves


class SuccessSeries(msgspec.Struct):
    """Success as a function of one field (such as a size), for one combination of the other fields."""

    key: tuple[str, ...]
    points: list[tuple[str, SuccessCell]]


def success_series(source: Source, x_field: str | None = None) -> tuple[list[str], list[SuccessSeries]]:
    """Success against ``x_field`` (by default ``size_field``): the other varying fields (the
    series' key), and one series per combination of them."""
    run = totals_of(source)
    x_field = x_field or size_field(run)
    if x_field is None:
        raise ValueError("no numeric game label varies in the run")
    frame = layout(run, [x_field])
    series = [
        SuccessSeries(key, [(x[0], success_cell(g)) for x, g in group_by(group, [x_field])])
        for key, group in group_by(run, frame.columns)
    ]
    return frame.columns, series


# ---------------------------------------------------------------------------------------------
# Scores


class ScoresRow(msgspec.Struct):
    key: tuple[str, ...]
    n: int  # games that ended without error
    scores: dict[str, ScoreSummary]  # every score of the run; missing where no game of the row has it


def score_keys(source: Source) -> dict[str, str]:
    """Every score the games that ended without error give, in first-seen order, with its kind over
    the whole run: "rate" (a boolean score) or "mean"."""
    return {key: "rate" if booleans else "mean" for key, booleans in totals_of(source).score_kinds.items()}


def scores_per_condition(source: Source, fields: Sequence[str]) -> list[ScoresRow]:
    """Each score per condition, over the games that ended without error: booleans as rates with
    Wilson intervals, numbers as means with 95% t intervals (cut to the values' range from 8 values on)
    (``engine.analysis.stats.ScoreTally``)."""
    rows = []
    for key, group in group_by(totals_of(source), fields):
        scores = {name: tally.summary() for name, tally in combined_scores(group).items()}
        rows.append(ScoresRow(key, sum(c.games - c.errors for c in group), scores))
    return rows


# ---------------------------------------------------------------------------------------------
# Sizes of what agents write


class TurnSizes(msgspec.Struct):
    turns: int
    reply: float  # mean size of the whole reply per turn
    message: float  # mean size of the message alone per turn

    @property
    def share(self) -> float:
        """The message's share of the reply: mean message / mean reply, as in the papers."""
        return self.message / self.reply if self.reply else math.nan


class SizesRow(msgspec.Struct):
    key: tuple[str, ...]
    n: int  # games that ended without error
    roles: dict[str, TurnSizes]


def size_units(source: Source) -> list[str]:
    """The units of SIZE_UNITS that the run's turn logs record; characters always."""
    present = totals_of(source).units
    return [unit for unit in SIZE_UNITS if unit in present]


def sizes_per_turn(source: Source, fields: Sequence[str], unit: str = "chars") -> list[SizesRow]:
    """Mean size of each role's reply and message per turn, pooled over the turns of a condition."""
    run = totals_of(source)
    roles = roles_of(run)
    rows = []
    for key, group in group_by(run, fields):
        sums = {role: [0, 0, 0] for role in roles}  # turns, reply, message
        for condition in group:
            for role, counts in condition.sizes[unit].items():
                if role in sums:
                    sums[role] = [a + b for a, b in zip(sums[role], counts)]
        sizes = {
            role: TurnSizes(t, r / t if t else math.nan, m / t if t else math.nan)
            for role, (t, r, m) in sums.items()
        }
        rows.append(SizesRow(key, sum(c.games - c.errors for c in group), sizes))
    return rows


# ---------------------------------------------------------------------------------------------
# Errors


class ErrorsRow(msgspec.Struct):
    key: tuple[str, ...]
    games: int
    format_errors: dict[str, int]  # role -> total over the games
    cut_replies: dict[str, int]  # role -> unreadable replies the run's token limit cut, over the games
    invalid_actions: dict[str, int]
    infra_errors: int  # games
    other_errors: int  # games that ended in any other error
    other_kinds: dict[str, int]  # kind -> games


def error_counts(source: Source, fields: Sequence[str]) -> list[ErrorsRow]:
    run = totals_of(source)
    roles = roles_of(run)
    rows = []
    for key, group in group_by(run, fields):
        kinds = summed(c.error_kinds for c in group)
        infra = kinds.pop(INFRA_ERROR, 0)
        format_errors, invalid = summed(c.format_errors for c in group), summed(c.invalid_actions for c in group)
        cut = summed(c.cut_replies for c in group)
        rows.append(
            ErrorsRow(
                key=key,
                games=sum(c.games for c in group),
                format_errors={role: format_errors.get(role, 0) for role in roles},
                cut_replies={role: cut.get(role, 0) for role in roles},
                invalid_actions={role: invalid.get(role, 0) for role in roles},
                infra_errors=infra,
                other_errors=sum(kinds.values()),
                other_kinds=dict(sorted(kinds.items())),
            )
        )
    return rows


# ---------------------------------------------------------------------------------------------
# Model calls and what they cost


class UsageRow(msgspec.Struct):
    key: tuple[str, ...]
    games: int  # every game of the condition, errors included: their calls were paid too
    successes: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # None if a call had no price

    @property
    def cost_per_success(self) -> float | None:
        return self.cost / self.successes if self.cost is not None and self.successes else None


def usage_per_condition(source: Source, fields: Sequence[str]) -> list[UsageRow]:
    """Per condition, the model calls of every game, their tokens and cost; [] when no model played."""
    run = totals_of(source)
    if not run.usage:
        return []
    rows = []
    for key, group in group_by(run, fields):
        cost: float | None = None if any(c.unpriced for c in group) else group[0].cost
        for condition in group[1:]:
            cost = None if cost is None else cost + condition.cost
        rows.append(UsageRow(
            key=key, games=sum(c.games for c in group), successes=sum(c.successes for c in group),
            calls=sum(c.calls for c in group), prompt_tokens=sum(c.prompt_tokens for c in group),
            completion_tokens=sum(c.completion_tokens for c in group), cost=cost,
        ))
    return rows
