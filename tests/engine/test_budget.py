"""Spending: the figures against a second computation, and caps that stop starts at the right game."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from engine.spending.budget import Caps, PerGame, Spending
from engine.records.record import GameRecord, UsageTotals
from tests.helpers import spec


class Hub:
    """The part of a model hub spending reads: each backend's counters."""

    def __init__(self) -> None:
        self.stats = SimpleNamespace(cost_usd=0.0, prompt_tokens=0, completion_tokens=0)
        self.prices = SimpleNamespace(missing=set())

    def backends(self):
        return [SimpleNamespace(limiter=SimpleNamespace(stats=self.stats))]

    def call(self, cost: float, prompt: int, completion: int) -> None:
        self.stats.cost_usd += cost
        self.stats.prompt_tokens += prompt
        self.stats.completion_tokens += completion


def _record(game_id: int, cost: float, tokens: int) -> GameRecord:
    usage = {"alice": UsageTotals(calls=1, prompt_tokens=tokens, completion_tokens=0, cost_usd=cost)}
    return GameRecord(game_id=game_id, spec=spec(game_id), outcome="success", usage=usage)


def test_the_estimate_is_the_prior_until_a_game_finishes_then_the_mean_of_finished_games():
    hub = Hub()
    earlier = {"models": {"m": {"cost_usd": 1.0, "prompt_tokens": 900, "completion_tokens": 100}}}
    spending = Spending(hub, total=20, done=4, earlier=earlier, prior=PerGame(0.5, 500))
    assert spending.cost == 1.0 and spending.tokens == 1000
    assert spending.per_game() == PerGame(0.5, 500)
    costs = [0.1, 0.3]
    for game_id, cost in enumerate(costs, start=4):
        spending.game_started(None)
        hub.call(cost, 100, 0)
        spending.game_finished(None, _record(game_id, cost, 100))
    spending.game_started(None)  # one game in flight, 0.05 spent so far
    hub.call(0.05, 10, 0)
    each = sum(costs) / len(costs)
    assert spending.per_game().cost == pytest.approx(each) and spending.per_game().tokens == 100
    queued = 20 - 6 - 1
    want = 1.0 + sum(costs) + max(0.05, each) + each * queued  # the game in flight at its expected cost
    assert spending.projected()[0] == pytest.approx(want)
    assert spending.cost == pytest.approx(1.0 + sum(costs) + 0.05)


def test_a_prior_far_above_the_real_cost_waits_for_games_in_flight_instead_of_stopping():
    """The forecast said $0.04 a game, the games cost $0.008: a $1 cap admits 24 games on the prior,
    then waits for them, then goes on at the real cost until within one game of the cap."""
    hub = Hub()
    spending = Spending(hub, total=1000, prior=PerGame(0.04, 400), caps=Caps(max_cost=1.0))
    started = 0
    while spending.verdict() == "start":
        spending.game_started(None)
        started += 1
    assert started == 25 and spending.verdict() == "wait" and spending.stopped is None
    for game_id in range(started):
        hub.call(0.008, 80, 0)
        spending.game_finished(None, _record(game_id, 0.008, 80))
    while (verdict := spending.verdict()) == "start":  # now one game at a time, each as estimated
        spending.game_started(None)
        hub.call(0.008, 80, 0)
        spending.game_finished(None, _record(started, 0.008, 80))
        started += 1
    assert verdict == "stop" and started in (124, 125)  # 125 games cost exactly the cap, give or take rounding
    assert 1.0 - spending.cost <= 0.008 + 1e-9 and spending.cost <= 1.0 + 1e-9  # within one game of the cap
    assert spending.stopped.startswith("the cost cap (--max-cost 1): $0.99 spent, $0.00 more committed to 0 games in flight")


def test_without_a_prior_the_earlier_processes_mean_is_the_prior():
    earlier = {"models": {"m": {"cost_usd": 2.0, "prompt_tokens": 4000, "completion_tokens": 0}}}
    spending = Spending(Hub(), total=10, done=4, earlier=earlier)
    assert spending.per_game() == PerGame(0.5, 1000)
    assert Spending(Hub(), total=10).projected() is None  # nothing to go on


@pytest.mark.parametrize("caps, games", [(Caps(max_cost=1.0), 10), (Caps(max_tokens=2500), 25), (Caps(1.0, 2500), 10)])
def test_a_cap_stops_the_start_that_would_pass_it_and_stays_stopped(caps, games):
    hub = Hub()
    spending = Spending(hub, total=100, prior=PerGame(0.1, 100), caps=caps)
    started = 0
    while spending.allows_another():  # games one after another, each exactly as expected
        spending.game_started(None)
        hub.call(0.1, 100, 0)
        spending.game_finished(None, _record(started, 0.1, 100))
        started += 1
    assert started == games
    assert spending.stopped is not None and ("cost cap" if caps.max_cost else "token cap") in spending.stopped
    assert not spending.allows_another()


def test_games_in_flight_count_at_their_expected_cost_before_they_spend_it():
    spending = Spending(Hub(), total=100, prior=PerGame(0.1, 100), caps=Caps(max_cost=0.35))
    allowed = 0
    while spending.allows_another():  # nothing finishes, nothing is spent yet
        spending.game_started(None)
        allowed += 1
    assert allowed == 3  # a fourth would commit 0.4


def test_a_game_in_flight_that_spent_more_than_expected_counts_at_what_it_spent():
    hub = Hub()
    spending = Spending(hub, total=100, prior=PerGame(0.1, 100), caps=Caps(max_cost=1.0))
    spending.game_started(None)
    hub.call(0.85, 10, 0)  # an expensive game, still playing: 0.85 + 0.1 for another fits
    assert spending.allows_another()
    spending.game_started(None)
    hub.call(0.1, 10, 0)  # the two in flight have spent 0.95: another would pass 1.0
    assert not spending.allows_another()
