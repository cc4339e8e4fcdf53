"""The executor contract, and the local executor: the games played in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from puzzles import GAMES, Game

from engine.play.pacing import GameStarts
from engine.play.run import GameObserver, RunProgress, run_games
from engine.policies.factory import PolicyFactory, models_play
from engine.records.record import GameRecord
from engine.records.rundir import Plan
from engine.records.transcribe import TranscriptWriter
from engine.spending.budget import Spending


class Executor(Protocol):
    """Plays the games ``ids`` of ``plan``: every observer sees each game start and end, and
    ``on_record`` gets each record, on the driver, after ``transcripts`` (if given) has written the
    game's transcript. No game starts past ``spending``'s caps (given when models play). Cancelling
    the caller's scope stops it."""

    name: str

    async def play(
        self, plan: Plan, ids: Iterator[int], *, factory: PolicyFactory, concurrency: int,
        on_record: Callable[[GameRecord], None], progress: RunProgress | None = None,
        observers: Sequence[GameObserver] = (), games: Mapping[str, Game] = GAMES,
        transcripts: TranscriptWriter | None = None, spending: Spending | None = None,
    ) -> None: ...

    def summaries(self, factory: PolicyFactory) -> list[dict[str, Any]]:
        """How the models were called, per process that called them (``ModelHub.summary``), after ``play``."""
        ...

    def worker_rows(self) -> list[tuple[str, dict[str, object]]]:
        """A dashboard row per worker process (none when the games play in this process)."""
        ...

    def model_rows(self) -> list[tuple[str, dict[str, object]]]:
        """A dashboard row per model, summed over the workers (none when this process calls the models)."""
        ...


class LocalExecutor:
    name = "local"

    def worker_rows(self) -> list[tuple[str, dict[str, object]]]:
        return []

    def model_rows(self) -> list[tuple[str, dict[str, object]]]:
        return []

    def summaries(self, factory: PolicyFactory) -> list[dict[str, Any]]:
        return [factory.hub.summary()] if factory.hub.backends() else []

    async def play(
        self, plan: Plan, ids: Iterator[int], *, factory: PolicyFactory, concurrency: int,
        on_record: Callable[[GameRecord], None], progress: RunProgress | None = None,
        observers: Sequence[GameObserver] = (), games: Mapping[str, Game] = GAMES,
        transcripts: TranscriptWriter | None = None, spending: Spending | None = None,
    ) -> None:
        """Games against models start as the limits serve them and within the caps (``engine.play.pacing``)."""
        starts = GameStarts(factory.hub, spending=spending) if models_play(plan) else None
        watchers = [*observers, *(w for w in (spending, transcripts) if w is not None)]
        await run_games(
            plan.specs_for(ids, games), factory=factory, concurrency=concurrency, on_record=on_record,
            progress=progress, observers=watchers, games=games, starts=starts,
        )
