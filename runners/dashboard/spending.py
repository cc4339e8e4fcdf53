"""What is shown of spending: the forecast table (``--dry-run``), the seeds a comparison needs
(``--detect``), and the cost line of the dashboard and the summary."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from engine.analysis import ALPHA, POWER, compared_rates, independent_discordance, paired_seeds, unpaired_seeds
from engine.policies import models_play
from engine.records import Plan
from engine.spending import Forecast, Spending


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
    if fc.batched:
        time += (f"; {', '.join(fc.batched)} in the providers' batches (--batch), at the batch price: "
                 "a batch per turn, each within 24 h, often minutes")
    measured = {name: m.cached_share for name, m in fc.models.items() if m.cached_share}
    cache = ("prefix-cache reads as this run measured them: " + ", ".join(f"{n} {100 * v:.0f}%" for n, v in measured.items())
             if measured else "no prefix-cache hits assumed")
    console.print(
        f"Expected: {fc.calls:,.0f} calls, {fc.tokens:,.0f} tokens, {_money(fc.cost)}; {replies}; {cache}. "
        f"\"At most\": every game to its turn limit. Time at the limits: {time}.",
        soft_wrap=True,
    )


def detection_lines(difference: float, base: float, seeds: int) -> list[str]:
    """The seeds per condition that detect ``difference`` in success rate (``engine.analysis.power``),
    unpaired and paired by seed, against the ``seeds`` the plan plays per condition."""
    p1, p2 = compared_rates(difference, base)
    psi, least = independent_discordance(p1, p2), p2 - p1
    paired = f"  paired by seed: {paired_seeds(p1, p2):,}"
    if psi - least < 1e-9:
        paired += f" (McNemar's exact test, the report's): {100 * psi:.0f}% of seeds end differently, as these rates force"
    else:
        between = f"{paired_seeds(p1, p2, psi / 2):,} if {100 * psi / 2:.0f}% end differently, " if psi / 2 > least else ""
        paired += (
            f" at most (McNemar's exact test, the report's), if a seed's outcomes under the two conditions were independent "
            f"({100 * psi:.0f}% of seeds end differently); seeds that agree across conditions need fewer: {between}"
            f"{paired_seeds(p1, p2, least):,} if only {100 * least:.0f}% do (no seed won under the worse condition alone)"
        )
    return [
        f"Detect {100 * p1:.0f}% against {100 * p2:.0f}% success ({100 * difference:.0f} points) with "
        f"{100 * POWER:.0f}% power, two-sided alpha {ALPHA:g}. Seeds per condition:",
        f"  unpaired: {unpaired_seeds(p1, p2):,} (two-proportion z test, pooled normal approximation)",
        paired,
        f"  this plan: {seeds:,} seeds per condition",
    ]


def print_detection(console: Console, difference: float, base: float, seeds: int) -> None:
    for line in detection_lines(difference, base, seeds):
        console.print(line, soft_wrap=True, highlight=False)


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
