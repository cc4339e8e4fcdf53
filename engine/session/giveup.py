"""Stopping a run that cannot work: when its first games all end in the same error that is not the
model's (a wrong key, an unknown model, a server that is not there or that refuses every request, a
policy of the user's own that fails), every further game would end the same way, paying for nothing
but time. ``SameFailure`` watches the records and calls ``stop(reason)`` once ``limit`` games in a
row, from the start of the run, failed alike."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from engine.records import is_infra_error

GIVE_UP_AFTER = 20
_ATTEMPTS = re.compile(r" after \d+ attempts?")
_SPACES = re.compile(r"[ \t\r\n]+")  # not str.split(): it also takes controls (\x1c-\x1f, \x85) the quote must keep for the printer to show


# Errors that are a player's doing, not the run's: a person who left a seat, a model that said what
# the leak audit forbids.
PLAYERS_ERRORS = frozenset(("human_absent", "leak"))
QUOTED = 300  # characters of an error's message quoted


def failure_kind(record: Any) -> tuple[str, str] | None:
    """How a game whose error is not a player's failed, and what it said, on one line and without
    the attempt count: lost to the infrastructure, its message is the way (a wrong key and a timeout
    differ); any other error, its kind and type (a message may name the game). None for any other record."""
    error = record.error
    if record.outcome != "error" or error is None or error.kind in PLAYERS_ERRORS:
        return None
    message = _SPACES.sub(" ", _ATTEMPTS.sub("", error.message)).strip(" ")[:QUOTED]
    if error.kind == "infra_error":
        return message, message
    where = f" in {error.actor}" if error.actor else ""
    return f"{error.kind} {error.type}", f"{error.type}{where}: {message}"


class SameFailure:
    """A game observer (``engine.play.run``) that gives up on a run whose first ``limit`` games failed
    alike, quoting the error most of them gave."""

    def __init__(self, stop: Callable[[str], None], limit: int = GIVE_UP_AFTER) -> None:
        self.stop = stop
        self.limit = limit
        self.kind: str | None = None
        self.said: Counter[str] = Counter()
        self.lost = False  # lost to the infrastructure (played again by --resume), not ended in an error
        self.settled = False  # a game went otherwise: the run can work

    def game_started(self, spec: Any) -> None:
        return None

    def game_finished(self, spec: Any, record: Any) -> None:
        if self.settled:
            return
        failed = failure_kind(record)
        if failed is None or (self.kind is not None and failed[0] != self.kind):
            self.settled = True
            return
        self.kind = failed[0]
        self.said[failed[1]] += 1
        self.lost = is_infra_error(record)
        if self.said.total() == self.limit:
            self.settled = True
            quoted, count = self.said.most_common(1)[0]
            how = "were all lost the same way" if self.lost else "all ended in the same error"
            share = "" if count == self.limit else f" ({count} of them)"
            self.stop(f"the first {self.limit} games {how}{share}: {quoted.rstrip('.')}")
