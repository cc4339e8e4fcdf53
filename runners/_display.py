"""What the runner shows: a progress bar on a terminal, summary lines elsewhere, and the final table."""

from __future__ import annotations

import time

import anyio
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from engine.run import RunProgress
from engine.stats import ConditionSummary

TERMINAL_REFRESH = 0.25  # seconds between progress-bar redraws
LINE_INTERVAL = 5.0  # seconds between summary lines when not on a terminal


def status_line(progress: RunProgress, elapsed: float) -> str:
    scored = progress.successes + progress.failures
    rate = f"{100 * progress.successes / scored:.1f}%" if scored else "-"
    return (
        f"[{elapsed:7.1f}s] {progress.done}/{progress.total} done, {progress.running} running, "
        f"{progress.queued} queued | success {rate} | errors {progress.errors}"
    )


class ProgressDisplay:
    def __init__(self, console: Console, progress: RunProgress, *, interactive: bool) -> None:
        self.console = console
        self.progress = progress
        self.interactive = interactive
        self._started = time.perf_counter()
        self._bar: Progress | None = None
        self._task = None

    def _success_text(self) -> str:
        p = self.progress
        scored = p.successes + p.failures
        return f"success {100 * p.successes / scored:5.1f}%" if scored else "success   -  "

    async def run(self) -> None:
        """Redraw until cancelled. A display that fails goes quiet; it never ends the run."""
        try:
            await self._run()
        except Exception as exc:
            self.close()
            self.console.print(f"(progress display stopped: {type(exc).__name__}: {exc})", highlight=False)

    async def _run(self) -> None:
        if not self.interactive:
            while True:
                await anyio.sleep(LINE_INTERVAL)
                self.console.print(status_line(self.progress, time.perf_counter() - self._started), highlight=False)
        self._bar = Progress(
            TextColumn("games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[running]} running"),
            TextColumn("{task.fields[success]}"),
            TextColumn("errors {task.fields[errors]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            auto_refresh=False,
        )
        p = self.progress
        self._task = self._bar.add_task(
            "games", total=p.total, completed=p.done, running=p.running, success=self._success_text(), errors=p.errors
        )
        self._bar.start()
        while True:
            self._update()
            await anyio.sleep(TERMINAL_REFRESH)

    def _update(self) -> None:
        if self._bar is None or self._task is None:
            return
        p = self.progress
        self._bar.update(
            self._task, completed=p.done, running=p.running, success=self._success_text(), errors=p.errors
        )
        self._bar.refresh()

    def close(self) -> None:
        bar, self._bar = self._bar, None
        if bar is not None and self._task is not None:
            p = self.progress
            bar.update(self._task, completed=p.done, running=p.running, success=self._success_text(), errors=p.errors)
            bar.stop()


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def summary_table(summaries: list[ConditionSummary]) -> Table:
    """One row per condition; fields shared by every condition go in the title."""
    roles = list(summaries[0].actions_per_position) if summaries else []
    keys = list(summaries[0].fields) if summaries else []
    shared = {k: summaries[0].fields[k] for k in keys if all(s.fields.get(k) == summaries[0].fields[k] for s in summaries)}
    varying = [k for k in keys if k not in shared]
    title = "AsymPuzl: " + ", ".join(f"{k}={v}" for k, v in shared.items())
    table = Table(title=title, caption="success % of games without error; 95% Wilson interval")
    for key in varying:
        table.add_column(key)
    table.add_column("games", justify="right")
    table.add_column("success %", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("mean turn solved", justify="right")
    for role in roles:
        table.add_column(f"actions/pos {role}", justify="right")
    table.add_column("format errors", justify="right")
    table.add_column("invalid actions", justify="right")
    table.add_column("game errors", justify="right")
    for s in summaries:
        turn = f"{s.mean_solved_turn:.2f}" if s.mean_solved_turn is not None else "-"
        table.add_row(
            *(s.fields.get(k, "") for k in varying),
            str(s.games),
            _pct(s.success_rate),
            f"{_pct(s.ci_low)}-{_pct(s.ci_high)}",
            turn,
            *(f"{s.actions_per_position.get(r, 0.0):.2f}" for r in roles),
            str(s.format_errors),
            str(s.invalid_actions),
            str(s.errors),
        )
    return table
