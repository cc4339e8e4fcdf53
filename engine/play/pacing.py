"""When a run starts its next game: not while the models' limiters already have calls waiting (the
limits serve no more games), and never past a spending cap.

Games are started one at a time: each after the game started before it has made its first model call
(or ``SETTLE`` seconds passed), so that the queues the next start looks at include that game's call.
Games started beyond what the limits serve would only wait; and a run stopped early loses the games
in flight, so the fewer in flight, the less is lost. Only runs in which models play are paced.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import anyio

from engine.backends.admission import GAME_CALLED

HEADROOM = 8  # calls waiting in the limiters, over all models, before starts pause
SETTLE = 1.0  # seconds to wait for a started game's first call
POLL = 0.02  # seconds between looks at the queues while they are long


class WithinCaps(Protocol):
    """Whether a game may start within the spending caps (``engine.spending.Spending``): ``wait`` until
    a game in flight finishes (``a_game_finished``), or ``stop`` for good."""

    def verdict(self) -> Literal["start", "wait", "stop"]: ...

    async def a_game_finished(self) -> None: ...


class GameStarts:
    def __init__(self, hub: Any, *, spending: WithinCaps | None = None, headroom: int = HEADROOM, settle: float = SETTLE) -> None:
        self.hub = hub
        self.spending = spending
        self.headroom = headroom
        self.settle = settle
        self._lock = anyio.Lock()
        self._last_called: anyio.Event | None = None

    def waiting(self) -> int:
        return sum(b.limiter.in_flight.waiting for b in self.hub.backends())

    async def next(self) -> bool:
        """Wait until the next game may start; False if none may (a cap is reached). On True, the
        game started in the caller's context reports its first call."""
        async with self._lock:
            if self._last_called is not None:
                with anyio.move_on_after(self.settle):
                    await self._last_called.wait()
            while self.waiting() > self.headroom:
                await anyio.sleep(POLL)
            if self.spending is not None:
                while (verdict := self.spending.verdict()) == "wait":  # the games in flight tell more
                    await self.spending.a_game_finished()
                if verdict == "stop":
                    return False
            self._last_called = anyio.Event()
            GAME_CALLED.set(self._last_called)
            return True

    def game_finished(self) -> None:
        """A game that ends before its first call (or that never calls) lets the next start."""
        called = GAME_CALLED.get()
        if called is not None:
            called.set()
