"""Many games at once under a cap on concurrent games."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import anyio

from .game import play_game
from .policies import PolicyFactory
from .records import GameRecord
from .spec import GameSpec


class RunProgress:
    """Counters the engine keeps as it goes; displays read them, nothing walks the games."""

    def __init__(self, total: int, already_done: int = 0) -> None:
        self.total = total
        self.done = already_done
        self.running = 0
        self.successes = 0
        self.failures = 0
        self.errors = 0
        self.finished_now = 0  # games finished by this process (not counting resumed ones)

    @property
    def queued(self) -> int:
        return self.total - self.done - self.running

    def started(self) -> None:
        self.running += 1

    def finished(self, record: GameRecord) -> None:
        self.running -= 1
        self.done += 1
        self.finished_now += 1
        if record.outcome == "success":
            self.successes += 1
        elif record.outcome == "failure":
            self.failures += 1
        else:
            self.errors += 1


async def run_games(
    specs: Iterable[GameSpec],
    *,
    factory: PolicyFactory,
    concurrency: int,
    on_record: Callable[[GameRecord], None],
    progress: RunProgress | None = None,
) -> None:
    """Play every spec, at most ``concurrency`` at a time, handing each record to ``on_record`` as
    soon as its game ends. Cancelling the caller's scope stops the run; games in flight are dropped."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    pending = iter(specs)

    async def worker() -> None:
        for spec in pending:  # one shared iterator: each game is taken by exactly one worker
            if progress is not None:
                progress.started()
            record = await play_game(spec, factory)
            if progress is not None:
                progress.finished(record)
            on_record(record)

    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
