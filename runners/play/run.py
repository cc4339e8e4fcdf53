"""A run with people in it: the pages served and the games played on one event loop, in one task
group, so a page's answer goes straight to the game waiting for it and Ctrl-C stops both.

The games run one at a time, in order (a study's list for one participant); before the first, each
seat without a participant id from the command line waits for its page to give one. When the run
ends the pages are told so, and the server stays up a moment for them to hear it.
"""

from __future__ import annotations

import time

import anyio

from engine import PolicyFactory
from engine.session.playing import finish, play_plan
from runners._runloop import EXIT_INTERRUPTED, Interrupt, EXIT_LOST_GAMES, EXIT_STORAGE, first_leaf, spending_for, transcripts_kept, wide_console

from .cli import Setup
from .seats import BrowserSeats
from .server import HOST, serving

LINGER = 5.0  # seconds the server waits, after the last game, for the pages to hear the run is over


async def serve_and_play(setup: Setup, factory: PolicyFactory, spending) -> bool:
    """Serve the seats and play the games not yet recorded; True if the run finished, False if it
    was interrupted. OSError if the run's files could not be written (records before it stay)."""
    prepared = setup.prepared
    args, plan, run = prepared.args, prepared.plan, prepared.run
    seats = BrowserSeats(setup.seats, plan.total, setup.participants)
    factory.seats = seats
    stopped: BaseException | None = None
    async with anyio.create_task_group() as group:

        signals = Interrupt(group.cancel_scope)
        group.start_soon(signals.watch)
        async with serving(seats, setup.port) as port:
            for role, front in seats.fronts.items():
                who = f" (participant {front.participant})" if front.participant else ""
                print(f"Seat {role}{who}: http://{HOST}:{port}/seat/{front.token}", flush=True)
            if any(front.participant is None for front in seats.fronts.values()):
                print("Waiting for each page to give its participant id…", flush=True)
            await seats.named()
            try:
                await play_plan(
                    run, plan, factory, recorded=prepared.recorded, concurrency=1, observers=[seats],
                    log_level=args.log_level, transcripts=transcripts_kept(args), spending=spending,
                )
            except* OSError as failed:  # a full disk, a run directory gone
                stopped = first_leaf(failed)
            seats.finish()
            with anyio.move_on_after(LINGER):
                await seats.told()
        group.cancel_scope.cancel()
    if stopped is not None:
        raise stopped
    return not signals.caught


def play(setup: Setup, factory: PolicyFactory) -> int:
    """Play the run and say how it went; the exit status."""
    try:
        return _play(setup, factory)
    finally:
        setup.prepared.lock.close()


def _play(setup: Setup, factory: PolicyFactory) -> int:
    prepared = setup.prepared
    plan, run = prepared.plan, prepared.run
    console = wide_console()
    spending = spending_for(prepared, factory, console)
    started = time.perf_counter()
    try:
        finished = anyio.run(serve_and_play, setup, factory, spending)
    except KeyboardInterrupt:  # before the loop listened for it: every finished record is on disk
        finished = False
    except OSError as exc:
        console.print(f"Stopped: cannot write the run's files: {exc}. Continue with: {setup.command}", soft_wrap=True)
        return EXIT_STORAGE
    tally, _ = finish(run, plan, complete=finished)
    if not finished:
        console.print(
            f"Interrupted: {tally.games} of {plan.total} games recorded in {run.results_path}. Continue with: {setup.command}",
            soft_wrap=True,
        )
        return EXIT_INTERRUPTED
    console.print(
        f"{tally.games} game{'s' * (tally.games != 1)} in {time.perf_counter() - started:.1f}s: {tally.scored} scored, "
        f"{tally.lost} lost to the infrastructure, {tally.other_errors} ended in other errors. Results: {run.results_path}",
        soft_wrap=True,
    )
    if tally.lost:
        console.print(f"Play the lost games again with: {setup.command}", soft_wrap=True)
        return EXIT_LOST_GAMES
    return 0
