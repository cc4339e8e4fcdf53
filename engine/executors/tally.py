"""The model usage of a cluster's workers, kept outside them so that a worker killed mid-run
(``kill -9``, a lost node) takes none of its calls with it.

A worker's model calls are billed whether or not its games come back; the games it lost are played
again by the others, whose own calls count too. So each worker reports its usage
(``ModelHub.summary``) to the ``UsageTally`` as its calls finish: ``keep_reporting`` looks every
``REPORT_EVERY`` seconds and sends the summary when a counter moved, one report at a time. At the
end of the run the driver takes each live worker's usage from the worker itself and a dead worker's
from the tally: every call counted once. A worker killed loses only what finished in its last
report's interval (a call still in flight then was never answered, and can be known to no one).
"""

from __future__ import annotations

from typing import Any

import anyio

from engine.backends.limiter import COUNTERS

REPORT_EVERY = 0.01  # seconds between looks at a worker's counters


class UsageTally:
    """Each worker's last usage report (a Ray actor's state, with the run's ``LimitLedger``)."""

    def __init__(self) -> None:
        self.reports: dict[int, dict[str, Any]] = {}

    def report(self, worker: int, summary: dict[str, Any]) -> None:
        self.reports[worker] = summary

    def usage(self) -> dict[int, dict[str, Any]]:
        return self.reports


def counted(hub: Any) -> tuple[int, ...]:
    """Every counter of every model of ``hub``: what moves when a call or an attempt ends."""
    return tuple(getattr(b.limiter.stats, c) for b in hub.backends() for c in COUNTERS)


async def keep_reporting(hub: Any, tally: Any, worker: int) -> None:
    """Send ``hub``'s usage to ``tally`` (a Ray actor) whenever a counter moved, until cancelled."""
    sent: tuple[int, ...] = ()
    while True:
        await anyio.sleep(REPORT_EVERY)
        now = counted(hub)
        if now != sent:
            await tally.report.remote(worker, hub.summary())
            sent = now


__all__ = ["REPORT_EVERY", "UsageTally", "counted", "keep_reporting"]
