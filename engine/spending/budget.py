"""What a run spends on models: so far, per game, projected to its end, and whether a cap lets it
start another game.

Spent so far is every call this process made (the limiters' counters, so calls of games still in
flight count) plus what earlier processes of the run spent (``usage.json``). On a cluster, where
the calls are made by the workers, it is what the finished games' records show plus what a worker
that died had spent beyond the records it returned (``spent_elsewhere``: its games are played
again, and the provider billed its calls all the same). The cost of a game to
come is the mean of the games this process has finished, as soon as there is one; before, a prior
(the forecast's, or the earlier processes' mean).

Caps (``max_cost``, ``max_tokens``) are on the whole run, earlier processes included. A game is
started only if what the games already started will spend, each counted at the larger of what it
has spent and a game's expected cost, plus one more game, stays within every cap; games in flight
always finish. A start refused while games are in flight waits for one of them to finish (the
estimate is then better, and a prior far above the real cost does not stop the run early); only a
start refused with nothing in flight stops the run. Models with no price add tokens but no cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

import anyio

Verdict = Literal["start", "wait", "stop"]


class PerGame(NamedTuple):
    """What one game is expected to spend."""

    cost: float
    tokens: float


class Caps(NamedTuple):
    max_cost: float | None = None  # dollars, the whole run
    max_tokens: int | None = None  # prompt + completion tokens, the whole run

    def __bool__(self) -> bool:
        return self.max_cost is not None or self.max_tokens is not None


class Spending:
    """An observer of the run's games (``game_started``/``game_finished``) that also reads the hub."""

    def __init__(
        self, hub: Any, total: int, *, done: int = 0, earlier: Mapping[str, Any] | None = None,
        prior: PerGame | None = None, caps: Caps = Caps(),
    ) -> None:
        self.hub = hub
        self.total = total
        self.done = done  # games recorded, earlier processes' included
        self.running = 0
        self.caps = caps
        models = (earlier or {}).get("models", {})
        self.earlier_cost = sum(m.get("cost_usd") or 0.0 for m in models.values())
        self.earlier_tokens = sum((m.get("prompt_tokens") or 0) + (m.get("completion_tokens") or 0) for m in models.values())
        if prior is None and done and models:
            prior = PerGame(self.earlier_cost / done, self.earlier_tokens / done)
        self.prior = prior
        self.finished = 0  # games finished by this process
        self.finished_cost = 0.0
        self.finished_tokens = 0
        self.elsewhere_cost = 0.0  # calls billed that no record shows (``spent_elsewhere``)
        self.elsewhere_tokens = 0
        self.stopped: str | None = None  # why no more games are started
        self._finishing: anyio.Event | None = None  # set when the next game finishes

    # -- observer --
    def game_started(self, spec: Any) -> None:
        self.running += 1

    def game_finished(self, spec: Any, record: Any) -> None:
        self.running -= 1
        self.done += 1
        self.finished += 1
        for usage in (record.usage or {}).values():
            self.finished_cost += usage.cost_usd or 0.0
            self.finished_tokens += usage.prompt_tokens + usage.completion_tokens
        if self._finishing is not None:
            self._finishing.set()
            self._finishing = None

    def spent_elsewhere(self, cost: float, tokens: int) -> None:
        """Calls billed that no record will show (a cluster worker that died with them): part of
        what the run has spent from now on."""
        self.elsewhere_cost += cost
        self.elsewhere_tokens += tokens

    async def a_game_finished(self) -> None:
        """Wait until the next game finishes."""
        if self._finishing is None:
            self._finishing = anyio.Event()
        await self._finishing.wait()

    # -- figures --
    @property
    def cost(self) -> float:
        """Dollars spent by the run so far (models with a price): by this process's calls, or, where
        the calls are made elsewhere (a cluster's workers), by the games finished."""
        here = sum(b.limiter.stats.cost_usd or 0.0 for b in self.hub.backends())
        return self.earlier_cost + max(here, self.finished_cost + self.elsewhere_cost)

    @property
    def tokens(self) -> int:
        here = sum(b.limiter.stats.prompt_tokens + b.limiter.stats.completion_tokens for b in self.hub.backends())
        return self.earlier_tokens + max(here, self.finished_tokens + self.elsewhere_tokens)

    def per_game(self) -> PerGame | None:
        """What a game to come is expected to spend: the mean of the games finished here, else the prior."""
        if self.finished:
            return PerGame(self.finished_cost / self.finished, self.finished_tokens / self.finished)
        return self.prior

    def _committed(self, each: PerGame, games_in_flight: int) -> tuple[float, float]:
        """What the games finished and in flight will have spent: each game in flight at the larger
        of what it has spent so far and a game's expected figure."""
        spent_cost = self.earlier_cost + self.finished_cost + self.elsewhere_cost
        spent_tokens = self.earlier_tokens + self.finished_tokens + self.elsewhere_tokens
        return (
            spent_cost + max(self.cost - spent_cost, each.cost * games_in_flight),
            spent_tokens + max(self.tokens - spent_tokens, each.tokens * games_in_flight),
        )

    def projected(self) -> tuple[float, float] | None:
        """(cost, tokens) of the whole run at its end, if every game is played; None before any estimate."""
        each = self.per_game()
        if each is None:
            return None
        cost, tokens = self._committed(each, self.running)
        queued = max(0, self.total - self.done - self.running)
        return cost + each.cost * queued, tokens + each.tokens * queued

    def verdict(self, *, can_wait: bool = True) -> Verdict:
        """Whether one more game fits within the caps: ``start``; ``wait`` (it does not fit now, but
        games are in flight: ask again when one finishes, ``a_game_finished``); or ``stop``, after
        which ``stopped`` says why and it stays so. A caller that cannot wait gets ``stop`` at once."""
        if self.stopped is not None:
            return "stop"
        if not self.caps:
            return "start"
        each = self.per_game() or PerGame(0.0, 0.0)
        cost, tokens = self._committed(each, self.running)
        max_cost, max_tokens = self.caps
        over = None
        if max_cost is not None and cost + each.cost > max_cost:
            over = (f"the cost cap (--max-cost {max_cost:g}): ${self.cost:.2f} spent, ${cost - self.cost:.2f} more "
                    f"committed to {self.running} games in flight, ${each.cost:.4f} a game")
        elif max_tokens is not None and tokens + each.tokens > max_tokens:
            over = (f"the token cap (--max-tokens-total {max_tokens}): {self.tokens} spent, {tokens - self.tokens:.0f} "
                    f"more committed to {self.running} games in flight, {each.tokens:.0f} a game")
        if over is None:
            return "start"
        if can_wait and self.running:
            return "wait"
        self.stopped = over
        return "stop"

    def allows_another(self) -> bool:
        """``verdict`` for a caller that cannot wait (a cluster's batches): a refusal is final."""
        return self.verdict(can_wait=False) == "start"
