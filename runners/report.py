"""Report on a run: tables on the terminal and as Markdown, CSV and LaTeX, plots, and one HTML page.

    python -m runners.report runs/20261121-101500
    python -m runners.report RUN_DIR --rows N --no-plots
    python -m runners.report RUN_DIR --compare feedback=own feedback=joint

Only RUN_DIR/results.jsonl is read, so a run that is still going or was interrupted can be reported on.
"""

from __future__ import annotations

import argparse
import base64
import csv
import html
import io
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from engine.records import GameRecord
from engine.report import (
    AGENTS,
    INFRA_ERROR,
    ReportError,
    Results,
    actions_per_position,
    condition_fields,
    error_counts,
    field_values,
    group_by,
    is_infra_error,
    layout,
    observed_values,
    paired_comparison,
    read_results,
    roles_of,
    size_units,
    sizes_per_turn,
    success_by_turn,
    success_series,
    success_table,
)
from engine.results import RESULTS_FILE

PROG = "python -m runners.report"
PLOTS_INSTALL = "pip install -e '.[plots]'"
FIGURE_INCHES = (8, 5)
FIGURE_DPI = 100  # 800 x 500 pixels
UNIT_NAMES = {"chars": "characters", "tokens": "tokens"}
# Fields whose values name themselves in a column header; others are shown as field=value.
SELF_NAMED = (AGENTS, "feedback")
TERMINAL_TURNS = 12  # K columns shown at most on the terminal
PLOT_FILES = ("success_by_turn.png", "actions_per_position.png", "success_vs_size.png")


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments and bad input give one line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> OneLineParser:
    p = OneLineParser(prog=PROG, description="Report on a run's results: tables, plots and an HTML page.")
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help=f"run directory (or its {RESULTS_FILE})")
    p.add_argument("--out", type=Path, metavar="DIR", help="where to write the report (default RUN_DIR/report)")
    p.add_argument(
        "--rows", metavar="FIELD[,FIELD]", default=AGENTS,
        help="fields that make the rows of the success table (default agents); the other fields that vary make the columns",
    )
    p.add_argument(
        "--compare", nargs=2, metavar=("FIELD=A", "FIELD=B"),
        help="paired comparison of two values of one field, games paired by seed (e.g. feedback=own feedback=joint)",
    )
    p.add_argument("--no-plots", action="store_true", help="write no plots")
    return p


# ---------------------------------------------------------------------------------------------
# Tables as text


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
    """A fraction for the CSV files: four decimals, empty when undefined."""
    return "" if x is None or math.isnan(x) else round(x, 4)


def value_label(field_name: str, value: str) -> str:
    return value if field_name in SELF_NAMED else f"{field_name}={value}"


def key_label(fields: Sequence[str], key: Sequence[str]) -> str:
    return ", ".join(value_label(f, v) for f, v in zip(fields, key)) or "all"


def fixed_note(records: Sequence[GameRecord]) -> str:
    shape = layout(records)
    parts = []
    if shape.fixed:
        parts.append("Same in every game: " + ", ".join(f"{f}={v}" for f, v in shape.fixed.items()) + ".")
    parts += [note + "." for note in shape.notes]
    return " ".join(parts)


def _label_columns(fields: Sequence[str]) -> list[str]:
    return list(fields) or ["condition"]


def _label_cells(fields: Sequence[str], key: Sequence[str]) -> list[str]:
    return list(key) if fields else ["all"]


def _condition_columns(records: Sequence[GameRecord]) -> list[str]:
    """The fields that name a condition in full in the CSV files (roles one by one)."""
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record.spec.condition_fields()))
    return list(names)


def _full_values(records: Sequence[GameRecord], fields: Sequence[str]) -> dict[tuple[str, ...], list[str]]:
    """For each group key over ``fields``, every condition field's value (from its first game)."""
    columns = _condition_columns(records)
    full = {}
    for key, group in group_by(records, fields):
        values = field_values(group[0])
        full[key] = [values.get(c, "") for c in columns]
    return full


def success_main(records: Sequence[GameRecord], rows: Sequence[str]) -> Table:
    table = success_table(records, rows)
    shape = table.layout
    header = list(shape.rows) + [key_label(shape.columns, c) if shape.columns else "success %" for c in table.column_keys]
    body = []
    for row in table.row_keys:
        cells = []
        for column in table.column_keys:
            cell = table.cell(row, column)
            if cell is None:
                cells.append("")
            elif cell.n == 0:
                cells.append("- (0)")
            else:
                cells.append(f"{pct(cell.rate)} [{pct(cell.low)}-{pct(cell.high)}] ({cell.n})")
        body.append(list(row) + cells)
    by = " x ".join(shape.rows) + (f" x {', '.join(shape.columns)}" if shape.columns else "")
    note = (
        "Cells: success % [Wilson 95% interval] (n = games that ended without a game error; "
        "those are counted in the errors table). " + fixed_note(records)
    )
    keys = list(shape.rows) + list(shape.columns)
    full = _full_values(records, keys)
    extra = [i for i, f in enumerate(keys) if f not in _condition_columns(records)]  # such as agents
    csv_header = [keys[i] for i in extra] + _condition_columns(records)
    csv_header += ["games", "errors", "n", "successes", "success_rate", "ci_low", "ci_high"]
    csv_rows = []
    for (row, column), cell in table.cells.items():
        key = row + column
        csv_rows.append(
            [key[i] for i in extra] + full[key]
            + [cell.games, cell.errors, cell.n, cell.successes, frac(cell.rate), frac(cell.low), frac(cell.high)]
        )
    return Table("success", f"Success rate by {by}", header, body, len(shape.rows), note.strip(), csv_header, csv_rows)


def success_turns(records: Sequence[GameRecord], fields: Sequence[str]) -> Table:
    curves = success_by_turn(records, fields)
    max_turn = len(curves[0].solved_by) if curves else 0
    header = _label_columns(fields) + ["n"] + [f"K={k}" for k in range(1, max_turn + 1)]
    rows = [_label_cells(fields, c.key) + [str(c.n)] + [pct(r) for r in c.rates] for c in curves]
    full = _full_values(records, fields)
    columns = _condition_columns(records)
    csv_rows = [
        full[c.key] + [c.n, k, solved, frac(solved / c.n if c.n else None)]
        for c in curves
        for k, solved in enumerate(c.solved_by, start=1)
    ]
    note = "Success % within K turns: games solved at turn K or earlier, over games that ended without a game error."
    return Table(
        "success_by_turn", "Success rate at turn K", header, rows, len(_label_columns(fields)), note,
        columns + ["n", "K", "solved", "success_rate"], csv_rows, thin_from=len(_label_columns(fields)) + 1,
    )


def actions_table(records: Sequence[GameRecord], fields: Sequence[str]) -> Table:
    roles = roles_of(records)
    data = actions_per_position(records, fields)
    header = _label_columns(fields) + ["n"] + roles
    rows = [_label_cells(fields, r.key) + [str(r.n)] + [num(r.mean[role]) for role in roles] for r in data]
    full = _full_values(records, fields)
    csv_rows = [full[r.key] + [r.n] + [frac(r.mean[role]) for role in roles] for r in data]
    note = (
        "Mean over games of how often each position was overwritten (1 is optimal for Alice; 0 while "
        "unsolved means ignoring the partner). n = games that ended without error."
    )
    return Table(
        "actions_per_position", "Actions per position, per agent", header, rows, len(_label_columns(fields)),
        note, _condition_columns(records) + ["n"] + [f"actions_per_position_{role}" for role in roles], csv_rows,
    )


def sizes_table(records: Sequence[GameRecord], fields: Sequence[str], unit: str) -> Table:
    roles = roles_of(records)
    name = UNIT_NAMES.get(unit, unit)
    data = sizes_per_turn(records, fields, unit)
    header = _label_columns(fields) + ["n"]
    for role in roles:
        header += [f"{role} reply {unit}", f"{role} message {unit}", f"{role} message/reply %"]
    rows = []
    for r in data:
        cells = _label_cells(fields, r.key) + [str(r.n)]
        for role in roles:
            s = r.roles[role]
            cells += [num(s.reply, 1), num(s.message, 1), pct(s.share)]
        rows.append(cells)
    full = _full_values(records, fields)
    csv_rows = [
        full[r.key] + [r.n, role, r.roles[role].turns, frac(r.roles[role].reply), frac(r.roles[role].message), frac(r.roles[role].share)]
        for r in data
        for role in roles
    ]
    note = (
        f"Mean {name} per turn of each agent's whole reply and of its message alone, pooled over the turns; "
        f"message/reply % = mean message / mean reply x 100. n = games that ended without error."
    )
    return Table(
        f"{unit}_per_turn", f"Output per turn, in {name}", header, rows, len(_label_columns(fields)), note,
        _condition_columns(records) + ["n", "role", "turns", f"mean_reply_{unit}", f"mean_message_{unit}", "message_share"],
        csv_rows,
    )


def errors_table(records: Sequence[GameRecord], fields: Sequence[str]) -> Table:
    roles = roles_of(records)
    data = error_counts(records, fields)
    header = (
        _label_columns(fields) + ["games"] + [f"format errors {role}" for role in roles]
        + [f"invalid actions {role}" for role in roles] + ["infra errors", "other errors"]
    )
    rows = []
    for r in data:
        kinds = ", ".join(f"{k} {v}" for k, v in r.other_kinds.items())
        rows.append(
            _label_cells(fields, r.key) + [str(r.games)]
            + [str(r.format_errors[role]) for role in roles] + [str(r.invalid_actions[role]) for role in roles]
            + [str(r.infra_errors), f"{r.other_errors} ({kinds})" if kinds else str(r.other_errors)]
        )
    full = _full_values(records, fields)
    csv_rows = [
        full[r.key] + [r.games] + [r.format_errors[role] for role in roles] + [r.invalid_actions[role] for role in roles]
        + [r.infra_errors, r.other_errors, ";".join(f"{k}:{v}" for k, v in r.other_kinds.items())]
        for r in data
    ]
    note = (
        "Format errors and invalid actions: totals over the games. Infra errors: games lost to the "
        "infrastructure. Other errors: games that ended in any other error. Both are left out of every rate."
    )
    return Table(
        "errors", "Errors", header, rows, len(_label_columns(fields)), note,
        _condition_columns(records) + ["games"] + [f"format_errors_{role}" for role in roles]
        + [f"invalid_actions_{role}" for role in roles] + ["infra_errors", "other_errors", "other_error_kinds"],
        csv_rows,
    )


def signed_pp(x: float) -> str:
    return f"{100 * x:+.1f}"


def paired_table(records: Sequence[GameRecord], compare_field: str, a: str, b: str) -> Table:
    comparison = paired_comparison(records, compare_field, a, b)
    fields = comparison.fields
    label_a, label_b = f"{compare_field}={a}", f"{compare_field}={b}"
    header = _label_columns(fields) + [
        "pairs", f"success % {label_a}", f"success % {label_b}", f"{b} - {a} (points)", "95% interval",
        f"{a} only / {b} only", "unpaired",
    ]
    rows, csv_rows = [], []
    for r in comparison.rows:
        if r.pairs:
            diff, interval = signed_pp(r.difference), f"[{signed_pp(r.low)}, {signed_pp(r.high)}]"
        else:
            diff, interval = "-", "-"
        rows.append(
            _label_cells(fields, r.key)
            + [str(r.pairs), pct(r.rate_a), pct(r.rate_b), diff, interval, f"{r.a_only} / {r.b_only}", str(r.unpaired)]
        )
        csv_rows.append(
            list(r.key) + [compare_field, a, b, r.pairs, r.both, r.a_only, r.b_only, r.neither, r.unpaired,
                           frac(r.rate_a), frac(r.rate_b), frac(r.difference if r.pairs else None),
                           frac(r.low if r.pairs else None), frac(r.high if r.pairs else None)]
        )
    note = (
        f"Games with {label_a} and with {label_b} paired by seed within each combination of the other fields. "
        f"Difference of success rates {b} - {a} in percentage points, 95% interval by Newcombe's hybrid score "
        "method for paired proportions. Pairs with a game error on either side are left out (unpaired)."
    )
    return Table(
        "paired", f"Paired comparison: {label_b} against {label_a}", header, rows, len(_label_columns(fields)), note,
        list(fields) + ["field", "a", "b", "pairs", "both", "a_only", "b_only", "neither", "unpaired",
                        "success_rate_a", "success_rate_b", "difference", "ci_low", "ci_high"],
        csv_rows,
    )


def build_tables(records: Sequence[GameRecord], rows: Sequence[str], compare: tuple[str, str, str] | None) -> list[Table]:
    fields = condition_fields(records)
    tables = [success_main(records, rows), success_turns(records, fields), actions_table(records, fields)]
    tables += [sizes_table(records, fields, unit) for unit in size_units(records)]
    tables.append(errors_table(records, fields))
    if compare is not None:
        tables.append(paired_table(records, *compare))
    return tables


# ---------------------------------------------------------------------------------------------
# Output formats


def to_rich(table: Table, max_thinned: int = TERMINAL_TURNS) -> RichTable:
    """The table for the terminal; a long run of K columns is thinned to at most ``max_thinned``,
    always keeping the first and the last."""
    keep = list(range(len(table.header)))
    title = table.title
    if table.thin_from and len(keep) - table.thin_from > max_thinned:
        tail = keep[table.thin_from :]
        step = math.ceil((len(tail) - 1) / (max_thinned - 1))
        chosen = sorted(set(tail[::step]) | {tail[-1]})
        keep = keep[: table.thin_from] + chosen
        title += " (some K left out here; the files have every K)"
    out = RichTable(title=title, title_justify="left")
    for i in keep:
        if i < table.labels:  # labels are never cut short
            width = min(40, max([len(table.header[i])] + [len(row[i]) for row in table.rows]))
            out.add_column(Text(table.header[i]), justify="left", no_wrap=True, min_width=width)
        else:
            out.add_column(Text(table.header[i]), justify="right")
    for row in table.rows:
        out.add_row(*(Text(row[i]) for i in keep))
    return out


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(tables: Sequence[Table], intro: Sequence[str], images: Sequence[Path] = ()) -> str:
    lines = ["# Run report", ""] + [f"- {line}" for line in intro] + [""]
    for t in tables:
        lines += [f"## {t.title}", ""]
        if t.note:
            lines += [f"_{t.note}_", ""]
        lines.append("| " + " | ".join(_md_cell(h) for h in t.header) + " |")
        lines.append("|" + "|".join(":---" if i < t.labels else "---:" for i in range(len(t.header))) + "|")
        lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in t.rows]
        lines.append("")
    if images:
        lines += ["## Plots", ""] + [f"![{p.stem.replace('_', ' ')}]({p.name})" for p in images] + [""]
    return "\n".join(lines)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(tables: Sequence[Table]) -> str:
    lines = ["% Tables of a run report. Needs \\usepackage{booktabs}.", ""]
    for t in tables:
        spec = "l" * t.labels + "r" * (len(t.header) - t.labels)
        lines += [
            "\\begin{table}[ht]",
            "\\centering",
            f"\\caption{{{latex_escape(t.title)}}}",
            f"\\label{{tab:{t.name.replace('_', '-')}}}",
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(latex_escape(h) for h in t.header) + " \\\\",
            "\\midrule",
        ]
        lines += [" & ".join(latex_escape(c) for c in row) + " \\\\" for row in t.rows]
        lines += ["\\bottomrule", "\\end{tabular}"]
        if t.note:
            lines.append(f"\\par\\smallskip\\footnotesize {latex_escape(t.note)}")
        lines += ["\\end{table}", ""]
    return "\n".join(lines)


def to_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.csv_header)
    writer.writerows(table.csv_rows)
    return buffer.getvalue()


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 0.3em; font-size: 0.9em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; }
th { border-bottom: 2px solid #444; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
p.note { color: #555; font-size: 0.85em; max-width: 60em; }
img { display: block; margin: 1em 0; }
.scroll { overflow-x: auto; }
"""


def to_html(tables: Sequence[Table], intro: Sequence[str], images: Sequence[Path], source: str) -> str:
    e = html.escape
    parts = [
        "<!DOCTYPE html>", "<html lang=\"en\">", "<head>", "<meta charset=\"utf-8\">",
        f"<title>Run report: {e(source)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f"<h1>Run report: {e(source)}</h1>", "<ul>", *(f"<li>{e(line)}</li>" for line in intro), "</ul>",
    ]
    for t in tables:
        parts += [f"<h2 id=\"{e(t.name)}\">{e(t.title)}</h2>", "<div class=\"scroll\"><table>", "<thead><tr>"]
        parts += [f"<th>{e(h)}</th>" for h in t.header]
        parts += ["</tr></thead>", "<tbody>"]
        for row in t.rows:
            cells = "".join(
                f"<td>{e(c)}</td>" if i < t.labels else f"<td class=\"num\">{e(c)}</td>" for i, c in enumerate(row)
            )
            parts.append(f"<tr>{cells}</tr>")
        parts += ["</tbody></table></div>"]
        if t.note:
            parts.append(f"<p class=\"note\">{e(t.note)}</p>")
    if images:
        parts.append("<h2>Plots</h2>")
        for path in images:
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            parts.append(f"<img alt=\"{e(path.stem)}\" src=\"data:image/png;base64,{data}\">")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Plots


def make_plots(records: Sequence[GameRecord], out: Path) -> list[Path] | None:
    """Write the PNG plots into ``out``; None when matplotlib is not installed."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return None

    def figure():
        fig = Figure(figsize=FIGURE_INCHES, dpi=FIGURE_DPI)
        FigureCanvasAgg(fig)
        return fig, fig.add_subplot()

    def save(fig, name: str) -> Path:
        fig.tight_layout()
        path = out / name
        fig.savefig(path, dpi=FIGURE_DPI, format="png")
        return path

    fields = condition_fields(records)
    written = []

    fig, ax = figure()
    curves = success_by_turn(records, fields)
    styles = ("-", "--", ":", "-.")
    for i, curve in enumerate(curves):
        ks = list(range(1, len(curve.solved_by) + 1))
        ys = [100 * r if r is not None else math.nan for r in curve.rates]
        ax.step(ks, ys, where="post", color=f"C{i % 10}", linestyle=styles[(i // 10) % len(styles)],
                label=f"{key_label(fields, curve.key)} (n={curve.n})")
    ax.set(xlabel="turn K", ylabel="solved within K turns (%)", title="Success rate at turn K", ylim=(-2, 102))
    if curves and curves[0].solved_by:
        ax.set_xlim(0.5, len(curves[0].solved_by) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    if len(curves) <= 6:
        ax.legend(fontsize="small", loc="lower right")
    else:  # many conditions: the legend goes to the right of the plot
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    written.append(save(fig, "success_by_turn.png"))

    fig, ax = figure()
    roles = roles_of(records)
    rows = actions_per_position(records, fields)
    width = 0.8 / max(1, len(roles))
    for i, role in enumerate(roles):
        xs = [j + (i - (len(roles) - 1) / 2) * width for j in range(len(rows))]
        ax.bar(xs, [r.mean[role] for r in rows], width, label=role)
    ax.set_xticks(range(len(rows)), [key_label(fields, r.key) for r in rows], rotation=30 if len(rows) > 4 else 0,
                  ha="right" if len(rows) > 4 else "center", fontsize="small")
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set(ylabel="actions per position", title="Actions per position, per agent")
    ax.legend(fontsize="small")
    written.append(save(fig, "actions_per_position.png"))

    sizes = observed_values(records, "N")
    if len(sizes) > 1:
        fig, ax = figure()
        series_fields, series = success_series(records, "N")
        for s in series:
            points = [(float(x), c) for x, c in s.points if c.n]
            if not points:
                continue
            xs = [x for x, _ in points]
            ys = [100 * c.rate for _, c in points]
            below = [max(0.0, 100 * (c.rate - c.low)) for _, c in points]
            above = [max(0.0, 100 * (c.high - c.rate)) for _, c in points]
            ax.errorbar(xs, ys, yerr=[below, above], marker="o", capsize=3, label=key_label(series_fields, s.key))
        ax.set_xticks([float(n) for n in sizes], sizes)
        ax.set(xlabel="puzzle size N", ylabel="success (%), Wilson 95% interval", title="Success rate by puzzle size",
               ylim=(-2, 102))
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        written.append(save(fig, "success_vs_size.png"))
    return written


# ---------------------------------------------------------------------------------------------
# Command line


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


def parse_compare(values: Sequence[str] | None) -> tuple[str, str, str] | None:
    if values is None:
        return None
    parts = [v.partition("=") for v in values]
    if any(not sep or not name.strip() for name, sep, _ in parts) or parts[0][0].strip() != parts[1][0].strip():
        raise ReportError(f"expected FIELD=A FIELD=B with one field, got {' '.join(values)}")
    return (parts[0][0].strip(), parts[0][2].strip(), parts[1][2].strip())


def intro_lines(results: Results, path: Path) -> list[str]:
    records = results.records
    conditions = len(group_by(records, _condition_columns(records)))
    lines = [f"{len(records)} games in {conditions} condition{'s' * (conditions != 1)}, from {path}"]
    if results.truncated:
        lines.append("last line cut short (run still writing or interrupted): skipped")
    if results.duplicates:
        lines.append(f"{results.duplicates} repeated game id{'s' * (results.duplicates != 1)}: the last record of each kept")
    if results.damaged:
        shown = ", ".join(map(str, results.damaged[:5])) + (", ..." if len(results.damaged) > 5 else "")
        lines.append(f"{len(results.damaged)} damaged line{'s' * (len(results.damaged) != 1)} skipped (line {shown})")
    infra = sum(is_infra_error(r) for r in records)
    if infra:
        lines.append(f"{infra} game{'s' * (infra != 1)} lost to infrastructure errors ({INFRA_ERROR}): left out of every rate")
    other = sum(r.outcome == "error" for r in records) - infra
    if other:
        lines.append(f"{other} game{'s' * (other != 1)} ended in other errors: left out of every rate")
    return lines


def write_report(out: Path, tables: Sequence[Table], intro: Sequence[str], images: Sequence[Path], source: str) -> list[Path]:
    written = []
    for t in tables:
        path = out / f"{t.name}.csv"
        path.write_text(to_csv(t), encoding="utf-8")
        written.append(path)
    for name, text in (
        ("tables.md", to_markdown(tables, intro, images)),
        ("tables.tex", to_latex(tables)),
        ("report.html", to_html(tables, intro, images, source)),
    ):
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def remove_stale(out: Path, tables: Sequence[Table], images: Sequence[Path]) -> None:
    """Remove files an earlier report wrote here that this one does not write (such as paired.csv)."""
    keep = {f"{t.name}.csv" for t in tables} | {p.name for p in images}
    known = {"success.csv", "success_by_turn.csv", "actions_per_position.csv", "errors.csv", "paired.csv"}
    known |= {f"{unit}_per_turn.csv" for unit in UNIT_NAMES} | set(PLOT_FILES)
    for name in known - keep:
        (out / name).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        results_path = locate(args.run_dir)
        results = read_results(results_path)
    except ReportError as exc:
        parser.error(str(exc))
    except OSError as exc:
        parser.error(f"cannot read {args.run_dir}: {exc.strerror or exc}")
    records = results.records
    if not records:
        parser.error(f"{results_path} holds no complete game record")
    rows = [f.strip() for f in args.rows.split(",") if f.strip()]
    if not rows:
        parser.error("argument --rows: give at least one field")
    try:
        layout(records, rows)
    except ReportError as exc:
        parser.error(f"argument --rows: {exc}")
    try:
        compare = parse_compare(args.compare)
        tables = build_tables(records, rows, compare)
    except ReportError as exc:
        parser.error(f"argument --compare: {exc}")

    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 160))
    intro = intro_lines(results, results_path)

    # Files first, so that a closed pipe on the terminal side loses nothing.
    out = args.out if args.out is not None else results_path.parent / "report"
    plots_note = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        images: list[Path] = []
        if not args.no_plots:
            made = make_plots(records, out)
            if made is None:
                plots_note = f"Plots skipped: matplotlib is not installed (install it with: {PLOTS_INSTALL})"
            else:
                images = made
        remove_stale(out, tables, images)
        write_report(out, tables, intro, images, str(results_path.parent))
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
        plots = f", plots: {', '.join(p.name for p in images)}" if images else ""
        console.print(
            f"Report written to {out}: report.html, tables.md, tables.tex, "
            f"CSV: {', '.join(t.name + '.csv' for t in tables)}{plots}",
            highlight=False, markup=False,
        )
    except BrokenPipeError:  # the reader went away (report | head): the files are written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
    return 0


if __name__ == "__main__":
    sys.exit(main())
