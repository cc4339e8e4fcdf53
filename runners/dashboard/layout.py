"""How the dashboard is laid out: sections with priorities fitted to the terminal's height, and
tables fitted to its width (``_widths``) with a line saying what they have no room for.

Rich's Live only cuts a frame that is too tall at the bottom, so the fitting is done here: every
section is drawn at the fewest rows it may show and kept in priority order while it fits; from the
first that does not, it and every section after it are left out and named on the last line; the
lines left over go to the tables, by priority, as more rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from runners.dashboard.widths import Column, fitted_table

LEAST_ROWS = 3  # rows a table keeps, with its "+N more" line, when the terminal is short


@dataclass
class Section:
    """Part of the dashboard. ``build(width, rows)`` draws it; ``rows`` is how many table rows it
    would like to show (0 for a fixed part), ``least`` how few it may show when room is short."""

    name: str
    priority: int  # lower numbers stay longest on a short terminal
    build: Callable[[int, int], RenderableType]
    rows: int = 0
    least: int = 0


def _lines(console: Console, options: ConsoleOptions, renderable: RenderableType) -> list[list[Segment]]:
    return console.render_lines(renderable, options.update(height=None), pad=False)


class Dashboard:
    """The sections of one frame, fitted to the width and to ``height`` lines (None: every row)."""

    def __init__(self, sections: Sequence[Section], height: int | None = None) -> None:
        self.sections = list(sections)
        self.height = height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        if self.height is None:
            for section in self.sections:
                yield section.build(width, section.rows)
            return
        budget = self.height - 1  # Live keeps the last line for the cursor
        shown: dict[str, int] = {}
        heights: dict[str, int] = {}
        cache: dict[str, list[list[Segment]]] = {}
        left_out: list[str] = []
        for section in sorted(self.sections, key=lambda s: s.priority):
            rows = min(section.rows, section.least) if section.rows else 0
            lines = _lines(console, options, section.build(width, rows))
            room = budget - sum(heights.values()) - 1  # a line kept for naming what is left out
            if left_out or len(lines) > room:  # once a part is left out, so are those after it
                left_out.append(section.name)
                continue
            shown[section.name], heights[section.name], cache[section.name] = rows, len(lines), lines
        spare = budget - sum(heights.values()) - (1 if left_out else 0)
        for section in sorted(self.sections, key=lambda s: s.priority):
            if section.name in shown and section.rows > shown[section.name] and spare > 0:
                more = min(spare, section.rows - shown[section.name])
                lines = _lines(console, options, section.build(width, shown[section.name] + more))
                while len(lines) - heights[section.name] > spare and more > 0:  # rows that wrap
                    more -= 1
                    lines = _lines(console, options, section.build(width, shown[section.name] + more))
                spare -= len(lines) - heights[section.name]
                heights[section.name], cache[section.name] = len(lines), lines
        for section in self.sections:
            for line in cache.get(section.name, ()):
                yield from line
                yield Segment.line()
        if left_out:
            yield Text(f"hidden, the terminal is too short: {', '.join(left_out)}", style="dim", no_wrap=True, overflow="ellipsis")


def take(items: Sequence, shown: int) -> list:
    """The first ``shown`` items, or all of them when only one would be left out: its row takes the
    line a "+1 more" would."""
    return list(items[:shown]) if shown < len(items) - 1 else list(items)


def _caption(hidden: int, what: str, dropped: Sequence[str], notes: Sequence[str] = ()) -> Text | None:
    """Lines under a table, each cut to the width: its ``notes``, then the rows and the columns it has
    no room for."""
    parts = [f"+{hidden} more {what}"] if hidden > 0 else []
    if dropped:
        parts.append(f"{len(dropped)} column{'s' * (len(dropped) > 1)} left out: " + ", ".join(dropped))
    lines = [*notes, "; ".join(parts)] if parts else list(notes)
    return Text("\n".join(lines), style="dim", no_wrap=True, overflow="ellipsis") if lines else None


def fitted(columns: list[Column], width: int, title: str, hidden: int = 0, what: str = "", notes: Sequence[str] = ()) -> Table:
    table, dropped = fitted_table(columns, width, title=title)
    table.caption = _caption(hidden, what, dropped, notes)
    return table


def counters_section(name: str, title: str, rows: Sequence[tuple[str, dict[str, object]]], priority: int = 3) -> Section:
    """A table of one row per name with its counters (the same keys in every row), as a section."""
    keys = list(dict.fromkeys(k for _, counters in rows for k in counters))

    def build(width: int, shown: int) -> Table:
        part = take(rows, shown)
        columns = [Column(name, [n for n, _ in part], justify="left", squeeze=12)]
        columns += [Column(k, [str(c.get(k, "")) for _, c in part], priority=1 + i) for i, k in enumerate(keys)]
        return fitted(columns, width, title, len(rows) - len(part), name + "s")

    return Section(name, priority, build, rows=len(rows), least=min(len(rows), LEAST_ROWS))
