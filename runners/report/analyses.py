"""The report's ``--analyses`` tables: each game's own analyses (``engine.analysis.played``, in
memory set by the run's conditions) as report tables, with a line on what they read."""

from __future__ import annotations

from pathlib import Path

from engine.analysis import RunAnalyses, Source, recorded_games, run_analyses
from puzzles import AnalysisTable

from runners.printable import printable
from runners.report.cells import Table

PREFIX = "analysis_"  # of their CSV files, so that a later report can remove those it no longer writes


def cell_text(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    return printable(str(value))  # a label may quote what a model wrote


def csv_cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, float):
        return round(value, 4)
    return value


def as_table(game: str, table: AnalysisTable) -> Table:
    return Table(
        name=f"{PREFIX}{game}_{table.name}", title=table.title, header=list(table.columns),
        rows=[[cell_text(v) for v in row] for row in table.rows], labels=table.labels, note=table.note,
        csv_header=list(table.columns), csv_rows=[[csv_cell(v) for v in row] for row in table.rows],
    )


def summary_lines(found: RunAnalyses) -> list[str]:
    lines = []
    if not found.transcripts:
        lines.append("Analyses: no transcripts in this run directory (they are written unless a run says --no-messages)")
    for game in found.games:
        parts = [f"Analyses of {game.game}: {game.games} game{'s' * (game.games != 1)} read from transcripts"]
        if game.without_transcript:
            parts.append(f"{game.without_transcript} without a readable transcript")
        if game.errors:
            parts.append(f"{game.errors} ended in errors (left out)")
        lines.append(", ".join(parts))
    return lines + [f"Analyses: the game {name} gives none beyond the tables above" for name in found.without_analyses]


def analysis_tables(results_path: Path, conditions: Source) -> tuple[list[Table], list[str]]:
    """The analyses' tables over the results at ``results_path`` (read one record at a time, the
    conditions named from ``conditions``: the run's totals) and the lines that say what they read."""
    found = run_analyses(recorded_games(results_path), results_path.parent, conditions)
    tables = [as_table(game.game, t) for game in found.games for t in game.tables]
    return tables, summary_lines(found)
