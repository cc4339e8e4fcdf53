"""The model usage of a cluster's workers, kept outside them so that a worker killed mid-run
(``kill -9``, a lost node) takes none of its counted calls with it.

A worker's model calls are billed whether or not its games come back; the games it lost are played
again by the others, whose own calls count too. So each worker reports its usage
(``ModelHub.summary``) to the ``UsageTally`` as its calls end, and no call's reply or final failure
reaches a game before a report that counts it has landed: the hub awaits ``UsageReports.after_call``
as each call ends (``ModelHub.after_call``, set only on a worker of a run with models). Reports are
coalesced: one is in flight at a time, and the calls that end meanwhile wait for the next, which
counts them all. At the end of the run the driver takes each live worker's usage from the worker
itself and a dead worker's from the tally: every call counted once.

What a dead worker's report leaves out is what no record shows: a call answered but whose worker
died before the report counting it landed never reached its game, which is played again. The
provider billed it all the same: such calls, like those cut off by the death, are missing from
``usage.json``; only calls in flight at the death, as their games saw them, go uncounted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio


class UsageTally:
    """Each worker's last usage report (a Ray actor's state, with the run's ``LimitLedger``)."""

    def __init__(self) -> None:
        self.reports: dict[int, dict[str, Any]] = {}

    def report(self, worker: int, summary: dict[str, Any]) -> None:
        self.reports[worker] = summary

    def usage(self) -> dict[int, dict[str, Any]]:
        return self.reports


class UsageReports:
    """A worker's reports of its usage to ``tally`` (a Ray actor): ``keep_sending`` runs for the
    worker's life, and the worker's models await ``after_call`` as each of their calls ends."""

    def __init__(self, tally: Any, worker: int) -> None:
        self.tally, self.worker = tally, worker
        self.taken = 0  # reports whose summary was taken
        self.landed = 0  # the last of those the tally has
        self.wanted = anyio.Event()  # a call ended since the last report was taken
        self.arrived = anyio.Event()  # set, and replaced, as each report lands

    async def after_call(self) -> None:
        """Return once the tally has a report taken after now: it counts the call that just ended."""
        due = self.taken + 1
        self.wanted.set()
        while self.landed < due:
            await self.arrived.wait()

    async def keep_sending(self, summary: Callable[[], dict[str, Any]]) -> None:
        """Send a report (``summary()``, the hub's) whenever a call ended since the last was taken, one
        at a time, until cancelled."""
        while True:
            await self.wanted.wait()
            self.wanted = anyio.Event()
            self.taken += 1
            await self.tally.report.remote(self.worker, summary())
            self.landed = self.taken
            self.arrived.set()
            self.arrived = anyio.Event()


__all__ = ["UsageReports", "UsageTally"]
