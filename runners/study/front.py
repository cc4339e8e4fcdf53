"""One participant of a study at their page: the seat they take in each game (a ``BrowserFront``, so
a game sees the same front end as ``asymgames play``'s) and the screens between games (the block's
instructions, the waiting room, the last game's outcome, the end with the completion code).

The page's long poll tells the front that the page is there: ``away()`` is how long it has been
without one, which is how a person who closed the page, or lost the connection for good, is found.
"""

from __future__ import annotations

import time
from typing import Any

from engine.policies import HumanAbsent
from engine.study import Screen

from runners.seats.browser.seats import BrowserFront


class StudyFront(BrowserFront):
    """A participant's page for the whole study."""

    participant: str  # a study's page is always a participant's

    def __init__(self, participant: str, study_title: str, total: int) -> None:
        super().__init__(role="", total=total, participant=participant)
        self.title = study_title
        self.number = 0  # games started for this participant
        self.screen: Screen | None = None
        self.final = False  # the screen is the last (done, left, full): the page stops asking
        self.polling = 0  # state requests of the page waiting now
        self.seen_at = time.monotonic()
        self.instructed: set[int] = set()  # blocks whose instructions were shown
        self.skipped: set[int] = set()  # blocks that had no game left for them
        self.why = ""  # why the person (or their partner) left, put in the game's error: the time limit, say

    # ---- the page's side ----

    async def wait_change(self, since: int, seconds: float) -> None:
        self.polling += 1
        self.seen_at = time.monotonic()
        try:
            await super().wait_change(since, seconds)
        finally:
            self.polling -= 1
            self.seen_at = time.monotonic()

    def away(self) -> float:
        """Seconds without the page asking (0 while it asks)."""
        return 0.0 if self.polling else time.monotonic() - self.seen_at

    def state(self) -> dict[str, Any]:
        data = super().state()
        screen = self.screen
        if screen is not None:
            data.update(status="done" if self.final else "screen", prompt=None, seconds_left=None)
        data.update(
            study=self.title, screen=screen, can_leave=not self.final and not self.gone,
            game=self.number or None, games=self.total,
        )
        return data

    def show(self, screen: Screen | None, *, final: bool = False) -> None:
        self.screen = screen
        self.final = final
        if final:
            self.done = True
        self.changed()

    # ---- the games ----

    async def play(self, turn: Any) -> Any:
        try:
            return await super().play(turn)
        except HumanAbsent as exc:
            if not self.why:
                raise
            raise HumanAbsent(f"{exc}: {self.why}", role=exc.role) from None

    def seat(self, role: str) -> None:
        """A game starts with the person in ``role``."""
        self.role = role
        self.number += 1
        self.screen = None
        self.why = ""

    def game_over(self, record: Any, game: Any) -> None:
        super().game_over(record, game)
        assert self.last is not None
        self.last["game"] = self.number
