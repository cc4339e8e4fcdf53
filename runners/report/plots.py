"""The report's plots: success at turn K, the games' numeric scores, and success against the game's
size label when the run has several sizes; each as PNG, PDF and SVG (or the formats asked for).

Every success curve carries its Wilson 95% band. Many curves are drawn in panels, one per agent
pair (or per value of the field that leaves at most eight curves a panel in the fewest panels), the
other fields' values keeping one style in every panel, named once in a legend under the panels.
Styles combine twenty hues with seven markers and four line styles, so no two of the first 140
series look alike. Series with the same numbers are drawn once, labelled with the names they stand
for ("own = both", a long list wrapped over lines); points of different series at one size
are set slightly apart. Figures are laid out by matplotlib's constrained layout, which keeps every
legend and label inside the image. Many conditions' scores are drawn as panels in one column, the
conditions named once under the last.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from engine.analysis import (
    AGENTS, Source, condition_fields, observed_values, score_keys, scores_per_condition, size_field, success_by_turn,
    success_series, totals_of, wilson_interval,
)

from runners.dashboard.widths import short_names

from runners.report.cells import key_label, score_labels

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DataT = TypeVar("DataT")  # what a plotted series holds
PLOTS_INSTALL = "pip install -e '.[plots]'"
PLOT_FORMATS = ("png", "pdf", "svg")
PANEL_INCHES = (6.0, 4.0)  # one panel; a single-panel figure is 9 x 5.5 inches
SINGLE_INCHES = (9.0, 5.5)
FIGURE_DPI = 150  # PNG: 1350 x 825 pixels for one panel
PLOT_NAMES = ("success_by_turn", "scores", "success_vs_size")
PLOT_FILES = tuple(f"{name}.{fmt}" for name in PLOT_NAMES for fmt in PLOT_FORMATS)
MAX_LINES = 8  # curves in one panel before the figure is split into panels
STACKED_FROM = 6  # conditions in the scores figure from which its panels are stacked in one column
MAX_INCHES = 16.0  # the widest a figure is drawn: 2400 pixels in PNG
MAX_PANELS = 12

PALETTE = (  # matplotlib's ten, then ten darker hues of its tab20b and tab20c
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363",
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # seven, prime to twenty: hue and marker pairs repeat after 140
LABEL_CHARS = 60  # a legend entry wraps past this
LINESTYLES = ("-", "--", ":", "-.")


def style(i: int) -> dict:
    """The i-th series' hue (``c``), marker and line style."""
    return {"c": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)], "linestyle": LINESTYLES[(i // 140) % len(LINESTYLES)]}


def merged(series: Sequence[tuple[str, DataT, int]]) -> list[tuple[str, DataT, int]]:
    """Series (label, data, style index) with equal data drawn once, labelled "a = b"."""
    groups: dict[str, list[tuple[str, DataT, int]]] = {}
    for item in series:
        groups.setdefault(repr(item[1]), []).append(item)
    return [(" = ".join(label for label, _, _ in group), group[0][1], group[0][2]) for group in groups.values()]


def wrapped(label: str) -> str:
    return "\n".join(textwrap.wrap(label, LABEL_CHARS)) or label


def panel_field(fields: Sequence[str], keys: Sequence[tuple[str, ...]]) -> str | None:
    """The field that makes the panels when there are too many series for one: of the fields that
    leave at most ``MAX_LINES`` series a panel, the agents, else the one with the fewest panels; when
    none does, the agents or the field with the fewest values. None when one panel will do."""
    if len(keys) <= MAX_LINES or len(fields) < 2:
        return None
    values = {f: len({k[i] for k in keys}) for i, f in enumerate(fields)}
    candidates = [f for f in fields if 1 < values[f] <= MAX_PANELS]
    if not candidates:
        return None
    most = {f: max(sum(k[i] == v for k in keys) for v in {k[i] for k in keys}) for i, f in enumerate(fields) if f in candidates}
    fitting = [f for f in candidates if most[f] <= MAX_LINES] or candidates
    return AGENTS if AGENTS in fitting else min(fitting, key=lambda f: (values[f], fields.index(f)))


def shortened(keys: Sequence[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The keys with model names in their shortest unique forms (each of "X / Y" on its own)."""
    short = short_names(name for key in keys for value in key for name in value.split(" / "))
    return [tuple(" / ".join(short[n] for n in value.split(" / ")) for value in key) for key in keys]


def make_plots(run: Source, out: Path, formats: Sequence[str] = PLOT_FORMATS) -> list[Path] | None:
    """Write the plots into ``out`` in each of ``formats``; None when matplotlib is not installed."""
    try:
        import matplotlib.figure
    except ImportError:
        return None
    del matplotlib
    written = []
    for name, fig in figures(run):
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(path, dpi=FIGURE_DPI, format=fmt)
            written.append(path)
    return written


def figures(run: Source) -> list[tuple[str, Figure]]:
    """The plots as matplotlib figures, by file stem."""
    run = totals_of(run)
    out = [("success_by_turn", turn_figure(run)), ("scores", scores_figure(run))]
    if size_field(run) is not None:
        out.append(("success_vs_size", size_figure(run)))
    return [(name, fig) for name, fig in out if fig is not None]  # no scores figure when no game gives a mean


def _panels(count: int, *, sharey: bool = True, columns: int | None = None, size: tuple[float, float] | None = None):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    cols = columns or (count if count <= 3 else min(3, math.ceil(math.sqrt(count))))
    rows = math.ceil(count / cols)
    if size is None:
        width = min(PANEL_INCHES[0], MAX_INCHES / cols)  # never wider than MAX_INCHES in all
        size = SINGLE_INCHES if count == 1 else (width * cols, PANEL_INCHES[1] * rows + 0.5)
    fig = Figure(figsize=size, dpi=FIGURE_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=sharey).ravel().tolist()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes[:count]


def _legend(fig, axes) -> None:
    """One panel: its legend inside it when it has a few entries, else to its right. Panels: one
    legend under them all (a series keeps its style in every panel), each entry once."""
    entries: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if not entries:
        return
    labels = [wrapped(label) for label in entries]
    if len(axes) == 1 and len(entries) <= 6 and max(len(label) for label in entries) <= LABEL_CHARS:
        axes[0].legend(fontsize="small" if len(entries) <= 4 else "x-small", loc="best")
    elif len(axes) == 1:
        fig.legend(list(entries.values()), labels, fontsize="x-small", loc="outside right upper")
    else:
        columns = min(3, len(entries))
        lines = sum(max(labels[i].count("\n") + 1 for i in range(row, min(row + columns, len(labels))))
                    for row in range(0, len(labels), columns))
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height + 0.16 * lines + 0.3)  # room for the legend: the panels keep theirs
        fig.legend(list(entries.values()), labels, fontsize="x-small", loc="outside lower center", ncols=columns)


def _grouped(fields: list[str], keys: list[tuple[str, ...]]):
    """The panels (title, indices of their series) and each series' label and style index."""
    by = panel_field(fields, keys)
    if by is None:
        return [("", list(range(len(keys))))], [key_label(fields, k) for k in keys], list(range(len(keys)))
    at = fields.index(by)
    rest = [f for f in fields if f != by]
    rest_keys = [tuple(v for i, v in enumerate(k) if i != at) for k in keys]
    order = list(dict.fromkeys(rest_keys))  # the same other values keep one style in every panel
    panels: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        panels.setdefault(key_label([by], [k[at]]), []).append(i)
    return list(panels.items()), [key_label(rest, k) for k in rest_keys], [order.index(k) for k in rest_keys]


def turn_figure(run: Source):
    from matplotlib.ticker import MaxNLocator

    run = totals_of(run)
    fields = condition_fields(run)
    curves = success_by_turn(run, fields)
    panels, labels, styles = _grouped(fields, shortened([c.key for c in curves]))
    fig, axes = _panels(len(panels))
    max_turn = len(curves[0].solved_by) if curves else 0
    ks = list(range(1, max_turn + 1))
    for ax, (title, members) in zip(axes, panels):
        series = merged([(labels[i], (curves[i].n, tuple(curves[i].solved_by)), styles[i]) for i in members])
        for label, (n, solved_by), s in series:
            if not n:
                continue
            label = f"{label} (n={n})"
            st = style(s)
            ys = [100 * k / n for k in solved_by]
            band = [wilson_interval(k, n) for k in solved_by]
            ax.fill_between(ks, [100 * lo for lo, _ in band], [100 * hi for _, hi in band], step="post", alpha=0.12,
                            fc=st["c"], linewidth=0)
            ax.step(ks, ys, where="post", label=label, c=st["c"], linestyle=st["linestyle"])
            ax.plot(ks, ys, linestyle="none", marker=st["marker"], c=st["c"], markersize=3.5,
                    markevery=max(1, len(ks) // 12))
        ax.set(title=title or None, ylim=(-2, 102))
        if max_turn:
            ax.set_xlim(0.5, max_turn + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    _legend(fig, axes)
    _labels(fig, axes, "turn K", "solved within K turns (%)", "Success rate at turn K, Wilson 95% bands")
    return fig


def _labels(fig, axes, x: str, y: str, title: str) -> None:
    if len(axes) == 1:
        axes[0].set(xlabel=x, ylabel=y, title=title)
    else:
        for ax in axes:  # under each panel of the last row: a legend under the panels goes below them
            if ax.get_subplotspec().is_last_row():
                ax.set_xlabel(x)
        fig.supylabel(y)
        fig.suptitle(title)


def scores_figure(run: Source):
    """One panel per score (each its own unit and scale: steps, ratios and rates never share an
    axis), a bar per condition with its 95% interval."""
    run = totals_of(run)
    numeric = [key for key, kind in score_keys(run).items() if kind == "mean"]
    if not numeric:
        return None
    fields = condition_fields(run)
    labels = score_labels(run)
    rows = scores_per_condition(run, fields)
    stacked = len(numeric) > 1 and len(rows) > STACKED_FROM  # one column, the conditions named once, under the last
    if stacked:
        width = min(MAX_INCHES, max(PANEL_INCHES[0], 2.0 + 0.35 * len(rows)))
        fig, axes = _panels(len(numeric), sharey=False, columns=1, size=(width, 2.2 * len(numeric) + 2.5))
    else:
        fig, axes = _panels(len(numeric), sharey=False)
    names = [key_label(fields, k) for k in shortened([r.key for r in rows])]
    tilt = len(rows) > 4 or len(numeric) > 1
    for i, (ax, key) in enumerate(zip(axes, numeric)):
        xs, ys, below, above = [], [], [], []
        for j, row in enumerate(rows):
            s = row.scores.get(key)
            if s is None or s.n == 0:
                continue
            xs.append(j)
            ys.append(s.value)
            below.append(0.0 if math.isnan(s.low) else max(0.0, s.value - s.low))  # rounding may put the
            above.append(0.0 if math.isnan(s.high) else max(0.0, s.high - s.value))  # end past the value
        ax.bar(xs, ys, 0.7, yerr=[below, above], capsize=2, fc=PALETTE[i % len(PALETTE)], error_kw={"elinewidth": 1})
        if stacked and ax is not axes[-1]:
            ax.set_xticks(range(len(rows)))
            ax.tick_params(labelbottom=False)
        else:
            ax.set_xticks(range(len(rows)), names, rotation=30 if tilt else 0, ha="right" if tilt else "center",
                          fontsize="x-small" if len(rows) > 12 else "small")
        if not any(ys) and all(b == a == 0 for b, a in zip(below, above)):  # bars of height 0: say so
            ax.text(0.5, 0.8, "0 in every condition", transform=ax.transAxes, ha="center", va="center", c="0.4")
        ax.set(title=labels[key])
        ax.grid(axis="y", alpha=0.3)
    if len(axes) == 1:
        axes[0].set(ylabel="mean, 95% interval", title=f"{labels[numeric[0]]}, per condition")
    else:
        fig.supylabel("mean, 95% interval")
        fig.suptitle("Scores per condition, one panel per score")
    return fig


def size_figure(run: Source):
    run = totals_of(run)
    x_field = size_field(run)
    sizes = observed_values(run, x_field)
    places = {x: float(x) for x in sizes}
    spread = (max(places.values()) - min(places.values())) or 1.0
    series_fields, series = success_series(run, x_field)
    panels, labels, styles = _grouped(series_fields, shortened([s.key for s in series])) if series_fields else ([("", [0])], [""], [0])
    fig, axes = _panels(len(panels))
    for ax, (title, members) in zip(axes, panels):
        drawn = merged([
            (labels[i] or "all", tuple((x, c.n, c.successes) for x, c in series[i].points if c.n), styles[i]) for i in members
        ])
        for j, (label, points, s) in enumerate(drawn):
            if not points:
                continue
            st = style(s)
            dodge = 0.012 * spread * (j - (len(drawn) - 1) / 2)  # points at one size set apart
            xs = [places[x] + dodge for x, _, _ in points]
            ys = [100 * k / n for _, n, k in points]
            bands = [wilson_interval(k, n) for _, n, k in points]
            lows, highs = [100 * lo for lo, _ in bands], [100 * hi for _, hi in bands]
            ax.fill_between(xs, lows, highs, alpha=0.10, fc=st["c"], linewidth=0)
            ax.errorbar(xs, ys, yerr=[[max(0.0, y - lo) for y, lo in zip(ys, lows)], [max(0.0, hi - y) for y, hi in zip(ys, highs)]],
                        capsize=3, label=label, **st)
        ax.set_xticks(list(places.values()), sizes)
        ax.set(title=title or None, ylim=(-2, 102))
        ax.grid(alpha=0.3)
    _legend(fig, axes)
    _labels(fig, axes, x_field, "success (%), Wilson 95% interval", f"Success rate by {x_field}")
    return fig
