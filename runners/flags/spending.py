"""The spending flags: the forecast (``--dry-run``, ``--reply-tokens``, and ``--detect``: the seeds
a comparison needs) and the caps (``--max-cost``, ``--max-tokens-total``), and the run's ``Spending``
they set up. What is shown of spending is ``runners.dashboard.spending``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from runners.args import bounded, checked

if TYPE_CHECKING:  # the engine's spending is imported when a run starts: the flags alone load fast
    from rich.console import Console

    from engine.records import IdSet, Plan
    from engine.spending import Caps, Forecast, Spending


def add_spending_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("spending (models only; not saved with the run)")
    g.add_argument("--dry-run", action="store_true", help="print the forecast (games, model calls, tokens, cost, time) and stop: no call is made, nothing is written")
    g.add_argument("--reply-tokens", type=bounded(float, 0, above=True, what="a number > 0"), metavar="K", help="forecast replies at K tokens each (default: a resumed run's mean, else the scripted stand-in's replies, which are shorter than a model's)")
    g.add_argument("--detect", type=checked(detection), metavar="D[@BASE]", help="with --dry-run: the seeds per condition that detect a difference D in success rate (0.10: 10 points) with 80%% power, two-sided alpha 0.05, unpaired and paired by seed; the rates compared are BASE and BASE + D (BASE - D and BASE where that passes 1; default BASE 0.5, near the rates that need the most seeds)")
    g.add_argument("--max-cost", type=bounded(float, 0, above=True, what="dollars > 0"), metavar="DOLLARS", help="stop starting games when the run's cost (earlier processes included) would pass DOLLARS; games in flight finish; --resume continues")
    g.add_argument("--max-tokens-total", type=bounded(int, 0, above=True, what="an integer > 0"), metavar="N", help="the same for the run's prompt + completion tokens")


def detection(text: str) -> tuple[float, float]:
    """``D`` or ``D@BASE`` of ``--detect``: the difference in success rate to detect and the lower
    rate (default ``engine.analysis.power.BASE_RATE``); ValueError with a one-line reason."""
    from engine.analysis import BASE_RATE, compared_rates

    difference, at, base = text.partition("@")
    try:
        numbers = (float(difference), float(base) if at else BASE_RATE)
    except ValueError:
        raise ValueError(f"expected D or D@BASE, such as 0.10 or 0.10@0.3, got {text!r}") from None
    compared_rates(*numbers)
    return numbers


def check_detect(parser: Any, args: argparse.Namespace) -> None:
    """``--detect`` is part of the forecast."""
    if getattr(args, "detect", None) is not None and not args.dry_run:
        parser.error("argument --detect: it sizes a sweep in the forecast; give it with --dry-run")


def caps(args: argparse.Namespace) -> Caps:
    from engine.spending import Caps

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
    import anyio

    from engine.session import play_order
    from engine.spending import forecast, mean_reply_tokens, play_sampled

    reply = args.reply_tokens if args.reply_tokens is not None else mean_reply_tokens(earlier)
    settings = hub.settings
    records = anyio.run(lambda: play_sampled(plan, settings, reply_tokens=reply))
    return forecast(plan, records, settings, to_play=play_order(plan, recorded), reply_tokens=reply, earlier=earlier, prices=hub.prices)


def spending_for(args: argparse.Namespace, plan: Plan, recorded: IdSet, run: Any, hub: Any, console: Console) -> Spending | None:
    """The run's spending when models play; with a cap, a forecast first gives the cost of a game
    until games finish (at most: to the turn limit)."""
    from engine.policies import models_play
    from engine.session import read_usage
    from engine.spending import Spending

    if not models_play(plan):
        return None
    earlier = read_usage(run)
    prior = None
    if caps(args):
        prior = make_forecast(plan, recorded, hub, args, earlier).per_game_at_most()
        console.print(
            f"Cap: until games finish, a game is counted at its forecast at most: ${prior.cost:.4f}, {prior.tokens:,.0f} tokens.",
            soft_wrap=True,
        )
    done = sum(1 for i in recorded if i < plan.total)
    return Spending(hub, plan.total, done=done, earlier=earlier, prior=prior, caps=caps(args))
