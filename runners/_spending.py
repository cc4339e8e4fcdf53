"""What the runners show and decide about spending: the forecast (``--dry-run``), the caps
(``--max-cost``, ``--max-tokens-total``) and the cost lines of the dashboard and the summary."""

from __future__ import annotations

import argparse
from typing import Any

import anyio
from rich.console import Console
from rich.table import Table

from engine.spending.budget import Caps, Spending
from engine.spending.forecast import Forecast, forecast, mean_reply_tokens, play_sampled
from engine.records.ids import IdSet
from engine.records.rundir import Plan
from engine.session.playing import models_play, play_order

from ._args import bounded


def add_spending_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("spending (models only; not saved with the run)")
    g.add_argument("--dry-run", action="store_true", help="print the forecast (games, model calls, tokens, cost, time) and stop: no call is made, nothing is written")
    g.add_argument("--reply-tokens", type=bounded(float, 0, above=True, what="a number > 0"), metavar="K", help="forecast replies at K tokens each (default: a resumed run's mean, else the scripted stand-in's replies, which are shorter than a model's)")
    g.add_argument("--max-cost", type=bounded(float, 0, above=True, what="dollars > 0"), metavar="DOLLARS", help="stop starting games when the run's cost (earlier processes included) would pass DOLLARS; games in flight finish; --resume continues")
    g.add_argument("--max-tokens-total", type=bounded(int, 0, above=True, what="an integer > 0"), metavar="N", help="the same for the run's prompt + completion tokens")


def caps(args: argparse.Namespace) -> Caps:
    return Caps(args.max_cost, args.max_tokens_total)


def check_prices(parser: Any, args: argparse.Namespace, plan: Plan, hub: Any) -> None:
    """A cost cap needs a price for every model of the plan."""
    if args.max_cost is None:
        return
    for names in plan.agents:
        for name in names:
            provider, _, model = name.partition(":")
            if model and hub.prices.price(provider, model) is None:
                parser.error(f"argument --max-cost: {name} has no price; give it with --prices FILE or --price {model}=IN,CACHED,OUT")


def make_forecast(plan: Plan, recorded: IdSet, hub: Any, args: argparse.Namespace, earlier: dict | None) -> Forecast:
    reply = args.reply_tokens if args.reply_tokens is not None else mean_reply_tokens(earlier)
    settings = hub.settings
    records = anyio.run(lambda: play_sampled(plan, settings, reply_tokens=reply))
    return forecast(plan, records, settings, to_play=play_order(plan, recorded), reply_tokens=reply, earlier=earlier, prices=hub.prices)


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
