"""The report command: read a run's results, write every table and plot, print the tables.

    python -m runners.report runs/20261121-101500
    python -m runners.report RUN_DIR --rows N --no-plots
    python -m runners.report RUN_DIR --compare feedback=own feedback=joint

Only RUN_DIR/results.jsonl is read, so a run that is still going or was interrupted can be reported
on; results files of every results format are read. The records are read one at a time into the
run's totals per condition (``engine.analysis.read_totals``), so the report of a million games needs
about the memory of a report of a thousand; ``--analyses`` reads them again, one at a time, with
their transcripts (``engine.analysis.played``: memory set by the conditions, and the transcripts'
index, 8 bytes a game).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from engine.analysis import AGENTS, ReadCounts, ReportError, RunTotals, group_by, layout, read_totals
from puzzles import InvalidParameter, get_game
from engine.records import INFRA_ERROR, RESULTS_FILE, RunDir, RunDirError
from runners.args import OneLineParser, key_value

from runners.report.analyses import PREFIX as ANALYSIS_PREFIX, analysis_tables
from runners.report.branches import TABLE_NAMES as BRANCH_TABLES, BranchReportError, branch_tables
from runners.report.formats import to_csv, to_html, to_latex, to_markdown, to_rich
from runners.report.plots import PLOT_FILES, PLOT_FORMATS, PLOTS_INSTALL, make_plots
from runners.report.cells import UNIT_NAMES, Table, condition_columns
from runners.report.participants import participants_table, read_participants, study_names
from runners.report.seats import human_fields
from runners.report.tables import build_tables
from runners.words import counted

PROG = "python -m runners.report"


def build_parser(prog: str = PROG) -> OneLineParser:
    p = OneLineParser(prog=prog, description="Report on a run's results: tables, plots and an HTML page.")
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help=f"run directory (or its {RESULTS_FILE})")
    p.add_argument("--out", type=Path, metavar="DIR", help="where to write the report (default RUN_DIR/report)")
    p.add_argument(
        "--rows", metavar="FIELD[,FIELD]",
        help="fields that make the rows of the success table (default: the game's paper's rows, where they vary in "
             "the run, after the agents if those vary too; else agents); the other fields that vary make the columns",
    )
    p.add_argument(
        "--compare", nargs=2, metavar=("FIELD=A", "FIELD=B"),
        help="paired comparison of two values of one field, games paired by seed (e.g. feedback=own feedback=joint)",
    )
    p.add_argument(
        "--analyses", action="store_true",
        help="add the game's own analyses read from the run's transcripts (strategies, action use, failure signatures)",
    )
    p.add_argument("--no-plots", action="store_true", help="write no plots")
    p.add_argument(
        "--plot-format", type=plot_formats, default=PLOT_FORMATS, metavar="FMT[,FMT]",
        help=f"file formats of the plots (default {','.join(PLOT_FORMATS)}); the HTML page shows the PNG",
    )
    return p


def plot_formats(text: str) -> tuple[str, ...]:
    formats = tuple(dict.fromkeys(f.strip().lower().lstrip(".") for f in text.split(",") if f.strip()))
    unknown = [f for f in formats if f not in PLOT_FORMATS]
    if not formats or unknown:
        raise argparse.ArgumentTypeError(f"{text!r}: give one or more of {', '.join(PLOT_FORMATS)}")
    return formats


def locate(path: Path) -> Path:
    """The results file of a run directory (or the file itself)."""
    if path.is_file():
        return path
    if path.is_dir():
        results = path / RESULTS_FILE
        if not results.is_file():
            raise ReportError(f"{path} is not a run directory (no {RESULTS_FILE})")
        return results
    raise ReportError(f"{path} does not exist")


def first_contradiction(results_path: Path) -> str | None:
    """Where the run directory's results hold a record whose seed, game, parameters, options or
    agents are not the plan's for its game (a record changed by hand, or of another run), in one
    line; None if none does or the results have no run directory around them."""
    try:
        run = RunDir.open(results_path.parent)
        found = run.contradiction_error(run.config(), skip_damaged=True, resume="asymgames run --resume")
    except (RunDirError, OSError, ValueError):
        return None
    return None if found is None else str(found)


def parse_compare(values: Sequence[str] | None) -> tuple[str, str, str] | None:
    if values is None:
        return None
    form = "FIELD=A FIELD=B with one field"
    try:
        (field, a), (other, b) = (key_value(v, form) for v in values)
    except ValueError:
        field, other = "", None
    if field != other:
        raise ReportError(f"expected {form}, got {' '.join(values)}")
    return field, a, b


def intro_lines(run: RunTotals, counts: ReadCounts, path: Path) -> list[str]:
    conditions = len(group_by(run, condition_columns(run)))
    lines = [f"{counted(run.games, 'game')} in {counted(conditions, 'condition')}, from {path}"]
    if counts.truncated:
        lines.append("last line cut short (run still writing or interrupted): skipped")
    if counts.duplicates:
        lines.append(f"{counts.duplicates} repeated game id{'s' * (counts.duplicates != 1)}: the last record of each kept")
    if counts.damaged:
        shown = ", ".join(map(str, counts.first_damaged[:5])) + (", ..." if counts.damaged > 5 else "")
        lines.append(f"{counts.damaged} damaged line{'s' * (counts.damaged != 1)} skipped (line {shown})")
    infra = sum(c.infra for c in run.conditions)
    if infra:
        lines.append(f"{infra} game{'s' * (infra != 1)} lost to infrastructure errors ({INFRA_ERROR}): left out of every rate")
    other = sum(c.errors for c in run.conditions) - infra
    if other:
        absent = sum(c.error_kinds.get("human_absent", 0) for c in run.conditions)
        but = f" but the human seats table, which counts the {absent} a person walked away from as not completed" if absent else ""
        lines.append(f"{other} game{'s' * (other != 1)} ended in other errors: left out of every rate{but}")
    return lines


def write_report(out: Path, tables: Sequence[Table], intro: Sequence[str], images: Sequence[Path], source: str) -> None:
    files = [(f"{t.name}.csv", to_csv(t)) for t in tables]
    files += [("tables.md", to_markdown(tables, intro, images)), ("tables.tex", to_latex(tables)),
              ("report.html", to_html(tables, intro, images, source))]
    for name, text in files:
        (out / name).write_text(text, encoding="utf-8")


def remove_stale(out: Path, tables: Sequence[Table], images: Sequence[Path]) -> None:
    """Remove files an earlier report wrote here that this one does not write (such as paired.csv)."""
    keep = {f"{t.name}.csv" for t in tables} | {p.name for p in images}
    known = {"success.csv", "success_by_turn.csv", "scores.csv", "humans.csv", "participants.csv", "errors.csv", "paired.csv", "usage.csv"}
    known |= {f"{unit}_per_turn.csv" for unit in UNIT_NAMES} | set(PLOT_FILES) | {f"{name}.csv" for name in BRANCH_TABLES}
    known |= {p.name for p in out.glob(f"{ANALYSIS_PREFIX}*.csv")}
    for name in known - keep:
        (out / name).unlink(missing_ok=True)


def default_rows(run: RunTotals) -> list[str]:
    """The rows of the game's paper's success table (``Records.table_rows``) that vary in the run,
    after the agents if they vary too; the agents alone when none does."""
    try:
        wanted = get_game(run.conditions[0].spec.game).records.table_rows
    except InvalidParameter:
        wanted = ()
    values = [c.values for c in run.conditions]
    varying = [f for f in wanted if len({v.get(f) for v in values}) > 1]
    if not varying:
        return [AGENTS]
    agents_vary = len({tuple(sorted(c.spec.agents.items())) for c in run.conditions}) > 1
    return [AGENTS, *varying] if agents_vary else varying


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    compare_error: ReportError | None = None
    try:
        compare = parse_compare(args.compare)  # before reading: the reading keeps the compared games' seeds
    except ReportError as exc:  # said after the results' own errors
        compare, compare_error = None, exc
    try:
        results_path = locate(args.run_dir)
        run, counts = read_totals(results_path, compare)
    except ReportError as exc:
        parser.error(str(exc))
    except OSError as exc:
        parser.error(f"cannot read {args.run_dir}: {exc.strerror or exc}")
    contradiction = first_contradiction(results_path)
    if contradiction is not None:
        parser.error(contradiction)
    if not run.games:
        parser.error(f"{results_path} holds no complete game record")
    rows = [f.strip() for f in args.rows.split(",") if f.strip()] if args.rows is not None else default_rows(run)
    if not rows:
        parser.error("argument --rows: give at least one field")
    try:
        layout(run, rows)
    except ReportError as exc:
        parser.error(f"argument --rows: {exc}")
    try:
        if compare_error is not None:
            raise compare_error
        tables = build_tables(run, rows, compare, study_names(results_path.parent))
    except ReportError as exc:
        parser.error(f"argument --compare: {exc}")
    if run.people:  # a person played: one row each, read in a second pass over the records
        people = participants_table(read_participants(results_path, human_fields(run, rows), study_names(results_path.parent)))
        if people is not None:
            at = next((i + 1 for i, t in enumerate(tables) if t.name == "humans"), len(tables))
            tables.insert(at, people)

    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 160))
    intro = intro_lines(run, counts, results_path)
    if args.analyses:  # the games' own analyses, in a second pass over the records
        analyses, lines = analysis_tables(results_path, run)
        tables = [*tables, *analyses]
        intro += lines
    try:  # a branch run: what each message was worth, against the run it branches
        branched, lines = branch_tables(results_path.parent)
    except BranchReportError as exc:
        parser.error(str(exc))
    tables, intro = [*tables, *branched], [*intro, *lines]

    # Files first, so that a closed pipe on the terminal side loses nothing.
    out = args.out if args.out is not None else results_path.parent / "report"
    plots_note = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        made = None if args.no_plots else make_plots(run, out, args.plot_format)
        images: list[Path] = made or []
        if made is None and not args.no_plots:
            plots_note = f"Plots skipped: matplotlib is not installed (install it with: {PLOTS_INSTALL})"
        remove_stale(out, tables, images)
        write_report(out, tables, intro, [p for p in images if p.suffix == ".png"], str(results_path.parent))
    except OSError as exc:
        parser.error(f"argument --out: cannot write {out}: {exc.strerror or exc}")

    try:
        for line in intro:
            console.print(line, highlight=False, markup=False)
        for t in tables:
            console.print()
            console.print(to_rich(t))
            if t.note:
                console.print(t.note, style="dim", highlight=False, markup=False)
        if plots_note:
            console.print(plots_note, highlight=False, markup=False)
        console.print()
        stems, kinds = (list(dict.fromkeys(getattr(p, a) for p in images)) for a in ("stem", "suffix"))
        plots = f", plots: {', '.join(stems)} ({', '.join(k.lstrip('.') for k in kinds)})" if images else ""
        console.print(
            f"Report written to {out}: report.html, tables.md, tables.tex, "
            f"CSV: {', '.join(t.name + '.csv' for t in tables)}{plots}",
            highlight=False, markup=False,
        )
    except BrokenPipeError:  # the reader went away (report | head): the files are written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
    return 0
