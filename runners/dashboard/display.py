"""What a run shows while it plays: the live dashboard on a terminal (its content ``content``, laid
out by ``layout``), a status line every few seconds elsewhere, nothing while a person's form is on
the terminal."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from rich.console import Console, RenderableType
from rich.live import Live
from rich.text import Text

from runners.dashboard.content import Section, counters_section, render_dashboard
from runners.dashboard.spending import spending_line

if TYPE_CHECKING:
    from engine.executors import Executor
    from engine.play import RunProgress
    from engine.spending import Spending

TERMINAL_REFRESH = 0.5  # seconds between dashboard redraws (about 2 per second)
LINE_INTERVAL = 5.0  # seconds between summary lines when not on a terminal


def wide_console() -> Console:
    """The terminal's console; elsewhere (a file, a pipe) one wide enough for the tables."""
    console = Console()
    return console if console.is_terminal else Console(width=max(console.width, 132))


def status_line(progress: RunProgress, elapsed: float) -> str:
    scored = progress.successes + progress.failures
    rate = f"{100 * progress.successes / scored:.1f}%" if scored else "n/a"
    return (
        f"[{elapsed:7.1f}s] {progress.done}/{progress.total} done, {progress.running} running, "
        f"{progress.queued} queued | success {rate} | errors {progress.errors}"
    )


def model_line(hub, now: float) -> str:
    """Each model's calls; before them, the model servers the engine is still starting."""
    backends = hub.backends() if hub is not None else []
    starting = "".join(f" | {line}" for line in hub.starting(now)) if hub is not None else ""
    return starting + "".join(
        f" | {b.limiter.name}: {b.limiter.running} in flight, {b.limiter.stats.rate(now):.0f} rpm, "
        f"{b.limiter.stats.rate_limited} x 429, {b.limiter.stats.failed} failed, "
        f"{b.limiter.stats.completion_tokens} reply tokens" + (f" (+{b.limiter.stats.arriving} arriving)" if b.limiter.stats.arriving else "")
        for b in backends
    )


def batch_line(hub, now: float) -> str:
    """With ``--batch``: each batched model's batches in flight, their requests, the calls waiting
    for the next batch and the oldest batch's age, as the dashboard's batches section shows them."""
    batches = hub.batches if hub is not None else None
    rows = batches.rows(now) if batches is not None else []
    return "".join(
        f" | {name} batches: {f['in flight']} in flight ({f['requests']} requests), {f['queued']} queued, oldest {f['oldest']}"
        for name, f in rows
    )


class ProgressDisplay:
    """The live dashboard on a terminal; a status line every few seconds elsewhere; nothing at all
    when ``quiet`` (a person's form is on the terminal). ``extra`` returns sections to add to each
    frame (such as a ``counters_section``). ``hub`` gives the run's model hub as it is now: the run
    makes its own once it starts (``ModelHub.for_run``)."""

    def __init__(
        self, console: Console, progress: RunProgress, *, interactive: bool, quiet: bool = False,
        hub: Callable[[], Any] = lambda: None,
        spending: Spending | None = None, executor: Executor | None = None,
    ) -> None:
        self.console = console
        self.progress = progress
        self.interactive = interactive and not quiet
        self.quiet = quiet
        self._started = time.perf_counter()
        self._live: Live | None = None
        self._hub = hub  # the run's model clients
        self.spending = spending
        self.executor = executor

    @property
    def hub(self) -> Any:
        return self._hub()

    def extra(self) -> list[Section]:
        """On a cluster: each model summed over the workers, and a row per worker."""
        if self.executor is None:
            return []
        workers = self.executor.worker_rows()
        if not workers:
            return []
        models = self.executor.model_rows()
        sections = [counters_section("model", "Models (all workers)", models, priority=2)] if models else []
        return [*sections, counters_section("worker", "Workers", workers, priority=3)]

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
                hub = self.hub
                line += model_line(hub, time.monotonic()) + batch_line(hub, time.monotonic())
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
