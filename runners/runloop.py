"""The run loop every runner shares: an open run session played to its end with the display and
Ctrl-C, then the summary and how the run ended (``runners.ending``)."""

from __future__ import annotations

import signal
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from functools import partial
from typing import Any

import anyio
from rich.console import Console

from engine.executors import make_executor
from engine.play import GameObserver, RunProgress, tuned_collector
from engine.policies import PolicyFactory, is_model
from engine.records import GameRecord, StorageError
from engine.serving import ServeError
from engine.session import SameFailure, StopStarting, counted_keys, finish, new_progress, play_plan
from engine.spending import Spending
from runners.dashboard.display import ProgressDisplay, wide_console
from runners.dashboard.final_table import print_summary
from runners.dashboard.spending import spending_line
from runners.ending import Ending, say_ending
from runners.flags.running import Prepared, concurrency, transcripts_kept
from runners.flags.seats import people_play
from runners.flags.spending import spending_for
from runners.printable import printable


# How a run's games are played, given the console and the spending: how the run ended.
Play = Callable[[Console, Spending | None], Awaitable[Ending]]
# A task beside the games, given the run's way to give up (with a one-line reason); cancelled when they end.
Beside = Callable[[Callable[[str], None]], Coroutine[Any, Any, None]]


def batch_size(factory: PolicyFactory) -> int | None:
    """The batch size of a run in batch mode (``--batch``), else None."""
    batch = factory.hub.settings.batch
    return batch.size if batch.enabled else None


def first_leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def storage_failure(group: BaseExceptionGroup) -> str:
    """What a full disk or a vanished run directory stopped, in one line."""
    failure = first_leaf(group)
    return str(failure) if isinstance(failure, StorageError) else f"cannot write the run's files: {failure}"


def cache_notes(plan, factory: PolicyFactory) -> list[str]:
    """What the response cache will not save in this run, a line each (``ModelHub.cache_notes``)."""
    return factory.hub.cache_notes(factory.canonical(name) for names in plan.agents for name in names if is_model(name))


class Interrupt:
    """At the first SIGINT or SIGTERM (Ctrl-C, a kill), no game starts and the games in flight get
    ``grace`` seconds to finish and be recorded; then, or at a second signal, ``scope`` is cancelled
    (at once without a grace period). ``caught`` says whether a signal came."""

    def __init__(self, scope: anyio.CancelScope, stop: StopStarting | None = None, grace: float = 0.0,
                 console: Console | None = None, progress: RunProgress | None = None) -> None:
        self.scope = scope
        self.stop = stop
        self.grace = grace
        self.console = console
        self.progress = progress
        self.caught = False

    async def watch(self) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                self.caught = True
                if self.stop is not None:
                    self.stop.stop()
                if self.grace > 0 and self.progress is not None and self.progress.running and self.console is not None:
                    running = self.progress.running
                    self.console.print(
                        f"Stopping: no game starts; waiting up to {self.grace:g}s for the {running} game{'s' * (running != 1)} "
                        "in flight to finish (Ctrl-C again to stop now)", soft_wrap=True, highlight=False)
                    with anyio.move_on_after(self.grace):
                        async for _ in signals:  # a second signal: stop now
                            break
                self.scope.cancel()
                return


async def execute(prepared: Prepared, factory: PolicyFactory, console: Console, spending: Spending | None, *,
                  on_written: Callable[[GameRecord], None] | None = None, observers: Sequence[GameObserver] = (),
                  beside: Beside | None = None) -> Ending:
    """Run the games not yet recorded, with the display and Ctrl-C; how the run ended (the tally is
    taken afterwards). ``on_written``: given each record once it is on disk, with its full
    transcript (full transcripts are then kept, whatever the flags say); ``observers``: more of the
    games' observers; ``beside``: a task that runs while the games play."""
    args, plan, run = prepared.args, prepared.plan, prepared.session.run
    seats = None
    if people_play(plan):  # a person's form owns the terminal: no dashboard, no summary lines
        from runners.seats.terminal import seats_for

        seats = seats_for(args, factory, console)
    interactive = console.is_terminal and not args.no_dashboard and seats is None
    progress = new_progress(plan, counted_keys(run), track_live=interactive)
    executor = make_executor(args.executor, workers=args.workers, address=args.ray_address)
    display = ProgressDisplay(console, progress, interactive=interactive, quiet=seats is not None, hub=lambda: factory.hub,
                              spending=spending, executor=executor)
    ending: Ending | None = None
    async with anyio.create_task_group() as outer:
        stop = StopStarting()
        signals = Interrupt(outer.cancel_scope, stop, args.grace, console, progress)

        def give_up(reason: str) -> None:
            nonlocal ending
            ending = Ending("gave_up", reason=reason, replay_errors=not failure.lost)
            stop.stop()  # games that fail without waiting for anything reach no point where the cancel is felt
            outer.cancel_scope.cancel()

        failure = SameFailure(give_up)

        outer.start_soon(signals.watch)
        outer.start_soon(display.run)
        if beside is not None:
            outer.start_soon(beside, give_up)
        try:
            await play_plan(
                run, plan, factory, recorded=prepared.recorded, concurrency=concurrency(args, plan, batch_size(factory)), progress=progress,
                log_level=args.log_level, transcripts=True if on_written is not None else transcripts_kept(args),
                on_written=on_written,
                observers=[failure, *observers, *([seats] if seats is not None else [])],
                spending=spending, executor=executor, limit=args.limit, stop=stop,
            )
        except* ServeError as group:  # a model server the engine starts did not come up: no game ran
            ending = Ending("gave_up", reason=f"a model server did not start: {first_leaf(group)}")
        except* OSError as group:  # a full disk, a run directory gone: every record before it is kept
            ending = Ending("storage", reason=storage_failure(group))
        outer.cancel_scope.cancel()
    display.close()
    if ending is not None:
        return ending
    if signals.caught:
        return Ending("interrupted", cut=progress.running)
    if spending is not None and spending.stopped is not None:
        return Ending("capped", reason=spending.stopped)
    if args.limit is not None and progress.done < plan.total:
        return Ending("limited", reason=f"--limit {args.limit}")
    return Ending("finished")


def run_and_report(prepared: Prepared, factory: PolicyFactory, play: Play | None = None, command: str | None = None) -> int:
    """Play the run (``play``: by default the games with the dashboard, ``execute``), then print the
    summary table, how it ended and where the results are, with ``command`` to continue it (by
    default the prepared one). Returns the exit status."""
    with prepared.session:
        plan, run = prepared.plan, prepared.session.run
        console = wide_console()
        spending = spending_for(prepared.args, plan, prepared.recorded, run, factory.hub, console)
        for note in cache_notes(plan, factory):
            console.print(printable(note), soft_wrap=True, markup=False, emoji=False, highlight=False)
        started = time.perf_counter()
        try:
            with tuned_collector():
                ending = anyio.run(play or partial(execute, prepared, factory), console, spending)
        except KeyboardInterrupt:  # outside the games: every finished record is already on disk
            ending = Ending("interrupted", tally=None)
        else:
            if ending.kind in ("finished", "capped", "interrupted", "limited"):
                elapsed = time.perf_counter() - started
                tally, summaries = finish(run, plan, complete=ending.kind == "finished")
                if summaries:
                    print_summary(console, summaries)
                if spending is not None:
                    console.print(f"Models: {spending_line(spending)}", soft_wrap=True)
                ending = Ending(ending.kind, tally, elapsed, ending.reason, ending.cut)
        return say_ending(console, ending, total=plan.total, results=run.results_path, command=command or prepared.command)
