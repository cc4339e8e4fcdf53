"""What the runner shows: a live dashboard on a terminal (``_dashboard``), summary lines
elsewhere, and the final table (``_final_table``)."""

from __future__ import annotations

import time

import anyio
from rich.console import Console, RenderableType
from rich.live import Live
from rich.text import Text

from engine.spending.budget import Spending
from engine.play.run import RunProgress

from ._dashboard import Section, counters_section, render_dashboard, score_cell, short_labels
from ._final_table import summary_table
from ._spending import spending_line

__all__ = [
    "ProgressDisplay", "Section", "counters_section", "model_line", "render_dashboard", "score_cell", "short_labels",
    "status_line", "summary_table",
]

TERMINAL_REFRESH = 0.5  # seconds between dashboard redraws (about 2 per second)
LINE_INTERVAL = 5.0  # seconds between summary lines when not on a terminal


def status_line(progress: RunProgress, elapsed: float) -> str:
    scored = progress.successes + progress.failures
    rate = f"{100 * progress.successes / scored:.1f}%" if scored else "n/a"
    return (
        f"[{elapsed:7.1f}s] {progress.done}/{progress.total} done, {progress.running} running, "
        f"{progress.queued} queued | success {rate} | errors {progress.errors}"
    )


def model_line(hub, now: float) -> str:
    backends = hub.backends() if hub is not None else []
    return "".join(
        f" | {b.limiter.name}: {b.limiter.running} in flight, {b.limiter.stats.rate(now):.0f} rpm, "
        f"{b.limiter.stats.rate_limited} x 429, {b.limiter.stats.failed} failed"
        for b in backends
    )


class ProgressDisplay:
    """The live dashboard on a terminal; a status line every few seconds elsewhere; nothing at all
    when ``quiet`` (a person's form is on the terminal). ``extra`` returns sections to add to each
    frame (such as a ``counters_section``)."""

    def __init__(self, console: Console, progress: RunProgress, *, interactive: bool, quiet: bool = False) -> None:
        self.console = console
        self.progress = progress
        self.interactive = interactive and not quiet
        self.quiet = quiet
        self._started = time.perf_counter()
        self._live: Live | None = None
        self.hub = None  # the run's model clients, once open
        self.spending: Spending | None = None
        self.extra = lambda: ()

    def frame(self) -> RenderableType:
        return render_dashboard(
            self.progress, time.perf_counter() - self._started, self.hub, self.spending,
            height=self.console.size.height, extra=self.extra(),
        )

    async def run(self) -> None:
        """Redraw until cancelled. A display that fails goes quiet; it never ends the run."""
        try:
            await self._run()
        except Exception as exc:
            self.close()
            self.console.print(f"(display stopped: {type(exc).__name__}: {exc})", highlight=False)

    async def _run(self) -> None:
        if self.quiet:
            return
        if not self.interactive:
            while True:
                await anyio.sleep(LINE_INTERVAL)
                line = status_line(self.progress, time.perf_counter() - self._started)
                line += model_line(self.hub, time.monotonic())
                if self.spending is not None:
                    line += " | " + spending_line(self.spending)
                self.console.print(line, highlight=False)
        self._live = Live(Text(""), console=self.console, auto_refresh=False, transient=False)
        self._live.start()
        while True:
            await anyio.sleep(TERMINAL_REFRESH)
            self._live.update(self.frame(), refresh=True)

    def close(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.update(self.frame(), refresh=True)
            live.stop()
