"""The report's table of human seats: one row per condition where a person played a seat, with the
game's human-study scores and the turns taken by the agents (AMT) and by the people (HMT).
The numbers are ``engine.analysis.seats``'s; this module only writes them as a ``Table``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from engine.analysis import ABSENT, ScoreSummary, Source, conditions_of, human_seats, layout, totals_of

from runners.report.cells import (
    MEAN_INTERVAL, Table, condition_columns, frac, full_values, label_cells, label_columns, num, score_cell,
)


def human_fields(run: Source, rows: Sequence[str]) -> list[str]:
    """The fields that name a condition here: the success table's rows (agents unless asked
    otherwise), then the other fields that vary in the run."""
    frame = layout(totals_of(run), rows)
    return list(frame.rows) + list(frame.columns)


def mean_cell(summary: ScoreSummary) -> str:
    """A mean with its 95% interval where there is one (``MEAN_INTERVAL``)."""
    if summary.n == 0:
        return "-"
    if math.isnan(summary.low):
        return num(summary.value, 1)
    return f"{num(summary.value, 1)} [{num(summary.low, 1)}, {num(summary.high, 1)}]"


def study_labels(run: Source, fields: Sequence[str], names: Mapping[str, str]) -> dict[tuple, str]:
    """A study's names of the conditions in each row of the human seats table (by the row's key)."""
    found: dict[tuple, list[str]] = {}
    for condition in conditions_of(run):
        name = names.get(condition.spec.condition())
        if name is not None:
            key = tuple(condition.values.get(f, "") for f in fields)
            found.setdefault(key, [])
            if name not in found[key]:
                found[key].append(name)
    return {key: " / ".join(found_names) for key, found_names in found.items()}


def humans_table(run: Source, rows: Sequence[str], names: Mapping[str, str] | None = None) -> Table | None:
    """The human seats per condition; None when no person played in the run. ``names``: a study's
    names of its conditions by the condition's label, shown in a first column."""
    run = totals_of(run)
    fields = human_fields(run, rows)
    columns, data = human_seats(run, fields)
    if not data:
        return None
    named = study_labels(run, fields, names or {})
    header = (["study condition"] if named else []) + label_columns(fields) + ["games", "n", "participants"]
    header += [c.label + (" %" if c.kind == "rate" else "") for c in columns]
    header += ["AMT", "HMT", "median s per turn", "timeouts per game", "walked away"]
    body = [
        ([named.get(r.key, "-")] if named else []) + label_cells(fields, r.key)
        + [str(r.games), str(r.n), str(len(r.participants)) if r.participants else "-"]
        + [score_cell(r.scores.get(c.key), r.n) for c in columns]
        + [mean_cell(r.agent_turns), mean_cell(r.human_turns), num(r.median_seconds, 1), num(r.timeouts, 2), str(r.absent)]
        for r in data
    ]
    full = full_values(run, fields)
    extra = [i for i, f in enumerate(fields) if f not in condition_columns(run)]  # such as agents
    csv_header = (["study_condition"] if named else []) + [fields[i] for i in extra] + condition_columns(run)
    csv_header += ["games", "n", "participants", "participant_ids"]
    for c in columns:
        name = c.key or "success"
        csv_header += [f"{name}_n", name, f"{name}_low", f"{name}_high"]
    csv_header += ["amt", "amt_low", "amt_high", "hmt", "hmt_low", "hmt_high", "median_seconds", "timeouts_per_game", ABSENT]
    csv_rows: list[list[object]] = []
    for r in data:
        cells: list[object] = ([named.get(r.key, "")] if named else []) + [r.key[i] for i in extra] + full[r.key]
        cells += [r.games, r.n, len(r.participants), ";".join(r.participants)]
        for c in columns:
            s = r.scores.get(c.key)
            cells += [0, "", "", ""] if s is None else [s.n, frac(s.value), frac(s.low), frac(s.high)]
        for s in (r.agent_turns, r.human_turns):
            cells += [frac(s.value), frac(s.low), frac(s.high)]
        cells += [frac(r.median_seconds), frac(r.timeouts), r.absent]
        csv_rows.append(cells)
    note = (
        "Games with a person in a seat. n: the games that ended without error, and those the person walked "
        f"away from ({ABSENT}): such a game counts as not completed, a no for every yes/no score (a person "
        "who stopped answering did not complete the game); games lost to other errors are left out. The "
        "game's human-study scores (its success rate where it names none): yes/no scores as % of games "
        f"[Wilson 95% interval], numeric scores as mean [{MEAN_INTERVAL}] over the games that gave them. AMT and "
        f"HMT: turns per game taken by the agents' seats and by the people's [{MEAN_INTERVAL}]. Median s per turn: "
        "a person's response time, turns that timed out left out. Participants: distinct participant ids."
    )
    return Table(
        "humans", "Human seats", header, body, len(label_columns(fields)) + bool(named), note, csv_header, csv_rows,
    )
