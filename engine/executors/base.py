"""The executor contract, and the local executor: the games played in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

from puzzles import Game

from engine.play.pacing import GameStarts
from engine.policies.factory import PolicyFactory
from engine.records.record import GameRecord
from engine.records.rundir import Plan
from engine.play.run import RunProgress, run_games


class Executor(Protocol):
    """Plays the games ``ids`` of ``plan``: every observer sees each game start and end, and
    ``on_record`` gets each record, on the driver. Cancelling the caller's scope stops it."""

    name: str

    async def play(
        self, plan: Plan, ids: Iterator[int], *, factory: PolicyFactory, concurrency: int,
        on_record: Callable[[GameRecord], None], progress: RunProgress | None, observers: Iterable[Any],
        starts: GameStarts | None, games: Mapping[str, Game],
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

    async def play(self, plan, ids, *, factory, concurrency, on_record, progress, observers, starts, games) -> None:
        await run_games(
            plan.specs_for(ids, games), factory=factory, concurrency=concurrency, on_record=on_record,
            progress=progress, observers=observers, games=games, starts=starts,
        )
