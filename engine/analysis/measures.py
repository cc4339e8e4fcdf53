"""What a report measures per condition: success (overall, by turn, against a size), the games'
scores, the size of what agents write, and errors."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import msgspec

from engine.records.record import GameRecord
from engine.records.record import INFRA_ERROR, is_infra_error
from engine.analysis.stats import Z95, ScoreSummary, score_summaries, wilson_interval
from engine.analysis.conditions import AGENTS, Layout, group_by, layout, roles_of, size_field

# Per-turn size measures: unit -> (TurnLog attribute of the whole reply, attribute of the message).
# A unit whose attributes are missing or None on every turn is simply absent from a run.
SIZE_UNITS: dict[str, tuple[str, str]] = {
    "chars": ("reply_chars", "message_chars"),
    "tokens": ("reply_tokens", "message_tokens"),  # model turns: provider's reply tokens, one tokenizer for messages
}


def completed(records: Iterable[GameRecord]) -> list[GameRecord]:
    """Games that ended without any error."""
    return [r for r in records if r.outcome != "error"]


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


def success_cell(records: Sequence[GameRecord], z: float = Z95) -> SuccessCell:
    infra = sum(is_infra_error(r) for r in records)
    errors = sum(r.outcome == "error" for r in records)
    n = len(records) - errors
    successes = sum(r.outcome == "success" for r in records)
    low, high = wilson_interval(successes, n, z)
    return SuccessCell(len(records), errors, infra, n, successes, low, high)


class SuccessTable(msgspec.Struct):
    layout: Layout
    row_keys: list[tuple[str, ...]]
    column_keys: list[tuple[str, ...]]
    cells: dict[tuple[tuple[str, ...], tuple[str, ...]], SuccessCell]

    def cell(self, row: tuple[str, ...], column: tuple[str, ...]) -> SuccessCell | None:
        return self.cells.get((row, column))


def success_table(records: Sequence[GameRecord], rows: Sequence[str] = (AGENTS,)) -> SuccessTable:
    """Success per cell in the papers' layout: one row per value of ``rows``, one column per
    combination of the other fields that vary across the run."""
    frame = layout(records, rows)
    cells = {}
    for key, group in group_by(records, frame.rows + frame.columns):
        row, column = key[: len(frame.rows)], key[len(frame.rows) :]
        cells[(row, column)] = success_cell(group)
    row_keys = [key for key, _ in group_by(records, frame.rows)]
    column_keys = [key for key, _ in group_by(records, frame.columns)]
    return SuccessTable(frame, row_keys, column_keys, cells)


class TurnCurve(msgspec.Struct):
    """Games solved within K turns, for K = 1 .. the largest turn limit of the run."""

    key: tuple[str, ...]
    n: int
    solved_by: list[int]  # solved_by[K - 1]: games solved at turn K or earlier

    @property
    def rates(self) -> list[float | None]:
        return [s / self.n if self.n else None for s in self.solved_by]


def success_by_turn(records: Sequence[GameRecord], fields: Sequence[str]) -> list[TurnCurve]:
    max_turn = max((r.spec.max_turns for r in records), default=0)
    curves = []
    for key, group in group_by(records, fields):
        scored = completed(group)
        counts = [0] * (max_turn + 1)
        for r in scored:
            if r.outcome == "success" and r.solved_turn is not None and 1 <= r.solved_turn <= max_turn:
                counts[r.solved_turn] += 1
        solved_by, total = [], 0
        for k in range(1, max_turn + 1):
            total += counts[k]
            solved_by.append(total)
        curves.append(TurnCurve(key, len(scored), solved_by))
    return curves


class SuccessSeries(msgspec.Struct):
    """Success as a function of one field (such as a size), for one combination of the other fields."""

    key: tuple[str, ...]
    points: list[tuple[str, SuccessCell]]


def success_series(records: Sequence[GameRecord], x_field: str | None = None) -> tuple[list[str], list[SuccessSeries]]:
    """Success against ``x_field`` (by default ``size_field``): the other varying fields (the
    series' key), and one series per combination of them."""
    x_field = x_field or size_field(records)
    if x_field is None:
        raise ValueError("no numeric game label varies in the run")
    frame = layout(records, [x_field])
    series = []
    for key, group in group_by(records, frame.columns):
        points = [(x[0], success_cell(g)) for x, g in group_by(group, [x_field])]
        series.append(SuccessSeries(key, points))
    return frame.columns, series


# ---------------------------------------------------------------------------------------------
# Scores


class ScoresRow(msgspec.Struct):
    key: tuple[str, ...]
    n: int  # games that ended without error
    scores: dict[str, ScoreSummary]  # every score of the run; missing where no game of the row has it


def score_keys(records: Sequence[GameRecord]) -> dict[str, str]:
    """Every score the games that ended without error give, in first-seen order, with its kind over
    the whole run: "rate" (a boolean score) or "mean"."""
    return {key: summary.kind for key, summary in score_summaries(records).items()}


def scores_per_condition(records: Sequence[GameRecord], fields: Sequence[str]) -> list[ScoresRow]:
    """Each score per condition, over the games that ended without error: booleans as rates with
    Wilson intervals, numbers as means with 95% t intervals cut to the values' range
    (``engine.analysis.stats.score_summaries``)."""
    return [ScoresRow(key, len(completed(group)), score_summaries(group)) for key, group in group_by(records, fields)]


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


def size_units(records: Sequence[GameRecord]) -> list[str]:
    """The units of SIZE_UNITS that the run's turn logs record; characters always."""
    present = []
    for unit, (reply, message) in SIZE_UNITS.items():
        if unit == "chars" or any(
            getattr(t, reply, None) is not None and getattr(t, message, None) is not None
            for r in records
            for t in r.turn_log
        ):
            present.append(unit)
    return present


def sizes_per_turn(records: Sequence[GameRecord], fields: Sequence[str], unit: str = "chars") -> list[SizesRow]:
    """Mean size of each role's reply and message per turn, pooled over the turns of a condition."""
    reply_attr, message_attr = SIZE_UNITS[unit]
    roles = roles_of(records)
    rows = []
    for key, group in group_by(records, fields):
        done = completed(group)
        sums = {role: [0, 0, 0] for role in roles}  # turns, reply, message
        for record in done:
            for entry in record.turn_log:
                reply, message = getattr(entry, reply_attr, None), getattr(entry, message_attr, None)
                if reply is None or message is None or entry.role not in sums:
                    continue
                s = sums[entry.role]
                s[0] += 1
                s[1] += reply
                s[2] += message
        sizes = {
            role: TurnSizes(t, r / t if t else math.nan, m / t if t else math.nan)
            for role, (t, r, m) in sums.items()
        }
        rows.append(SizesRow(key, len(done), sizes))
    return rows


# ---------------------------------------------------------------------------------------------
# Errors


class ErrorsRow(msgspec.Struct):
    key: tuple[str, ...]
    games: int
    format_errors: dict[str, int]  # role -> total over the games
    invalid_actions: dict[str, int]
    infra_errors: int  # games
    other_errors: int  # games that ended in any other error
    other_kinds: dict[str, int]  # kind -> games


def error_counts(records: Sequence[GameRecord], fields: Sequence[str]) -> list[ErrorsRow]:
    roles = roles_of(records)
    rows = []
    for key, group in group_by(records, fields):
        kinds: dict[str, int] = {}
        for r in group:
            if r.outcome == "error" or r.error is not None:
                kind = r.error.kind if r.error is not None else "unknown"
                kinds[kind] = kinds.get(kind, 0) + 1
        infra = kinds.pop(INFRA_ERROR, 0)
        rows.append(
            ErrorsRow(
                key=key,
                games=len(group),
                format_errors={role: sum(r.format_errors.get(role, 0) for r in group) for role in roles},
                invalid_actions={role: sum(r.invalid_actions.get(role, 0) for r in group) for role in roles},
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


def usage_per_condition(records: Sequence[GameRecord], fields: Sequence[str]) -> list[UsageRow]:
    """Per condition, the model calls of every game, their tokens and cost; [] when no model played."""
    if not any(r.usage for r in records):
        return []
    rows = []
    for key, group in group_by(records, fields):
        usages = [u for r in group for u in (r.usage or {}).values()]
        rows.append(UsageRow(
            key=key, games=len(group), successes=sum(r.outcome == "success" for r in group),
            calls=sum(u.calls for u in usages), prompt_tokens=sum(u.prompt_tokens for u in usages),
            completion_tokens=sum(u.completion_tokens for u in usages),
            cost=None if any(u.cost_usd is None for u in usages) else sum(u.cost_usd for u in usages),
        ))
    return rows
