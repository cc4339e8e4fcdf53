"""The building blocks of the report's tables: the ``Table`` (text for the terminal and documents,
the same numbers in full for the CSV files), how numbers and conditions are written in its cells,
and the label columns every table starts with."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from engine.analysis import AGENTS, ScoreSummary, Source, conditions_of, group_by, layout, totals_of
from puzzles import get_game

UNIT_NAMES = {"chars": "characters", "tokens": "tokens"}
# Fields whose values name themselves in a column header; others are shown as field=value.
SELF_NAMED = (AGENTS, "feedback")


@dataclass
class Table:
    name: str  # file stem of its CSV
    title: str
    header: list[str]
    rows: list[list[str]]
    labels: int  # leading label columns (left-aligned)
    note: str = ""
    csv_header: list[str] = field(default_factory=list)
    csv_rows: list[list[object]] = field(default_factory=list)
    thin_from: int = 0  # when > 0, the columns from here on may be thinned out on the terminal


def pct(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{100 * x:.1f}"


def num(x: float, digits: int = 2) -> str:
    return "-" if math.isnan(x) else f"{x:.{digits}f}"


def frac(x: float | None) -> object:
    """A fraction (or a mean) for the CSV files: four decimals, empty when undefined."""
    return "" if x is None or math.isnan(x) else round(x, 4)


def p_text(p: float) -> str:
    """A p-value to three decimals, "<0.001" below that."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def p_csv(p: float) -> float:
    """A p-value for the CSV files: four significant digits, so that a small one is not written 0."""
    return float(f"{p:.4g}")


# How the report states the interval of a mean (``engine.analysis.stats.mean_interval``).
MEAN_INTERVAL = "95% t interval, cut to the range of the values from 8 values on"


def key_label(fields: Sequence[str], key: Sequence[str]) -> str:
    return ", ".join(v if f in SELF_NAMED else f"{f}={v}" for f, v in zip(fields, key)) or "all"


def fixed_note(run: Source) -> str:
    frame = layout(totals_of(run))
    parts = []
    if frame.fixed:
        parts.append("Same in every game: " + ", ".join(f"{f}={v}" for f, v in frame.fixed.items()) + ".")
    parts += [note + "." for note in frame.notes]
    return " ".join(parts)


def label_columns(fields: Sequence[str]) -> list[str]:
    return list(fields) or ["condition"]


def label_cells(fields: Sequence[str], key: Sequence[str]) -> list[str]:
    return list(key) if fields else ["all"]


def condition_columns(run: Source) -> list[str]:
    """The fields that name a condition in full in the CSV files (roles one by one)."""
    names: dict[str, None] = {}
    for condition in conditions_of(totals_of(run)):
        names.update(dict.fromkeys(condition.spec.condition_fields()))
    return list(names)


def full_values(run: Source, fields: Sequence[str]) -> dict[tuple[str, ...], list[str]]:
    """For each group key over ``fields``, every condition field's value (from its first game)."""
    run = totals_of(run)
    columns = condition_columns(run)
    return {key: [group[0].values.get(c, "") for c in columns] for key, group in group_by(run, fields)}


def score_labels(run: Source) -> dict[str, str]:
    """Each score key's display name, as the game of the first game that gives it names it."""
    return {key: get_game(game).score_label(key) for key, game in totals_of(run).score_games.items()}


def score_notes(run: Source, keys: Iterable[str]) -> str:
    """What the games say a reader of these scores must know (``Records.score_notes``), once each."""
    games = totals_of(run).score_games
    notes = (get_game(games[key]).records.score_notes.get(key.partition(".")[0]) for key in keys if key in games)
    return " ".join(dict.fromkeys(note for note in notes if note))


def score_cell(summary: ScoreSummary | None, n: int) -> str:
    """A rate as "% [low-high]", a mean as "mean [low, high]"; the games that gave the score in
    parentheses where fewer than ``n``."""
    if summary is None or summary.n == 0:
        return "-"
    if summary.kind == "rate":
        text = f"{pct(summary.value)} [{pct(summary.low)}-{pct(summary.high)}]"
    elif math.isnan(summary.low):
        text = num(summary.value)
    else:
        text = f"{num(summary.value)} [{num(summary.low)}, {num(summary.high)}]"
    return text if summary.n == n else f"{text} ({summary.n})"
