"""The report's plots: success at turn K, the games' numeric scores, and success against the game's
size label when the run has several sizes; each as PNG, PDF and SVG (or the formats asked for).

Every success curve carries its Wilson 95% band. Many curves are drawn in panels, one per agent
pair (or per value of the field with the fewest values), the other fields' values keeping one style
in every panel. Styles combine ten hues with seven markers and four line styles, so no two of
the first 70 series look alike. Series with the same numbers are drawn once, labelled with every
name they stand for ("own = both"); points of different series at one size are set slightly apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from engine.analysis import (
    AGENTS, Source, condition_fields, observed_values, score_keys, scores_per_condition, size_field, success_by_turn,
    success_series, totals_of, wilson_interval,
)

from runners.dashboard.widths import short_names

from runners.report.cells import key_label, score_labels

PLOTS_INSTALL = "pip install -e '.[plots]'"
PLOT_FORMATS = ("png", "pdf", "svg")
PANEL_INCHES = (6.0, 4.0)  # one panel; a single-panel figure is 9 x 5.5 inches
SINGLE_INCHES = (9.0, 5.5)
FIGURE_DPI = 150  # PNG: 1350 x 825 pixels for one panel
PLOT_NAMES = ("success_by_turn", "scores", "success_vs_size")
PLOT_FILES = tuple(f"{name}.{fmt}" for name in PLOT_NAMES for fmt in PLOT_FORMATS)
MAX_LINES = 8  # curves in one panel before the figure is split into panels
MAX_PANELS = 12

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # seven, prime to ten: hue and marker pairs repeat after 70
LINESTYLES = ("-", "--", ":", "-.")


def style(i: int) -> dict:
    """The i-th series' hue (``c``), marker and line style."""
    return {"c": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)], "linestyle": LINESTYLES[(i // 70) % len(LINESTYLES)]}


def merged(series: Sequence[tuple[str, object, int]]) -> list[tuple[str, object, int]]:
    """Series (label, data, style index) with equal data drawn once, labelled "a = b"."""
    groups: dict[object, list[tuple[str, object, int]]] = {}
    for item in series:
        groups.setdefault(repr(item[1]), []).append(item)
    return [(" = ".join(label for label, _, _ in group), group[0][1], group[0][2]) for group in groups.values()]


def panel_field(fields: Sequence[str], keys: Sequence[tuple[str, ...]]) -> str | None:
    """The field that makes the panels when there are too many series for one: the agents, or
    else the field with the fewest values; None when one panel will do."""
    if len(keys) <= MAX_LINES or len(fields) < 2:
        return None
    values = {f: len({k[i] for k in keys}) for i, f in enumerate(fields)}
    candidates = [f for f in fields if 1 < values[f] <= MAX_PANELS]
    if not candidates:
        return None
    return AGENTS if AGENTS in candidates else min(candidates, key=lambda f: (values[f], fields.index(f)))


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
        fig.tight_layout()
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(path, dpi=FIGURE_DPI, format=fmt)
            written.append(path)
    return written


def figures(run: Source) -> list[tuple[str, object]]:
    """The plots as matplotlib figures, by file stem."""
    run = totals_of(run)
    out = [("success_by_turn", turn_figure(run)), ("scores", scores_figure(run))]
    if size_field(run) is not None:
        out.append(("success_vs_size", size_figure(run)))
    return [(name, fig) for name, fig in out if fig is not None]  # no scores figure when no game gives a mean


def _panels(count: int, *, sharey: bool = True):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    cols = count if count <= 3 else min(3, math.ceil(math.sqrt(count)))
    rows = math.ceil(count / cols)
    size = SINGLE_INCHES if count == 1 else (PANEL_INCHES[0] * cols, PANEL_INCHES[1] * rows + 0.5)
    fig = Figure(figsize=size, dpi=FIGURE_DPI)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=sharey).ravel().tolist()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes[:count]


def _legend(ax, entries: int, panels: int) -> None:
    if entries == 0 or not ax.get_legend_handles_labels()[0]:
        return
    if panels > 1 or entries <= 6:
        ax.legend(fontsize="x-small" if panels > 1 or entries > 4 else "small", loc="best")
    else:  # many entries in one panel: the legend goes to the right of the plot
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


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
        _legend(ax, len(series), len(panels))
    _labels(fig, axes, "turn K", "solved within K turns (%)", "Success rate at turn K, Wilson 95% bands")
    return fig


def _labels(fig, axes, x: str, y: str, title: str) -> None:
    if len(axes) == 1:
        axes[0].set(xlabel=x, ylabel=y, title=title)
    else:
        fig.supxlabel(x)
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
    fig, axes = _panels(len(numeric), sharey=False)
    if len(rows) > 12:
        width, height = fig.get_size_inches()
        fig.set_size_inches(max(width, 0.45 * len(rows) * min(3, len(numeric))), height + 1)
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
        ax.set_xticks(range(len(rows)), names, rotation=30 if tilt else 0, ha="right" if tilt else "center",
                      fontsize="x-small" if len(rows) > 12 else "small")
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
        _legend(ax, len(drawn), len(panels))
    _labels(fig, axes, x_field, "success (%), Wilson 95% interval", f"Success rate by {x_field}")
    return fig
