"""What is shown of spending: the forecast table (``--dry-run``) and the cost line of the dashboard
and the summary."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from engine.records.rundir import Plan
from engine.session.playing import models_play
from engine.spending.budget import Spending
from engine.spending.forecast import Forecast


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def _minutes(value: float | None) -> str:
    if value is None:
        return "unknown"
    if value < 1:
        return f"{value * 60:.0f} s"
    return f"{value:.0f} min" if value < 120 else f"{value / 60:.1f} h"


def print_forecast(console: Console, fc: Forecast, plan: Plan) -> None:
    if not models_play(plan):
        console.print(f"Forecast: {fc.games} games, no model plays: nothing is paid.")
        return
    table = Table(title=f"forecast: {fc.games} games to play ({fc.sampled} played with a scripted stand-in)", title_justify="left")
    for column in ("model", "calls", "at most", "prompt tokens", "reply tokens", "cost", "at most"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for name, m in fc.models.items():
        table.add_row(
            name, f"{m.calls:,.0f}", f"{m.calls_max:,.0f}", f"{m.prompt_tokens:,.0f}", f"{m.completion_tokens:,.0f}",
            _money(m.cost), _money(m.cost_max),
        )
    console.print(table)
    replies = f"replies at {fc.reply_tokens:.0f} tokens" if fc.reply_tokens is not None else "replies as the stand-in wrote them (a model writes more: --reply-tokens K)"
    time = _minutes(fc.minutes) if not fc.unlimited else f"unknown ({', '.join(fc.unlimited)} has no known limit: --rpm/--tpm)"
    console.print(
        f"Expected: {fc.calls:,.0f} calls, {fc.tokens:,.0f} tokens, {_money(fc.cost)}; {replies}; no cache hits assumed. "
        f"\"At most\": every game to its turn limit. Time at the limits: {time}.",
        soft_wrap=True,
    )


def spending_line(spending: Spending) -> str:
    """Cost and tokens so far and projected to the run's end, and the caps."""
    projected = spending.projected()
    line = f"spent {_money(spending.cost)}, {spending.tokens:,} tokens"
    if projected is not None:
        line += f" | projected at the end {_money(projected[0])}, {projected[1]:,.0f} tokens"
    max_cost, max_tokens = spending.caps
    if max_cost is not None:
        line += f" | cap {_money(max_cost)}"
    if max_tokens is not None:
        line += f" | cap {max_tokens:,} tokens"
    missing = sorted(spending.hub.prices.missing)
    if missing:
        line += f" | no price: {', '.join(missing)} (not counted; --prices FILE)"
    return line
