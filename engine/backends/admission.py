"""Admission in priority order: a gate that lets at most ``cap`` calls through at once and admits the
waiting ones lowest priority value first, ties in arrival order.

Hand-written because anyio's ``CapacityLimiter`` and ``Lock`` admit in arrival order only, which
makes every game of a run advance in lock-step when a rate limit binds. Only the waiter at the head
of the queue is woken when something changes (a place frees, the cap grows, an earlier call
arrives), so a change costs O(log n) rather than a wake-up of every waiter. The head waiter also
waits out ``ready()`` (the seconds until the buckets allow it) before it goes.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from contextvars import ContextVar

import anyio

CALL_PRIORITY: ContextVar[int] = ContextVar("call_priority", default=0)
"""The priority of the calls made in this context: the run sets it to each game's admission order,
so that the calls of games started earlier go first and games finish rather than advance together."""

GAME_CALLED: ContextVar[anyio.Event | None] = ContextVar("game_called", default=None)
"""Set by the run for each game it starts (when it paces its starts); a limiter sets the event when
the game's first call arrives, which tells the run it may look at the queues and start the next."""


class _Ticket:
    __slots__ = ("wake",)

    def __init__(self) -> None:
        self.wake = anyio.Event()


class PriorityGate:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.held = 0
        self._queue: list[tuple[int, int, _Ticket]] = []
        self._arrivals = itertools.count()

    @property
    def waiting(self) -> int:
        return len(self._queue)

    def set_cap(self, cap: int) -> None:
        self.cap = cap
        self._nudge()

    def _nudge(self) -> None:
        if self._queue:
            self._queue[0][2].wake.set()

    async def acquire(self, priority: int, ready: Callable[[], float] = lambda: 0.0) -> None:
        """Return when this call is first in line, a place is free and ``ready()`` is 0 or less.
        Nothing awaits between the check and the return, so the caller may take what ``ready`` checked."""
        ticket = _Ticket()
        entry = (priority, next(self._arrivals), ticket)
        head = self._queue[0][2] if self._queue else None
        heapq.heappush(self._queue, entry)
        if head is not None and self._queue[0][2] is ticket:
            head.wake.set()  # the old head is no longer first: let it step back
        try:
            while True:
                if self._queue[0][2] is ticket and self.held < self.cap:
                    wait = ready()
                    if wait <= 0:
                        break
                    with anyio.move_on_after(wait):
                        await ticket.wake.wait()
                else:
                    await ticket.wake.wait()
                if ticket.wake.is_set():
                    ticket.wake = anyio.Event()
        except BaseException:
            self._queue.remove(entry)
            heapq.heapify(self._queue)
            self._nudge()
            raise
        heapq.heappop(self._queue)
        self.held += 1
        self._nudge()

    def release(self) -> None:
        self.held -= 1
        self._nudge()


__all__ = ["CALL_PRIORITY", "GAME_CALLED", "PriorityGate"]
