"""The report's plots, as PNG files: success at turn K, the games' numeric scores, and success
against the game's size label when the run has several sizes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from engine.records import GameRecord
from engine.report import (
    condition_fields,
    observed_values,
    score_keys,
    scores_per_condition,
    size_field,
    success_by_turn,
    success_series,
)

from .tables import key_label, score_labels

PLOTS_INSTALL = "pip install -e '.[plots]'"
FIGURE_INCHES = (8, 5)
FIGURE_DPI = 100  # 800 x 500 pixels
PLOT_FILES = ("success_by_turn.png", "scores.png", "success_vs_size.png")


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

    def legend(ax, entries: int, loc: str) -> None:
        if entries <= 6:
            ax.legend(fontsize="small", loc=loc)
        else:  # many entries: the legend goes to the right of the plot
            ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)

    fields = condition_fields(records)
    written = []

    fig, ax = figure()
    curves = success_by_turn(records, fields)
    styles = ("-", "--", ":", "-.")
    for i, curve in enumerate(curves):
        ks = list(range(1, len(curve.solved_by) + 1))
        ys = [100 * r if r is not None else math.nan for r in curve.rates]
        # The default property cycle repeats after ten curves: the line style then changes.
        ax.step(ks, ys, where="post", linestyle=styles[(i // 10) % len(styles)],
                label=f"{key_label(fields, curve.key)} (n={curve.n})")
    ax.set(xlabel="turn K", ylabel="solved within K turns (%)", title="Success rate at turn K", ylim=(-2, 102))
    if curves and curves[0].solved_by:
        ax.set_xlim(0.5, len(curves[0].solved_by) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    legend(ax, len(curves), "lower right")
    written.append(save(fig, "success_by_turn.png"))

    numeric = [key for key, kind in score_keys(records).items() if kind == "mean"]
    if numeric:
        fig, ax = figure()
        labels = score_labels(records)
        rows = scores_per_condition(records, fields)
        width = 0.8 / len(numeric)
        for i, key in enumerate(numeric):
            xs, ys, below, above = [], [], [], []
            for j, row in enumerate(rows):
                s = row.scores.get(key)
                if s is None or s.n == 0:
                    continue
                xs.append(j + (i - (len(numeric) - 1) / 2) * width)
                ys.append(s.value)
                below.append(0.0 if math.isnan(s.low) else s.value - s.low)
                above.append(0.0 if math.isnan(s.high) else s.high - s.value)
            ax.bar(xs, ys, width, yerr=[below, above], capsize=2, label=labels[key], error_kw={"elinewidth": 1})
        tilt = len(rows) > 4
        ax.set_xticks(range(len(rows)), [key_label(fields, r.key) for r in rows], rotation=30 if tilt else 0,
                      ha="right" if tilt else "center", fontsize="x-small" if len(rows) > 12 else "small")
        ax.set(ylabel="mean, 95% interval", title="Scores, per condition")
        ax.grid(axis="y", alpha=0.3)
        legend(ax, len(numeric), "best")
        written.append(save(fig, "scores.png"))

    x_field = size_field(records)
    if x_field is not None:
        sizes = observed_values(records, x_field)
        fig, ax = figure()
        series_fields, series = success_series(records, x_field)
        for s in series:
            points = [(float(x), c) for x, c in s.points if c.n]
            if not points:
                continue
            xs = [x for x, _ in points]
            ys = [100 * c.rate for _, c in points]
            below = [max(0.0, 100 * (c.rate - c.low)) for _, c in points]
            above = [max(0.0, 100 * (c.high - c.rate)) for _, c in points]
            ax.errorbar(xs, ys, yerr=[below, above], marker="o", capsize=3, label=key_label(series_fields, s.key))
        ax.set_xticks([float(x) for x in sizes], sizes)
        ax.set(xlabel=x_field, ylabel="success (%), Wilson 95% interval", title=f"Success rate by {x_field}",
               ylim=(-2, 102))
        ax.grid(alpha=0.3)
        legend(ax, len(series), "best")
        written.append(save(fig, "success_vs_size.png"))
    return written
