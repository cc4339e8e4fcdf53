"""Stopping a run that cannot work: when its first games are all lost to the infrastructure in the
same way (a wrong key, an unknown model, a server that is not there), every further game would be
lost the same way, paying for nothing but time. ``SameFailure`` watches the records and calls
``stop(reason)`` once ``limit`` games in a row, from the start of the run, failed alike."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

GIVE_UP_AFTER = 20
_ATTEMPTS = re.compile(r" after \d+ attempts?")


def failure_kind(record: Any) -> str | None:
    """What an infrastructure error says, without the attempt count; None for any other record."""
    error = record.error
    if record.outcome != "error" or error is None or error.kind != "infra_error":
        return None
    return _ATTEMPTS.sub("", error.message)


class SameFailure:
    """A game observer (``engine.play.run``) that gives up on a run whose first ``limit`` games failed alike."""

    def __init__(self, stop: Callable[[str], None], limit: int = GIVE_UP_AFTER) -> None:
        self.stop = stop
        self.limit = limit
        self.kind: str | None = None
        self.count = 0
        self.settled = False  # a game went otherwise: the run can work

    def game_started(self, spec: Any) -> None:
        return None

    def game_finished(self, spec: Any, record: Any) -> None:
        if self.settled:
            return
        kind = failure_kind(record)
        if kind is None or (self.kind is not None and kind != self.kind):
            self.settled = True
            return
        self.kind, self.count = kind, self.count + 1
        if self.count == self.limit:
            self.settled = True
            self.stop(f"the first {self.limit} games were all lost the same way: {kind}")
