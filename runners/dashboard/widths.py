"""Tables that fit the terminal's width: columns are dropped by priority, numbers are never cut, and
model names are shortened to their shortest unique forms.

Written by hand because rich, given a table wider than the console, shrinks every column evenly and
cuts numbers (``99.…``) and has no notion of a column that may be left out. Here each column says
how narrow it may get (a number: its widest cell; a number with an interval: its widest word, as it
may wrap at spaces; a name: a few characters, cut with an ellipsis); the columns of lowest priority
are dropped until the rest fit, and each kept column gets an exact width, which rich then honours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from rich import box
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

_SEPARATORS = re.compile(r"[:/]")


def short_names(names: Iterable[str]) -> dict[str, str]:
    """Each name's shortest unique form among ``names``: the fewest trailing parts (split at ``:``
    and ``/``) that no other name ends with, such as ``gpt-4o`` and ``gpt-4o-mini`` for
    ``openai:gpt-4o`` and ``openai:gpt-4o-mini``; names without parts stay as they are."""
    unique = list(dict.fromkeys(names))
    out = {}
    for name in unique:
        starts = [m.end() for m in _SEPARATORS.finditer(name)][::-1]
        out[name] = name
        for start in starts:
            tail = name[start:]
            if tail and not any(other != name and _ends_with_part(other, tail) for other in unique):
                out[name] = tail
                break
    return out


def _ends_with_part(name: str, tail: str) -> bool:
    return name == tail or (name.endswith(tail) and name[-len(tail) - 1] in ":/")


@dataclass
class Column:
    """One column: its header, its cells, and how it may give way when the table is too wide."""

    header: str
    cells: list[str]
    priority: int = 0  # columns with the highest number are dropped first; 0 is never dropped
    justify: JustifyMethod = "right"
    short: list[str] | None = None  # shorter cells (model names), used when the full ones do not fit
    squeeze: int | None = None  # may be cut with an ellipsis down to this many characters
    wrap: bool = False  # may wrap at spaces, never inside a word

    def widest_cell(self, short: bool = False) -> int:
        cells = self.short if short and self.short is not None else self.cells
        return max([len(c) for c in cells], default=0)

    def widest(self) -> int:
        return max(len(self.header), self.widest_cell())

    def least(self, tight: bool = False) -> int:
        """The narrowest this column may be; names of priority 0 are cut only when ``tight``."""
        header = max((len(w) for w in self.header.split()), default=0)
        cells = self.short if self.short is not None else self.cells
        if self.squeeze is not None and (tight or self.priority > 0):
            need = min(self.squeeze, max((len(c) for c in cells), default=0))
        elif self.wrap:
            need = max((len(w) for c in cells for w in c.split()), default=0)
        else:
            need = max((len(c) for c in cells), default=0)
        return max(header, need, 1)


def fit_columns(columns: Sequence[Column], width: int, overhead: int = 3) -> tuple[list[Column], list[int], list[str]]:
    """The columns that fit in ``width`` with ``overhead`` characters around each (padding and a
    separator), each one's width, and the headers of the columns left out."""
    for tight in (False, True):  # names cut only when dropping every other column is not enough
        kept = list(columns)
        dropped: list[str] = []
        while sum(c.least(tight) + overhead for c in kept) > width:
            candidates = [c for c in kept if c.priority > 0]
            if not candidates:
                break
            worst = max(candidates, key=lambda c: (c.priority, kept.index(c)))
            kept.remove(worst)
            dropped.append(worst.header)
        if sum(c.least(tight) + overhead for c in kept) <= width:
            break
    widths = [c.least(tight) for c in kept]
    spare = width - sum(w + overhead for w in widths)
    # Spare room goes in steps, each to the columns by priority: names in their short forms, whole
    # cells, full names, then whole headers (so that they take fewer lines).
    order = sorted(range(len(kept)), key=lambda i: (kept[i].priority, i))
    targets = (
        lambda c: c.widest_cell(short=True) if c.squeeze is not None and c.priority == 0 else 0,
        lambda c: c.widest_cell(short=True),
        Column.widest_cell,
        Column.widest,
    )
    for target in targets:
        for i in order:
            grow = min(spare, target(kept[i]) - widths[i])
            if grow > 0:
                widths[i] += grow
                spare -= grow
    return kept, widths, dropped


def fitted_table(
    columns: Sequence[Column], width: int, *, title: str | None = None, compact: bool = True, **options
) -> tuple[Table, list[str]]:
    """A rich table of the columns that fit in ``width``, and the headers of those left out.
    ``compact``: no outer border and a rule under the header only (the dashboard); otherwise
    rich's default box. Cells stay on one line unless their column may wrap."""
    if compact:
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, caption_justify="left", **options)
        edges = -3  # n columns: n - 1 separators and 2n - 2 padding, that is 3n - 3
    else:
        table = Table(title=title, title_justify="left", caption_justify="left", **options)
        edges = 1  # n + 1 borders and 2n padding, that is 3n + 1
    kept, widths, dropped = fit_columns(columns, width - edges, overhead=3)
    if any(c.short is not None and c.widest_cell() > w for c, w in zip(kept, widths)):
        # No room for some full names: short names in every column.
        columns = [replace(c, cells=c.short, short=None) if c.short is not None else c for c in columns]
        kept, widths, dropped = fit_columns(columns, width - edges, overhead=3)
    for column, w in zip(kept, widths):
        table.add_column(
            Text(column.header, no_wrap=False, overflow="fold"), justify=column.justify, width=w, no_wrap=not column.wrap,
            overflow="ellipsis" if column.squeeze is not None else "fold",
        )
    for cells in zip(*(c.cells for c in kept)):
        table.add_row(*(Text(c) for c in cells))
    return table, dropped
