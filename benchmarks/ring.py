"""The ring workload in the shape of a game, shared by the engine and memory benchmarks.

Each game is a ring of ``ACTORS`` actors started in a task group of the game's own; actor 0 sends the
first message to itself and each actor passes on a new message (one more turn) to the next, until
every actor has received ``HOPS`` (the last one is not passed on). All games run at once.

- ``bare``: ``asyncio.Queue(64)`` mailboxes, a plain coroutine per actor, an ``asyncio.TaskGroup``
  per game: the anchor.
- ``bus``: the project's bus, actors and ``run_actors`` (an anyio task group per game).

With ``parked``, every game stops before its first message, once all its actors wait on their
mailboxes: ``parked()`` is called and the game goes on when ``go`` is set (memory per game in flight).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from actors.base import Actor, run_actors  # noqa: E402
from bus import Bus, Chat  # noqa: E402

ACTORS, HOPS = 4, 40


def passed_on(message: Chat) -> Chat:
    return Chat(game_id=message.game_id, turn=message.turn + 1, sender=message.recipient, recipient="next", text=message.text)


def first(game: int) -> Chat:
    return Chat(game_id=game, turn=0, sender="a0", recipient="a0", text="token")


class Parking:
    """All games wait at their start until ``go`` is set; ``parked`` counts the games waiting."""

    def __init__(self, on_parked: Callable[[], None]) -> None:
        self.parked = on_parked
        self.go = asyncio.Event()


async def bare_ring(games: int, hops: int = HOPS, parking: Parking | None = None) -> None:
    async def actor(index: int, inbox: asyncio.Queue, outbox: asyncio.Queue, game: int) -> None:
        if index == 0:
            if parking is not None:
                parking.parked()
                await parking.go.wait()
            inbox.put_nowait(first(game))
        for hop in range(hops):
            message = await inbox.get()
            if not (index == ACTORS - 1 and hop == hops - 1):
                outbox.put_nowait(passed_on(message))

    async def game(number: int) -> None:
        queues = [asyncio.Queue(64) for _ in range(ACTORS)]
        async with asyncio.TaskGroup() as tg:
            for i in range(ACTORS):
                tg.create_task(actor(i, queues[i], queues[(i + 1) % ACTORS], number))

    async with asyncio.TaskGroup() as tg:
        for number in range(games):
            tg.create_task(game(number))


class RingActor(Actor):
    def __init__(self, bus: Bus, index: int, hops: int, game: int, parking: Parking | None) -> None:
        super().__init__(bus, f"a{index}")
        self.index = index
        self.next_address = f"a{(index + 1) % ACTORS}"
        self.left = hops
        self.game = game
        self.parking = parking

    async def on_start(self) -> None:
        if self.index == 0:
            if self.parking is not None:
                self.parking.parked()
                await self.parking.go.wait()
            await self.bus.send(self.address, first(self.game))

    async def handle(self, message: Chat) -> None:
        self.left -= 1
        if self.left == 0:
            self.stop()
            if self.index == ACTORS - 1:
                return
        await self.bus.send(self.next_address, passed_on(message))


async def bus_ring(games: int, hops: int = HOPS, parking: Parking | None = None) -> None:
    async def game(number: int) -> None:
        bus = Bus()
        await run_actors([RingActor(bus, i, hops, number, parking) for i in range(ACTORS)])

    async with asyncio.TaskGroup() as tg:
        for number in range(games):
            tg.create_task(game(number))


RINGS = {"bare": bare_ring, "bus": bus_ring}
