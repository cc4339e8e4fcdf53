"""The report's tables in each output format: the terminal (rich), Markdown, CSV and one
self-contained HTML page with the plots inlined; LaTeX in ``latex``."""

from __future__ import annotations

import base64
import csv
import html
import io
from collections.abc import Sequence
from pathlib import Path

from rich.table import Table as RichTable
from rich.text import Text

from runners.report.latex import latex_escape, thinned, to_latex
from runners.report.cells import Table

__all__ = ["latex_escape", "to_csv", "to_html", "to_latex", "to_markdown", "to_rich"]

TERMINAL_TURNS = 12  # K columns shown at most on the terminal


def to_rich(table: Table, max_thinned: int = TERMINAL_TURNS) -> RichTable:
    """The table for the terminal; a long run of K columns is thinned to at most ``max_thinned``,
    always keeping the first and the last."""
    keep, thin = thinned(table, max_thinned)
    title = table.title + (" (some K left out here; the files have every K)" if thin else "")
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


def to_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.csv_header)
    writer.writerows(table.csv_rows)
    return buffer.getvalue()


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; }
table { border-collapse: collapse; margin: 0.5em 0 0.3em; font-size: 0.9em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; }
th { border-bottom: 2px solid #444; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
p.note { opacity: 0.75; font-size: 0.85em; max-width: 60em; }
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
