"""The actor base: a mailbox loop, run as one task of its game's task group."""

from __future__ import annotations

from typing import Any

from anyio import EndOfStream, WouldBlock

from bus import Bus, GameOver

GAME_TOPIC = "game"


class ActorFailed(Exception):
    """An actor raised; carries the actor's address so the game's error record can name it."""

    def __init__(self, address: str, cause: BaseException) -> None:
        super().__init__(f"{address}: {type(cause).__name__}: {cause}")
        self.address = address
        self.cause = cause


class Actor:
    """Owns a mailbox on the bus and reacts to messages; knows addresses, not other actors.

    Every actor is subscribed to the game topic and stops on ``GameOver``. Subclasses implement
    ``handle`` and may override ``on_start``; ``stop()`` ends the loop after the current message.
    """

    def __init__(self, bus: Bus, address: str) -> None:
        self.bus = bus
        self.address = address
        self._inbox = bus.register(address)
        bus.subscribe(address, GAME_TOPIC)
        self._running = True

    async def on_start(self) -> None:
        """Called once before the first message."""

    async def handle(self, message: Any) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self._running = False

    async def run(self) -> None:
        inbox = self._inbox
        try:
            await self.on_start()
            while self._running:
                try:
                    message = inbox.receive_nowait()
                except WouldBlock:
                    try:
                        message = await inbox.receive()
                    except EndOfStream:
                        return
                except EndOfStream:
                    return
                if isinstance(message, GameOver):
                    self._running = False
                else:
                    await self.handle(message)
        except Exception as exc:
            raise ActorFailed(self.address, exc) from exc
        finally:
            inbox.close()
