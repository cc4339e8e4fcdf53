"""The report's tables as LaTeX for a paper: booktabs rules, ranges with en-dashes, every special
character escaped, and each table sized for a page.

How a table is made to fit:

- rows: a table of more than ``MAX_ROWS`` rows is split into one table per value of one of its
  label columns (the one with the fewest values that still splits it), that column going to the
  caption; a part still too long is cut into numbered parts;
- columns: model names in the label columns are shortened to their shortest unique forms
  (``openai:gpt-4o-mini`` to ``gpt-4o-mini``); a long run of K columns (success at turn K) is thinned to ``MAX_THINNED`` (the CSV file
  has every K); a cell with an interval is set on two lines, the value above and the interval (and
  n) below in small type; a table still wider than ``PAGE_CHARS`` characters is scaled down to the
  text width with ``\\resizebox`` (graphicx), so no column is lost.

The widths are estimated in characters, since the text width is not known here.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace

from runners.dashboard.widths import short_names

from runners.report.cells import Table

MAX_ROWS = 30  # rows of one LaTeX table at most
MAX_THINNED = 10  # K columns at most
HEADER_CHARS = 10  # a longer header is set on several lines
PAGE_CHARS = 90  # characters of a table's widest line that fit the text width (10 pt, \small)
PREAMBLE = "% Tables of a run report. Needs \\usepackage{booktabs} and \\usepackage{graphicx} (for \\resizebox)."

_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}
_RANGE = re.compile(r"(?<=\d)-(?=\d)")  # 12.5-40.1: a range, set with an en-dash
_COUNT = re.compile(r" \((\d+)\)$")  # the games a cell holds
_INTERVAL = re.compile(r"^(\S+) (\[.*)$")  # "70.0 [48.1-85.5] (20)": a value and its interval


def latex_escape(text: str) -> str:
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def number_cell(text: str) -> str:
    """A numeric cell: ranges with en-dashes; a value with an interval on two lines."""
    match = _INTERVAL.match(text)
    if match is None:
        return _RANGE.sub("--", latex_escape(text))
    value, interval = (_RANGE.sub("--", latex_escape(part)) for part in match.groups())
    return f"\\begin{{tabular}}[t]{{@{{}}r@{{}}}}{value}\\\\{{\\scriptsize {interval}}}\\end{{tabular}}"


def header_lines(text: str, width: int = HEADER_CHARS) -> list[str]:
    """A header in lines of about ``width`` characters, broken at spaces (a longer word keeps a line)."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def header_cell(text: str, align: str) -> str:
    lines = header_lines(text)
    if len(lines) == 1:
        return latex_escape(text)
    return f"\\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}" + "\\\\".join(latex_escape(line) for line in lines) + "\\end{tabular}"


def _cell_chars(text: str) -> int:
    """Characters a cell takes across: a cell with an interval takes its longer line."""
    match = _INTERVAL.match(text)
    if match is None:
        return len(text)
    value, interval = match.groups()
    return max(len(value), round(0.7 * len(interval)))  # the interval is in \scriptsize


@dataclass
class Part:
    """One LaTeX table: a table's columns and rows, what it was split by, and its place."""

    table: Table
    keep: list[int]  # the columns shown
    rows: list[list[str]]
    split: str = ""  # "field=value" of the rows, when split
    number: int = 0  # n of "part n of m", when cut
    parts: int = 0
    thinned: bool = False

    def width(self) -> int:
        """The widest line in characters, with 2 characters between columns."""
        header = [max(len(line) for line in header_lines(self.table.header[i])) for i in self.keep]
        widths = [max([h] + [_cell_chars(r[i]) for r in self.rows]) for h, i in zip(header, self.keep)]
        return sum(widths) + 2 * len(widths)


def thinned(table: Table, limit: int = MAX_THINNED) -> tuple[list[int], bool]:
    """The columns to show: a long run of thin columns keeps at most ``limit``, the first and the
    last among them."""
    keep = list(range(len(table.header)))
    if not table.thin_from or len(keep) - table.thin_from <= limit:
        return keep, False
    tail = keep[table.thin_from :]
    step = -(-(len(tail) - 1) // (limit - 1))
    return keep[: table.thin_from] + sorted(set(tail[::step]) | {tail[-1]}), True


def shortened(table: Table) -> Table:
    """The table with the model names of its label columns in their shortest unique forms (each
    name of an agents label such as "X / Y" on its own)."""
    names = [name for row in table.rows for cell in row[: table.labels] for name in cell.split(" / ")]
    short = short_names(names)
    rows = [[" / ".join(short[n] for n in cell.split(" / ")) for cell in row[: table.labels]] + row[table.labels :] for row in table.rows]
    return replace(table, rows=rows)


def same_count(table: Table) -> Table:
    """The table without the count "(n)" after each interval when it is the same in every cell; the
    title then says it."""
    cells = [c for row in table.rows for c in row[table.labels :] if _INTERVAL.match(c)]
    counts = {m.group(1) if (m := _COUNT.search(c)) else None for c in cells}
    if len(counts) != 1 or None in counts:
        return table
    rows = [row[: table.labels] + [_COUNT.sub("", c) for c in row[table.labels :]] for row in table.rows]
    return replace(table, rows=rows, title=f"{table.title}, n = {counts.pop()} in every cell")


def split_rows(table: Table, max_rows: int = MAX_ROWS) -> list[Part]:
    """The table as parts of at most ``max_rows`` rows each."""
    table = same_count(shortened(table))
    keep, thin = thinned(table)
    whole = Part(table, keep, table.rows, thinned=thin)
    if len(table.rows) <= max_rows:
        return [whole]
    parts = [whole]
    labels = [i for i in range(table.labels) if i in keep]
    if len(labels) > 1:  # split by the label column with the fewest values that splits the table
        counts = {i: len({r[i] for r in table.rows}) for i in labels}
        splitting = [i for i in labels if counts[i] > 1]
        if splitting:
            by = min(splitting, key=lambda i: (counts[i], i))
            values = list(dict.fromkeys(r[by] for r in table.rows))
            parts = [
                Part(table, [i for i in keep if i != by], [r for r in table.rows if r[by] == v],
                     split=f"{table.header[by]}={v}", thinned=thin)
                for v in values
            ]
    cut = []
    for part in parts:  # a part still too long: cut into numbered parts
        chunks = [part.rows[i : i + max_rows] for i in range(0, len(part.rows), max_rows)]
        cut += [part] if len(chunks) <= 1 else [replace(part, rows=rows, number=n, parts=len(chunks)) for n, rows in enumerate(chunks, start=1)]
    return cut


def _caption(part: Part) -> str:
    text = part.table.title
    extras = [part.split] if part.split else []
    extras += [f"part {part.number} of {part.parts}"] if part.parts else []
    if extras:
        text += f" ({', '.join(extras)})"
    if part.thinned:
        text += "; some K left out, the CSV file has every K"
    return latex_escape(text)


def part_latex(part: Part, label: str) -> list[str]:
    t = part.table
    labels = [i for i in part.keep if i < t.labels]
    spec = "l" * len(labels) + "r" * (len(part.keep) - len(labels))
    body = [
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(header_cell(t.header[i], "l" if i < t.labels else "r") for i in part.keep) + " \\\\",
        "\\midrule",
    ]
    body += [
        " & ".join(latex_escape(row[i]) if i < t.labels else number_cell(row[i]) for i in part.keep) + " \\\\"
        for row in part.rows
    ]
    body += ["\\bottomrule", "\\end{tabular}"]
    if part.width() > PAGE_CHARS:  # still too wide: scaled to the text width
        body = ["\\resizebox{\\textwidth}{!}{%", *body, "}"]
    lines = ["\\begin{table}[ht]", "\\centering", "\\small", f"\\caption{{{_caption(part)}}}", f"\\label{{{label}}}", *body]
    if t.note:
        lines.append(f"\\par\\smallskip\\footnotesize {latex_escape(t.note)}")
    return lines + ["\\end{table}", ""]


def to_latex(tables: Sequence[Table]) -> str:
    lines = [PREAMBLE, ""]
    for t in tables:
        parts = split_rows(t)
        for n, part in enumerate(parts, start=1):
            label = f"tab:{t.name.replace('_', '-')}" + (f"-{n}" if len(parts) > 1 else "")
            lines += part_latex(part, label)
    return "\n".join(lines)
