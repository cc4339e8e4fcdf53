"""The fields of a run's conditions: their values per game, their display order, the table layout.

Everything here is worked out from the run's conditions, one ``Condition`` each (its fields' values
and the spec of its first game, which stands for all of them), never from the games: a report of a
million games has a handful. Functions take the conditions (``engine.analysis.totals.RunTotals``, or
a list of ``Condition``) or, for callers that hold them, the records themselves (``conditions_of``).
The conditions are in the order of their first game, so that "first appearance" among them is first
appearance among the games.

Values sort in this order: the turn limit ``T`` and the history ``h`` as numbers ("full" last); the
game's own labels with the game's ``sort_keys``; feedback modes in the order of the game's
``feedback`` table; anything else in order of first appearance. Where a run mixes games, a field's
order is the one of the first game that knows the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, Union

import msgspec

from puzzles import get_game

from engine.plan.spec import GameSpec
from engine.records.record import GameRecord

AGENTS = "agents"
FEEDBACK = "feedback"
TURN_LIMIT = "T"
# Engine options whose values sort as numbers; anything that is not a number ("full") sorts last.
NUMERIC_OPTIONS = (TURN_LIMIT, "h")


class ReportError(ValueError):
    """The input cannot be reported on as asked; the message is one line saying why."""


def agents_label(agents: dict[str, str]) -> str:
    names = list(agents.values())
    return names[0] if len(set(names)) == 1 else " / ".join(names)


def field_values(record: GameRecord) -> dict[str, str]:
    """The condition fields of a game, plus ``agents``."""
    values = record.spec.condition_fields()
    values[AGENTS] = agents_label(record.spec.agents)
    return values


class Condition:
    """One condition of a run: the values of its fields (``field_values``), the spec of its first
    game (which stands for every game of the condition: they differ only in game id and seed) and
    that game's id."""

    __slots__ = ("values", "spec", "first_id")

    def __init__(self, values: dict[str, str], spec: GameSpec, first_id: int) -> None:
        self.values = values
        self.spec = spec
        self.first_id = first_id


class HasConditions(Protocol):
    """A run's conditions, such as ``RunTotals``."""

    @property
    def conditions(self) -> Sequence[Condition]: ...


# What the functions here take: a run's conditions, a list of conditions, or game records.
Source = Union[HasConditions, Sequence[Condition], Sequence[GameRecord]]


def conditions_of(source: Source) -> list[Condition]:
    """The conditions of ``source``, in the order of their first game."""
    if not isinstance(source, Sequence):
        return list(source.conditions)
    conditions = [item for item in source if isinstance(item, Condition)]
    if len(conditions) == len(source):
        return conditions
    found: dict[tuple[tuple[str, str], ...], Condition] = {}
    for record in source:
        if not isinstance(record, GameRecord):
            continue
        values = field_values(record)
        key = tuple(values.items())
        if key not in found:
            found[key] = Condition(values, record.spec, record.game_id)
    return list(found.values())


def roles_of(source: Source) -> list[str]:
    return list(dict.fromkeys(role for condition in conditions_of(source) for role in condition.spec.agents))


def field_names(source: Source) -> list[str]:
    """Every field a report can group by: the condition fields in their order, then ``agents``."""
    names = dict.fromkeys(name for condition in conditions_of(source) for name in condition.spec.condition_fields())
    return list(names | {AGENTS: None})


def label_fields(source: Source) -> list[str]:
    """The fields the games' parameters make (their ``labels()``), in first-seen order."""
    return list(dict.fromkeys(name for condition in conditions_of(source) for name in condition.spec.params.labels()))


def number(text: str) -> float:
    """A label as a number; infinity when it is not one (so "full" sorts last)."""
    try:
        return float(text)
    except ValueError:
        return math.inf


# ---------------------------------------------------------------------------------------------
# Display order


SortKey = Callable[[str], Any]


def _field_sort_key(spec: GameSpec, field: str) -> SortKey | None:
    """How ``field`` sorts according to the game of ``spec``; None if the game has no say."""
    if field in NUMERIC_OPTIONS:
        return lambda value: (number(value), value)
    game = get_game(spec.game)
    if field == FEEDBACK:
        modes = {mode: i for i, mode in enumerate(game.rules.feedback)}
        return lambda value: (modes.get(value, len(modes)), value)
    if field in game.records.sort_keys and field in spec.params.labels():
        return game.records.sort_keys[field]
    return None


class ValueOrder:
    """The display order of the values of some fields over a set of games."""

    def __init__(self, source: Source, fields: Sequence[str]) -> None:
        self.first_seen: dict[str, dict[str, int]] = {f: {} for f in fields}
        self.keys: dict[str, SortKey] = {}
        asked: set[tuple[str, str]] = set()  # (game, field) pairs already looked up
        for condition in conditions_of(source):
            values, spec = condition.values, condition.spec
            for f in fields:
                self.first_seen[f].setdefault(values.get(f, ""), len(self.first_seen[f]))
                if f not in self.keys and (spec.game, f) not in asked:
                    asked.add((spec.game, f))
                    key = _field_sort_key(spec, f)
                    if key is not None:
                        self.keys[f] = key

    def key(self, field: str, value: str) -> tuple:
        """Values of a field with a sort key sort by it (ties by first appearance); others by first appearance."""
        seen = self.first_seen.get(field, {}).get(value, 0)
        if field in self.keys:
            return (0, self.keys[field](value), seen)
        return (1, seen, value)

    def keys_of(self, fields: Sequence[str], values: Sequence[str]) -> tuple:
        return tuple(self.key(f, v) for f, v in zip(fields, values))


def observed_values(source: Source, field: str) -> list[str]:
    """The values a field takes in the run, in display order."""
    order = ValueOrder(source, [field])
    return sorted(order.first_seen[field], key=lambda v: order.key(field, v))


Group = tuple[tuple[str, ...], list[Any]]


def group_by(source: Source, fields: Sequence[str]) -> list[Group]:
    """The conditions grouped by the values of ``fields`` (each group in the order of their first
    games), groups in display order. Given a list of conditions of a subclass (such as
    ``ConditionTotals``), the groups hold those."""
    conditions = conditions_of(source)
    groups: dict[tuple[str, ...], list[Any]] = {}
    for condition in conditions:
        groups.setdefault(tuple(condition.values.get(f, "") for f in fields), []).append(condition)
    order = ValueOrder(conditions, fields)
    return sorted(groups.items(), key=lambda item: order.keys_of(fields, item[0]))


def values_of(source: Source) -> list[dict[str, str]]:
    """The field values of each condition."""
    return [condition.values for condition in conditions_of(source)]


def determines(all_values: Iterable[dict[str, str]], source: str, target: str) -> bool:
    """Each value of ``source`` goes with one value of ``target`` in every game."""
    seen: dict[str, str] = {}
    return all(seen.setdefault(values.get(source, ""), values.get(target, "")) == values.get(target, "") for values in all_values)


def size_field(source: Source) -> str | None:
    """The first of the games' own labels that varies in the run and is a number in every game
    (such as a puzzle size); None if there is none."""
    all_values = values_of(source)
    for field in label_fields(source):
        seen = {v.get(field, "") for v in all_values}
        if len(seen) > 1 and all(math.isfinite(number(s)) for s in seen):
            return field
    return None


# ---------------------------------------------------------------------------------------------
# Layout


class Layout(msgspec.Struct):
    """How a run's conditions are laid out in a table."""

    rows: list[str]  # fields that make the rows
    columns: list[str]  # the other fields that vary across the run
    fixed: dict[str, str]  # fields with one value in the whole run
    notes: list[str]  # fields left out because another field determines them


def layout(run: Source, rows: Sequence[str] = ()) -> Layout:
    """Rows are the given fields; columns are the remaining fields that vary in the run. The roles'
    fields are shown together as ``agents`` unless a role is asked for by name. A turn limit that
    follows one of the game's labels shown in the table (each size with one T, as when the game's
    default turn limit grows with the size) is not a column of its own."""
    conditions = conditions_of(run)
    names = field_names(conditions)
    unknown = [f for f in rows if f not in names]
    if unknown:
        raise ReportError(f"unknown field {unknown[0]!r}; fields: {', '.join(names)}")
    roles = roles_of(conditions)
    all_values = values_of(conditions)
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
    if TURN_LIMIT in columns:
        shown = [f for f in label_fields(conditions) if f in varying and (f in columns or f in rows)]
        source = next((f for f in shown if determines(all_values, f, TURN_LIMIT)), None)
        if source is not None:
            columns.remove(TURN_LIMIT)
            order = ValueOrder(conditions, [source])
            pairs = sorted({(v[source], v[TURN_LIMIT]) for v in all_values}, key=lambda p: order.key(source, p[0]))
            notes.append(f"T follows {source}: " + ", ".join(f"T={t} for {source}={s}" for s, t in pairs))
    fixed = {f: all_values[0][f] for f in names if f not in varying and f not in roles and f != AGENTS}
    if all_values and not set(varying) & set(roles):
        fixed[AGENTS] = all_values[0][AGENTS]
    fixed = {f: v for f, v in fixed.items() if f not in rows}
    return Layout(rows=list(rows), columns=columns, fixed=fixed, notes=notes)


def condition_fields(source: Source) -> list[str]:
    """The fields that tell the run's conditions apart, for per-condition tables."""
    return layout(source).columns
