"""Game starts paced by the limits: under a binding rate limit the run keeps few games in flight, and
every game is still played; a game that never calls does not hold the next one back."""

from __future__ import annotations

import anyio

from engine import PolicyFactory, run_games
from engine.play.pacing import HEADROOM, GameStarts
from tests.engine.backends.helpers import KEYS, fake_server, settings_for
from tests.helpers import grid


class InFlight:
    def __init__(self) -> None:
        self.now = self.peak = 0
        self.first_finish: float | None = None

    def game_started(self, spec):
        self.now += 1
        self.peak = max(self.peak, self.now)

    def game_finished(self, spec, record):
        self.now -= 1
        if self.first_finish is None:
            self.first_finish = anyio.current_time()


async def test_under_a_binding_rate_limit_paced_starts_keep_few_games_in_flight():
    games, rpm = 60, 1200  # about 180 calls: 9 s at the limit, a burst of 20 calls at the start
    plan = grid(games, alice="openai:share_everything", bob="openai:share_everything")
    async with fake_server(latency=0.05, rpm=rpm) as server:
        factory = PolicyFactory(settings_for(server, rpm={"openai": rpm}, shared_limits=["openai"]), environ=KEYS)
        watch, records = InFlight(), []
        async with factory:
            await run_games(
                plan.specs_for(range(games)), factory=factory, concurrency=games, on_record=records.append,
                observers=[watch], starts=GameStarts(factory.hub),
            )
    assert len(records) == games and all(r.outcome == "success" for r in records), [r.error for r in records if r.error][:2]
    # The burst's calls, the waiting calls allowed, and the games between two calls: not all 60 at once.
    assert watch.peak <= rpm / 60 + HEADROOM + 6


async def test_games_that_never_call_start_without_waiting():
    plan = grid(50)  # scripted agents only
    factory = PolicyFactory()
    records = []
    starts = GameStarts(factory.hub, settle=5.0)
    with anyio.fail_after(4):  # one settle wait per game would take minutes
        async with factory:
            await run_games(plan.specs_for(range(50)), factory=factory, concurrency=8, on_record=records.append, starts=starts)
    assert len(records) == 50
