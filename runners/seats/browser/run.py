"""A run with people in it: the pages served and the games played on one event loop, in one task
group, so a page's answer goes straight to the game waiting for it and Ctrl-C stops both.

The games run one at a time, in order (a study's list for one participant); before the first, each
seat without a participant id from the command line waits for its page to give one. When the run
ends the pages are told so, and the server stays up a moment for them to hear it.
"""

from __future__ import annotations

import anyio
from rich.console import Console

from engine import PolicyFactory
from engine.session import play_plan
from engine.spending import Spending
from runners.ending import Ending
from runners.flags.running import transcripts_kept
from runners.runloop import Interrupt, storage_failure

from runners.seats.browser.cli import Setup
from runners.seats.browser.seats import BrowserSeats
from runners.seats.browser.server import HOST, make_app, serving

LINGER = 5.0  # seconds the server waits, after the last game, for the pages to hear the run is over


async def serve_and_play(setup: Setup, factory: PolicyFactory, console: Console, spending: Spending | None) -> Ending:
    """Serve the seats and play the games not yet recorded; how the run ended (the tally is taken
    afterwards). A full disk stops it; the records before it stay."""
    prepared = setup.prepared
    args, plan, run = prepared.args, prepared.plan, prepared.session.run
    seats = BrowserSeats(setup.seats, plan.total, setup.participants)
    factory.seats = seats
    stopped: str | None = None
    async with anyio.create_task_group() as group:

        signals = Interrupt(group.cancel_scope)
        group.start_soon(signals.watch)
        async with serving(make_app(seats), HOST, setup.port) as port:
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
                stopped = storage_failure(failed)
            seats.finish()
            with anyio.move_on_after(LINGER):
                await seats.told()
        group.cancel_scope.cancel()
    if stopped is not None:
        return Ending("storage", reason=stopped)
    return Ending("interrupted" if signals.caught else "finished")
