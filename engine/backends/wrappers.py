"""Backends around a backend: each adds one thing to every call of a model and passes the call on
to the backend inside it. ``build.compose`` puts them together; the response cache
(``cache.CachedCalls``) and batch mode (``batch.BatchedCalls``) are two more, in their modules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

from engine.backends.admission import GAME_CALLED
from engine.backends.base import Backend, Completion, Request
from engine.backends.settings import History

if TYPE_CHECKING:
    from engine.backends.limiter import Limiter
    from engine.backends.tokens import Tokenizer


class Wrapper:
    """A backend around ``inner``: the same model, limiter and tokenizer; ``complete`` adds its part."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def limiter(self) -> Limiter:
        return self.inner.limiter

    @property
    def tokenizer(self) -> Tokenizer:
        return self.inner.tokenizer

    async def complete(self, request: Request) -> Completion:
        return await self.inner.complete(request)


class PacedCalls(Wrapper):
    """Tells the run's pacing (``GAME_CALLED``, set by the run for each game it starts) that the game
    made its first call, whether the call is answered from the cache, a batch or the provider."""

    async def complete(self, request: Request) -> Completion:
        called = GAME_CALLED.get()
        if called is not None:
            called.set()
        return await self.inner.complete(request)


class OnePromptAtOnce(Wrapper):
    """For a server that keeps the prompts it computed (llama.cpp's): a call whose prompt (system,
    history, user) is that of a call in flight waits until that call ends, then goes, one after
    another. The server computes the prompt once, and each call after reads it from its prefix cache,
    where calls sent together would each compute it in a slot of its own: the branches of one game
    ask the same prompts at once (the turns before their point, the point itself K times), as do the
    samples of a best-of-n turn. Calls of other prompts are not held."""

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner)
        self._queues: dict[tuple[str, History, str], _Queue] = {}  # each prompt with calls in flight or waiting

    async def complete(self, request: Request) -> Completion:
        key = (request.system, request.history, request.user)
        queue = self._queues.setdefault(key, _Queue())
        queue.calls += 1
        try:
            async with queue.turn:  # anyio's lock is fair: the calls go in the order they came
                return await self.inner.complete(request)
        finally:
            queue.calls -= 1
            if not queue.calls:
                del self._queues[key]


class _Queue:
    """The calls of one prompt: the lock each holds while it is in flight, and how many there are."""

    def __init__(self) -> None:
        self.turn = anyio.Lock()
        self.calls = 0


class ReportedCalls(Wrapper):
    """Awaits ``after_call`` as each call ends, answered or failed, before returning (a cluster
    worker's usage report: no reply reaches a game before the run's tally counts it); a cancelled
    call is left to stop."""

    def __init__(self, inner: Backend, after_call: Callable[[], Awaitable[None]]) -> None:
        super().__init__(inner)
        self.after_call = after_call

    async def complete(self, request: Request) -> Completion:
        try:
            completion = await self.inner.complete(request)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception:
            await self.after_call()
            raise
        await self.after_call()
        return completion


__all__ = ["OnePromptAtOnce", "PacedCalls", "ReportedCalls", "Wrapper"]
