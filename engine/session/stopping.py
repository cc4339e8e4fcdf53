"""Stopping a run gently: no game starts once ``stop()`` is called, and the games in flight play on
(for the caller's grace period, after which it cancels them; they are played again on resume)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator


class StopStarting:
    def __init__(self) -> None:
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True

    def until_stopped(self, ids: Iterable[int]) -> Iterator[int]:
        """``ids`` until ``stop()`` is called: the games not yet taken are left unplayed."""
        return itertools.takewhile(lambda _: not self.stopped, ids)
