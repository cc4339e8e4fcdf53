"""The report of a branch run: what each message was worth (``engine.analysis.branches``), in up to
four tables: per alternative and turn, per alternative and seat, per alternative and kind of the
message replaced (where the game reads kinds and the run branched kept transcripts), and the
branches that moved the result most (each with the two game ids to open in the viewer side by side)."""

from __future__ import annotations

from pathlib import Path

from engine.analysis import BranchReport, BranchRow, message_kinds, value_of_information
from engine.records import GameRecord, RunDir, RunDirError

from runners.report.cells import MEAN_INTERVAL, Table, frac, num, pct

TABLE_NAMES = ("value_by_turn", "value_by_seat", "value_by_kind", "mattered")


class BranchReportError(Exception):
    pass


def origin_of(run: RunDir) -> Path | None:
    """The run a branch run branches, or None for a run that is not one. It is found as saved, else
    beside the branch run (runs moved together)."""
    given = run.config().branch_from
    if not given:
        return None
    for path in (Path(given), run.path.parent / Path(given).name):
        if (path / "results.jsonl").is_file():
            return path
    raise BranchReportError(f"the run this one branches, {given}, is not found (nor beside {run.path})")


def _short(conditions: list[str]) -> tuple[dict[str, str], str]:
    """Each condition by the fields that vary among them, and what they all share (for the note)."""
    split = {c: c.split(" ") for c in conditions}
    shared = set.intersection(*(set(parts) for parts in split.values())) if split else set()
    short = {c: " ".join(p for p in parts if p not in shared) for c, parts in split.items()}
    common = " ".join(p for p in next(iter(split.values()), []) if p in shared)
    return short, common


def _interval(value: tuple[float, float, float], scale: str) -> str:
    estimate, low, high = value
    show = pct if scale == "%" else num
    return f"{show(estimate)} [{show(low)}, {show(high)}]"


def _value_table(name: str, title: str, rows: list[BranchRow], score_keys: list[str]) -> Table:
    short, common = _short([row.condition for row in rows])
    header = ["condition", "alternative", "at", "branches", "outcome changed", "Δ success %", *[f"Δ {k}" for k in score_keys]]
    csv_header = ["condition", "alternative", "at", "branches", "success_change", "success_low", "success_high"]
    csv_header += [f"{k}_{part}" for k in score_keys for part in ("change", "low", "high")] + ["outcome_changed"]
    text_rows, csv_rows = [], []
    for row in rows:
        scores = [row.scores.get(k, (float("nan"),) * 3) for k in score_keys]
        text_rows.append([
            short[row.condition], row.alternative, row.at, str(row.branches), str(row.outcome_changed),
            _interval(row.success, "%"), *[_interval(s, "") for s in scores],
        ])
        csv_rows.append([
            row.condition, row.alternative, row.at, row.branches, *map(frac, row.success),
            *[frac(x) for s in scores for x in s], row.outcome_changed,
        ])
    note = f"change = branch minus the game it branches, paired by seed; success: Newcombe's interval; scores: {MEAN_INTERVAL}"
    if common:
        note += f"; every condition: {common}"
    return Table(name, title, header, text_rows, labels=3, note=note, csv_header=csv_header, csv_rows=csv_rows, thin_from=6)


def _mattered_table(report: BranchReport) -> Table:
    short, _ = _short([m.condition for m in report.mattered])
    header = ["condition", "point", "game", "branch game", "Δ success", "largest Δ score"]
    rows = [[short[m.condition], m.point, str(m.original_game), str(m.branch_game), f"{m.success_change:+d}", num(m.score_change)] for m in report.mattered]
    csv_rows: list[list[object]] = [[m.condition, m.point, m.original_game, m.branch_game, m.success_change, frac(m.score_change)] for m in report.mattered]
    return Table(
        "mattered", "The messages that mattered most", header, rows, labels=2,
        note="game: the original in the run branched; branch game: in this run (asymgames view shows either)",
        csv_header=["condition", "point", "original_game", "branch_game", "success_change", "score_change"], csv_rows=csv_rows,
    )


def branch_tables(run_path: Path) -> tuple[list[Table], list[str]]:
    """The value-of-information tables of a branch run and the intro lines; nothing for another run."""
    try:
        run = RunDir.open(run_path)
        origin = origin_of(run)
    except RunDirError:
        return [], []
    if origin is None:
        return [], []
    branches: list[GameRecord] = run.records()
    originals = RunDir.open(origin).records()
    report = value_of_information(branches, originals, kinds=message_kinds(originals, origin))
    keys = list(dict.fromkeys(k for row in report.by_turn for k in row.scores))
    tables = [
        _value_table("value_by_turn", "What each message was worth, by turn", report.by_turn, keys),
        _value_table("value_by_seat", "What each message was worth, by seat", report.by_seat, keys),
    ]
    if report.by_kind:
        tables.append(_value_table("value_by_kind", "What each message was worth, by the kind of message replaced",
                                   report.by_kind, keys))
    tables.append(_mattered_table(report))
    lines = [f"branches of {origin}: {report.unreached} at a point their game never reached (left out), "
             f"{report.unpaired} without a finished original or branch"]
    return tables, lines
