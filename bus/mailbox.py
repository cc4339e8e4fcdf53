"""A mailbox: the bounded queue between the senders to one address and the one actor that reads it.

Hand-written rather than anyio's memory object streams, for speed and size with thousands of games in
flight: a stream pair is three objects, every receive is a checkpoint (one more turn of the event
loop) and every wait allocates an Event and a receiver record. A mailbox is one object; a reader
that finds a message takes it at once, and one that must wait parks on a single future, as
``asyncio.Queue`` does, without the queue's task accounting. Messages wait in a list rather than a
deque: a mailbox seldom holds more than a few, and an empty deque is ten times the size of an empty
list. It runs on asyncio (the engine's backend: its HTTP clients need it); cancellation reaches a
waiting reader or sender through anyio's cancel scopes like any other await. asyncio itself (some
30 ms of start-up: it loads ssl, sockets and subprocesses) is imported by whoever runs the loop, not
by the bus: importing the bus (or a game) for a command's ``--help`` does not load it.

The errors are anyio's, with the streams' meaning: ``WouldBlock`` (nothing to take, or no room),
``EndOfStream`` (``end()`` was called and everything sent has been taken), ``BrokenResourceError``
(a send to a mailbox whose reader has closed it).
"""

from __future__ import annotations

import types
from collections import deque
from typing import TYPE_CHECKING, Any

from anyio import BrokenResourceError, ClosedResourceError, EndOfStream, WouldBlock

if TYPE_CHECKING:
    import asyncio


def _running_loop() -> asyncio.AbstractEventLoop:
    """The running asyncio loop. The first call (asyncio is loaded by then: it runs the caller)
    puts asyncio's own ``get_running_loop`` in its place, so later calls cost nothing more."""
    global _running_loop
    from asyncio import get_running_loop

    _running_loop = get_running_loop
    return get_running_loop()


@types.coroutine
def _checkpoint():
    """One turn of the event loop, exactly as ``asyncio.sleep(0)`` yields it."""
    yield


class Mailbox:
    __slots__ = ("_items", "_size", "_receiver", "_senders", "_closed", "_ended")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a mailbox holds at least one message, got {size}")
        self._items: list[Any] = []
        self._size = size
        self._receiver: asyncio.Future[None] | None = None  # the reader, waiting for a message
        self._senders: deque[asyncio.Future[None]] | None = None  # senders waiting for room
        self._closed = False  # the reader is gone: sends fail
        self._ended = False  # nothing more will be sent: the reader ends once it has taken everything

    def __len__(self) -> int:
        return len(self._items)

    def send_nowait(self, item: Any) -> None:
        if self._closed:
            raise BrokenResourceError
        if self._ended:
            raise ClosedResourceError
        if len(self._items) >= self._size:
            raise WouldBlock
        self._items.append(item)
        receiver = self._receiver
        if receiver is not None:
            self._receiver = None
            if not receiver.done():
                receiver.set_result(None)

    async def send(self, item: Any) -> None:
        """Send ``item``, waiting while the mailbox is full (back-pressure)."""
        if len(self._items) >= self._size and not (self._closed or self._ended):
            senders = self._senders
            if senders is None:
                senders = self._senders = deque()
            loop = _running_loop()
            while len(self._items) >= self._size and not (self._closed or self._ended):
                waiter = loop.create_future()
                senders.append(waiter)
                try:
                    await waiter
                except BaseException:
                    if waiter in senders:
                        senders.remove(waiter)
                    elif not waiter.cancelled():
                        self._wake_sender()  # woken, then cancelled: pass the room on
                    raise
        self.send_nowait(item)

    def _wake_sender(self) -> None:
        senders = self._senders
        while senders:
            waiter = senders.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def receive_nowait(self) -> Any:
        items = self._items
        if not items:
            if self._closed:
                raise ClosedResourceError
            if self._ended:
                raise EndOfStream
            raise WouldBlock
        item = items.pop(0)
        if self._senders:
            self._wake_sender()
        return item

    async def receive(self) -> Any:
        """The next message. One reader only. A message already here is taken at once; otherwise the
        reader yields to the event loop once (a checkpoint, as anyio's streams make) before it waits:
        a message sent meanwhile is taken without a future, and actors keep the order in which they
        have always run (records of simultaneous turns list messages in that order)."""
        items = self._items
        if not items:
            await _checkpoint()
        while not items:
            if self._closed:
                raise ClosedResourceError
            if self._ended:
                raise EndOfStream
            waiter = self._receiver = _running_loop().create_future()
            try:
                await waiter
            finally:
                self._receiver = None
        item = items.pop(0)
        if self._senders:
            self._wake_sender()
        return item

    def end(self) -> None:
        """Nothing more will be sent; the reader gets ``EndOfStream`` once it has taken what is here."""
        self._ended = True
        self._wake_all()

    def close(self) -> None:
        """The reader is done: what is here is dropped and later sends fail."""
        self._closed = True
        self._items.clear()
        self._wake_all()

    def _wake_all(self) -> None:
        for waiter in (self._receiver, *(self._senders or ())):
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
        self._receiver = None
        if self._senders:
            self._senders.clear()
