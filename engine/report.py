"""The numbers of a run's report, as pure functions over game records.

Conventions used throughout:

- A *condition* is a set of games with equal ``spec.condition_fields()``. The fields are named as
  there (puzzle, N, D, feedback, T, h, and one field per role), plus ``agents``: the roles' policies in
  one label ("X" when every role plays X, else "X / Y").
- Games that ended in an error say nothing about the agents: an infrastructure error
  (``error.kind == "infra_error"``, such as a failed API call) or any other game error is counted
  apart and left out of every rate, as in the runners' summary. A model's bad output is not a game
  error: it is a format error inside a scored game.
- Behaviour measures (actions per position, sizes per turn) use the games that ended without any
  error, since a game cut short by an error has an incomplete log.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from feedback.modes import MODES

from .records import GameRecord, decode_record
from .stats import Z95, wilson_interval

AGENTS = "agents"
INFRA_ERROR = "infra_error"
# Numeric fields sort as numbers; "full" history sorts last.
NUMERIC_FIELDS = ("N", "T", "h")

# Per-turn size measures: unit -> (TurnLog attribute of the whole reply, attribute of the message).
# A unit whose attributes are missing or None on every turn is simply absent from a run.
SIZE_UNITS: dict[str, tuple[str, str]] = {
    "chars": ("reply_chars", "message_chars"),
    "tokens": ("reply_tokens", "message_tokens"),  # model turns: provider's reply tokens, one tokenizer for messages
}


class ReportError(ValueError):
    """The input cannot be reported on as asked; the message is one line saying why."""


# ---------------------------------------------------------------------------------------------
# Reading


class Results(msgspec.Struct):
    """The games of a results file, one record per game id (the last one written), by game id."""

    records: list[GameRecord]
    lines: int  # complete, non-empty lines read
    truncated: bool  # the last line had no newline (a run still writing, or killed) and was skipped
    duplicates: int  # lines replaced by a later line of the same game id
    damaged: list[int]  # numbers of complete lines that could not be decoded (skipped)


def read_results(path: Path | str) -> Results:
    """Read a results.jsonl file, tolerating a cut-short last line, repeated game ids (the last
    record wins) and undecodable lines (skipped, their numbers kept)."""
    latest: dict[int, GameRecord] = {}
    lines = duplicates = 0
    damaged: list[int] = []
    truncated = False
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.endswith(b"\n"):
                truncated = bool(line.strip())
                break
            if not line.strip():
                continue
            lines += 1
            try:
                record = decode_record(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                damaged.append(number)
                continue
            if record.game_id in latest:
                duplicates += 1
            latest[record.game_id] = record
    return Results([latest[i] for i in sorted(latest)], lines, truncated, duplicates, damaged)


# ---------------------------------------------------------------------------------------------
# Fields and conditions


def agents_label(agents: dict[str, str]) -> str:
    names = list(agents.values())
    return names[0] if len(set(names)) == 1 else " / ".join(names)


def field_values(record: GameRecord) -> dict[str, str]:
    """The condition fields of a game, plus ``agents``."""
    values = record.spec.condition_fields()
    values[AGENTS] = agents_label(record.spec.agents)
    return values


def roles_of(records: Sequence[GameRecord]) -> list[str]:
    roles: dict[str, None] = {}
    for record in records:
        roles.update(dict.fromkeys(record.spec.agents))
    return list(roles)


def field_names(records: Sequence[GameRecord]) -> list[str]:
    """Every field a report can group by: the condition fields in their order, then ``agents``."""
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record.spec.condition_fields()))
    names[AGENTS] = None
    return list(names)


def observed_values(records: Sequence[GameRecord], field: str) -> list[str]:
    """The values a field takes in the run, in display order."""
    seen: dict[str, None] = {}
    for record in records:
        seen[field_values(record).get(field, "")] = None
    order = _value_order(records, [field])
    return sorted(seen, key=lambda v: _sort_key(field, v, order[field]))


class Layout(msgspec.Struct):
    """How a run's conditions are laid out in a table."""

    rows: list[str]  # fields that make the rows
    columns: list[str]  # the other fields that vary across the run
    fixed: dict[str, str]  # fields with one value in the whole run
    notes: list[str]  # fields left out because another field determines them


def layout(records: Sequence[GameRecord], rows: Sequence[str] = ()) -> Layout:
    """Rows are the given fields; columns are the remaining fields that vary in the run. The roles'
    fields are shown together as ``agents`` unless a role is asked for by name. A turn limit that
    follows the puzzle size (each N with one T, as with the default T = 2N) is not a column of its own."""
    names = field_names(records)
    unknown = [f for f in rows if f not in names]
    if unknown:
        raise ReportError(f"unknown field {unknown[0]!r}; fields: {', '.join(names)}")
    roles = roles_of(records)
    all_values = [field_values(r) for r in records]
    varying = [f for f in names if f != AGENTS and len({v.get(f) for v in all_values}) > 1]
    covered = set(rows)
    if AGENTS in covered:
        covered.update(roles)
    by_role = bool(set(rows) & set(roles))  # a role asked for by name: the others stay apart too
    columns: list[str] = []
    for field in varying:
        if field in covered:
            continue
        if field in roles and not by_role:
            if AGENTS not in columns:
                columns.append(AGENTS)
            continue
        columns.append(field)
    notes = []
    if "T" in columns and ("N" in columns or "N" in rows) and _determines(all_values, "N", "T"):
        columns.remove("T")
        pairs = sorted({(v["N"], v["T"]) for v in all_values}, key=lambda p: _number(p[0]))
        notes.append("T follows N: " + ", ".join(f"T={t} for N={n}" for n, t in pairs))
    fixed = {f: all_values[0][f] for f in names if f not in varying and f not in roles and f != AGENTS}
    if all_values and not set(varying) & set(roles):
        fixed[AGENTS] = all_values[0][AGENTS]
    fixed = {f: v for f, v in fixed.items() if f not in rows}
    return Layout(rows=list(rows), columns=columns, fixed=fixed, notes=notes)


def condition_fields(records: Sequence[GameRecord]) -> list[str]:
    """The fields that tell the run's conditions apart, for per-condition tables."""
    return layout(records).columns


Group = tuple[tuple[str, ...], list[GameRecord]]


def group_by(records: Sequence[GameRecord], fields: Sequence[str]) -> list[Group]:
    """The records grouped by the values of ``fields``, groups in display order."""
    groups: dict[tuple[str, ...], list[GameRecord]] = {}
    for record in records:
        values = field_values(record)
        groups.setdefault(tuple(values.get(f, "") for f in fields), []).append(record)
    order = _value_order(records, fields)
    return sorted(
        groups.items(),
        key=lambda item: tuple(_sort_key(f, v, order[f]) for f, v in zip(fields, item[0])),
    )


def _value_order(records: Sequence[GameRecord], fields: Sequence[str]) -> dict[str, dict[str, int]]:
    order: dict[str, dict[str, int]] = {f: {} for f in fields}
    for record in records:
        values = field_values(record)
        for f in fields:
            order[f].setdefault(values.get(f, ""), len(order[f]))
    return order


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.inf


def _sort_key(field: str, value: str, first_seen: dict[str, int]) -> tuple:
    if field in NUMERIC_FIELDS:
        return (_number(value), value)
    if field == "D":  # "0", then "3 in alice", "5 in alice", ..., "3 in bob", ...
        count, _, side = value.partition(" in ")
        return (side, _number(count))
    if field == "feedback" and value in MODES:
        return (list(MODES).index(value), value)
    return (first_seen.get(value, 0), value)


def _determines(all_values: list[dict[str, str]], source: str, target: str) -> bool:
    seen: dict[str, str] = {}
    for values in all_values:
        if seen.setdefault(values[source], values[target]) != values[target]:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Success


def is_infra_error(record: GameRecord) -> bool:
    return record.error is not None and record.error.kind == INFRA_ERROR


def completed(records: Iterable[GameRecord]) -> list[GameRecord]:
    """Games that ended without any error."""
    return [r for r in records if r.outcome != "error"]


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
    shape = layout(records, rows)
    cells = {}
    row_keys: dict[tuple[str, ...], None] = {}
    column_keys: dict[tuple[str, ...], None] = {}
    for key, group in group_by(records, shape.rows + shape.columns):
        row, column = key[: len(shape.rows)], key[len(shape.rows) :]
        cells[(row, column)] = success_cell(group)
    for key, _ in group_by(records, shape.rows):
        row_keys[key] = None
    for key, _ in group_by(records, shape.columns):
        column_keys[key] = None
    return SuccessTable(shape, list(row_keys), list(column_keys), cells)


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
    """Success as a function of one field (such as N), for one combination of the other fields."""

    key: tuple[str, ...]
    points: list[tuple[str, SuccessCell]]


def success_series(records: Sequence[GameRecord], x_field: str = "N") -> tuple[list[str], list[SuccessSeries]]:
    """The other varying fields (the series' key), and one series per combination of them."""
    shape = layout(records, [x_field])
    series = []
    for key, group in group_by(records, shape.columns):
        points = [(x[0], success_cell(g)) for x, g in group_by(group, [x_field])]
        series.append(SuccessSeries(key, points))
    return shape.columns, series


# ---------------------------------------------------------------------------------------------
# Behaviour


class ActionsRow(msgspec.Struct):
    key: tuple[str, ...]
    n: int  # games that ended without error
    mean: dict[str, float]  # role -> mean over games of actions per position


def actions_per_position(records: Sequence[GameRecord], fields: Sequence[str]) -> list[ActionsRow]:
    roles = roles_of(records)
    rows = []
    for key, group in group_by(records, fields):
        done = completed(group)
        mean = {}
        for role in roles:
            values = [r.actions_per_position[role] for r in done if role in r.actions_per_position]
            mean[role] = sum(values) / len(values) if values else math.nan
        rows.append(ActionsRow(key, len(done), mean))
    return rows


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
# Paired comparison


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
        cross = both * neither - first_only * second_only
        if cross > n / 2:
            cross -= n / 2
        elif cross > 0:
            cross = 0
        phi = cross / math.sqrt(margins)
    diff = p1 - p2
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    epsilon = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return (diff, max(-1.0, diff - delta), min(1.0, diff + epsilon))


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


def paired_comparison(records: Sequence[GameRecord], field: str, a: str, b: str) -> PairedComparison:
    """Success under ``field`` = b against ``field`` = a, on games paired by seed within each
    combination of the other condition fields. Pairs with a game error on either side are
    left out; a seed played more than once on one side is paired in game-id order."""
    names = field_names(records)
    if field not in names:
        raise ReportError(f"unknown field {field!r}; fields: {', '.join(names)}")
    if a == b:
        raise ReportError(f"the two values of {field} are the same ({a!r})")
    values = observed_values(records, field)
    for value in (a, b):
        if value not in values:
            raise ReportError(f"{field}={value} is not in the run; {field} takes {', '.join(values)}")
    roles = roles_of(records)
    left_out = {field} | (set(roles) if field == AGENTS else set()) | ({AGENTS} if field in roles else set())
    # A field the compared one determines (T = 2N when comparing N) differs with it: not a pairing key.
    all_values = [field_values(r) for r in records]
    left_out |= {f for f in names if f not in left_out and _determines(all_values, field, f)}
    pair_fields = [f for f in names if f not in left_out]
    shown = layout(records, [field]).columns

    sides: dict[tuple[str, ...], dict[str, list[GameRecord]]] = {}
    labels: dict[tuple[str, ...], tuple[str, ...]] = {}
    for record in records:
        v = field_values(record)
        if v.get(field) not in (a, b):
            continue
        key = tuple(v.get(f, "") for f in pair_fields)
        labels[key] = tuple(v.get(f, "") for f in shown)
        sides.setdefault(key, {a: [], b: []})[v[field]].append(record)

    rows = []
    for key, side in sides.items():
        by_seed: dict[int, tuple[list[GameRecord], list[GameRecord]]] = {}
        for record in side[a]:
            by_seed.setdefault(record.spec.seed, ([], []))[0].append(record)
        for record in side[b]:
            by_seed.setdefault(record.spec.seed, ([], []))[1].append(record)
        table = [0, 0, 0, 0]  # both, a only, b only, neither
        pairs = 0
        for first, second in by_seed.values():
            for ra, rb in zip(first, second):
                if ra.outcome == "error" or rb.outcome == "error":
                    continue
                sa, sb = ra.outcome == "success", rb.outcome == "success"
                table[0 if sa and sb else 1 if sa else 2 if sb else 3] += 1
                pairs += 1
        both, a_only, b_only, neither = table
        diff, low, high = paired_difference_interval(both, b_only, a_only, neither)
        unpaired = len(side[a]) + len(side[b]) - 2 * pairs
        rows.append(PairedRow(labels[key], pairs, both, a_only, b_only, neither, unpaired, diff, low, high))
    order = _value_order(records, shown)
    rows.sort(key=lambda row: tuple(_sort_key(f, v, order[f]) for f, v in zip(shown, row.key)))
    return PairedComparison(field, a, b, shown, rows)
