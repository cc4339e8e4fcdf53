"""What the runner shows: a live dashboard on a terminal, summary lines elsewhere, and the final table."""

from __future__ import annotations

import itertools
import time

import anyio
from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from engine.budget import Spending
from engine.run import RunProgress
from engine.stats import ConditionSummary, ScoreSummary, wilson_interval
from puzzles import GAMES

from ._spending import spending_line

TERMINAL_REFRESH = 0.5  # seconds between dashboard redraws (about 2 per second)
LINE_INTERVAL = 5.0  # seconds between summary lines when not on a terminal
SHOWN_RUNNING = 8
SHOWN_RECENT = 6
SHOWN_CONDITIONS = 12
SHOWN_SCORES = 3  # score columns in the per-condition table


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


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _rate_cell(successes: int, scored: int) -> tuple[str, str]:
    if not scored:
        return "n/a", "n/a"
    low, high = wilson_interval(successes, scored)
    return f"{100 * successes / scored:.1f}", f"{100 * low:.1f}-{100 * high:.1f}"


def short_labels(fields: dict[str, dict[str, str]]) -> dict[str, str]:
    """Each condition label shortened to the fields that differ between conditions."""
    if len(fields) < 2:
        return {label: "" for label in fields}
    keys = list(next(iter(fields.values())))
    varying = [k for k in keys if len({f.get(k) for f in fields.values()}) > 1]
    return {label: " ".join(f"{k}={f.get(k)}" for k in varying) for label, f in fields.items()}


def model_table(hub, now: float) -> Table | None:
    """One row per model: calls in flight and the cap, requests per minute over the last minute,
    429s and other failures, mean latency, tokens and cost; for vLLM the server's running/waiting."""
    backends = hub.backends() if hub is not None else []
    if not backends:
        return None
    table = Table(title="models", title_justify="left")
    for column in ("model", "in flight", "rpm (limit)", "calls", "429/529", "5xx", "timeouts", "failed", "latency s", "tokens in/out", "cost $", "server run/wait"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for backend in backends:
        limiter, s = backend.limiter, backend.limiter.stats
        limit = limiter.requests.per_minute
        load = hub.loads.get(limiter.name)
        table.add_row(
            limiter.name,
            f"{limiter.running}/{limiter.cap}" + (f" ({limiter.cap_note})" if limiter.cap_note else ""),
            f"{s.rate(now):.0f} ({limit:.0f})" if limit else f"{s.rate(now):.0f}",
            str(s.calls),
            str(s.rate_limited),
            str(s.server_errors),
            str(s.timeouts),
            str(s.failed),
            f"{s.latency_sum / s.calls:.2f}" if s.calls else "-",
            f"{s.prompt_tokens}/{s.completion_tokens}",
            "-" if s.cost_usd is None else f"{s.cost_usd:.2f}",
            f"{load.running:.0f}/{load.waiting:.0f}" if load is not None else "",
        )
    return table


def _score_label(progress: RunProgress):
    games = {f.get("game") for f in progress.condition_fields.values()}
    game = GAMES.get(next(iter(games))) if len(games) == 1 else None
    return game.score_label if game is not None else (lambda key: key)


def render_dashboard(progress: RunProgress, elapsed: float, hub=None, spending: Spending | None = None) -> Group:
    """One frame of the live dashboard, from the counters only (bounded work per frame)."""
    p = progress
    label = _score_label(p)
    short = short_labels(p.condition_fields)
    eta = p.eta(time.monotonic())
    head = Table.grid(padding=(0, 2))
    head.add_row(
        Text("games", style="bold"),
        ProgressBar(total=max(p.total, 1), completed=p.done, width=40),
        f"{p.done}/{p.total} done",
        f"{p.running} running",
        f"{p.queued} queued",
        f"elapsed {_clock(elapsed)}",
        f"ETA {_clock(eta)}",
    )
    scored = p.successes + p.failures
    rate, ci = _rate_cell(p.successes, scored)
    errors = ", ".join(f"{kind} {n}" for kind, n in sorted(p.error_kinds.items())) or "none"
    line = f"success so far {rate}% (95% CI {ci}) of {scored} scored games"
    games, successes, prefix_scored = p.prefix
    if games < p.done:  # some games finished out of order: the unbiased estimate differs
        unbiased, unbiased_ci = _rate_cell(successes, prefix_scored)
        line += f" | unbiased: {unbiased}% ({unbiased_ci}) over the first {games} games started, all finished"
    parts: list = [head, Text(f"{line} | errors: {errors}")]
    if p.scores:
        parts.append(Text("scores so far: " + " | ".join(f"{label(k)} {score_cell(t.summary())}" for k, t in p.scores.items())))
    models = model_table(hub, time.monotonic())
    if models is not None:
        parts.append(models)
    if spending is not None:
        parts.append(Text(spending_line(spending)))

    if len(p.by_condition) > 1:
        table = Table(title="by condition", title_justify="left", expand=False)
        score_keys = list(p.scores)[:SHOWN_SCORES]
        for column in ("condition", "done", "success %", "95% CI", "errors", *(label(k) for k in score_keys)):
            table.add_column(column, justify="left" if column == "condition" else "right")
        # Conditions with games in flight first, then the others in the run's order.
        active = dict.fromkeys(game.condition for game in itertools.islice(p.live.values(), 64))
        order = [c for c in active if c in p.by_condition] + [c for c in p.by_condition if c not in active]
        for condition in order[:SHOWN_CONDITIONS]:
            wins, losses, errs = p.by_condition[condition]
            rate, ci = _rate_cell(wins, wins + losses)
            tallies = p.scores_by_condition.get(condition, {})
            cells = [score_cell(tallies[k].summary()) if k in tallies else "-" for k in score_keys]
            table.add_row(short.get(condition) or condition, str(wins + losses + errs), rate, ci, str(errs), *cells)
        if len(p.by_condition) > SHOWN_CONDITIONS:
            table.add_row(f"... and {len(p.by_condition) - SHOWN_CONDITIONS} more", *[""] * (4 + len(score_keys)))
        parts.append(table)

    if p.live:
        shown = list(itertools.islice(p.live.values(), SHOWN_RUNNING))
        table = Table(title=f"running games ({len(shown)} of {len(p.live)})", title_justify="left")
        table.add_column("game", justify="right")
        table.add_column("condition", max_width=40, no_wrap=True, overflow="ellipsis")
        table.add_column("turn", justify="right")
        table.add_column("to act")
        table.add_column("progress", justify="left")
        table.add_column("last message", max_width=60, no_wrap=True, overflow="ellipsis")
        for game in shown:
            right = " ".join(f"{role} {_number(n)}" for role, n in game.progress.items())
            message = f"{game.last_sender}: {game.last_message}" if game.last_message else ""
            table.add_row(
                str(game.game_id), short.get(game.condition, game.condition), f"{game.turn}/{game.max_turns}", game.role, right,
                message.replace("\n", " "),
            )
        parts.append(table)

    if p.recent:
        table = Table(title="recently finished", title_justify="left")
        for column in ("game", "condition", "outcome", "turns"):
            table.add_column(column, justify="right" if column in ("game", "turns") else "left",
                             max_width=60 if column == "condition" else None, no_wrap=True, overflow="ellipsis")
        for record in list(p.recent)[-SHOWN_RECENT:][::-1]:
            outcome = record.outcome if record.error is None else f"error: {record.error.kind}"
            label = record.spec.condition()
            table.add_row(str(record.game_id), short.get(label, label), outcome, str(record.turns))
        parts.append(table)
    return Group(*parts)


class ProgressDisplay:
    """The live dashboard on a terminal; a status line every few seconds elsewhere."""

    def __init__(self, console: Console, progress: RunProgress, *, interactive: bool) -> None:
        self.console = console
        self.progress = progress
        self.interactive = interactive
        self._started = time.perf_counter()
        self._live: Live | None = None
        self.hub = None  # the run's model clients, once open
        self.spending: Spending | None = None

    def frame(self) -> Group:
        return render_dashboard(self.progress, time.perf_counter() - self._started, self.hub, self.spending)

    async def run(self) -> None:
        """Redraw until cancelled. A display that fails goes quiet; it never ends the run."""
        try:
            await self._run()
        except Exception as exc:
            self.close()
            self.console.print(f"(display stopped: {type(exc).__name__}: {exc})", highlight=False)

    async def _run(self) -> None:
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


def _number(x: float) -> str:
    return str(x) if isinstance(x, int) or float(x).is_integer() else f"{x:.2f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def score_cell(score: ScoreSummary | None) -> str:
    """A rate as a percentage, a mean as a number, each with its 95% interval."""
    if score is None:
        return "-"
    if score.kind == "rate":
        return f"{_pct(score.value)} [{_pct(score.low)}-{_pct(score.high)}]"
    if score.n < 2:
        return f"{score.value:.2f}"
    return f"{score.value:.2f} [{score.low:.2f}-{score.high:.2f}]"


def summary_table(summaries: list[ConditionSummary]) -> Table:
    """One row per condition; fields shared by every condition go in the title. Every score the
    game gives is a column, labelled by the game."""
    keys = list(summaries[0].fields) if summaries else []
    shared = {k: summaries[0].fields[k] for k in keys if all(s.fields.get(k) == summaries[0].fields[k] for s in summaries)}
    varying = [k for k in keys if k not in shared]
    scores = list(dict.fromkeys(k for s in summaries for k in s.scores))
    games = {s.fields.get("game") for s in summaries}
    game = GAMES.get(next(iter(games))) if len(games) == 1 else None
    label = game.score_label if game is not None else (lambda key: key)
    title = ", ".join(f"{k}={v}" for k, v in shared.items())
    table = Table(
        title=title,
        caption="success % of games without error, 95% Wilson interval; scores: rates % or means, 95% interval",
    )
    for key in varying:
        table.add_column(key)
    table.add_column("games", justify="right")
    table.add_column("success %", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("mean turn solved", justify="right")
    for key in scores:
        table.add_column(label(key), justify="right")
    table.add_column("format errors", justify="right")
    table.add_column("invalid actions", justify="right")
    table.add_column("game errors", justify="right")
    models = any(s.calls for s in summaries)
    if models:
        table.add_column("calls", justify="right")
        table.add_column("tokens", justify="right")
        table.add_column("cost $", justify="right")
    for s in summaries:
        turn = f"{s.mean_solved_turn:.2f}" if s.mean_solved_turn is not None else "-"
        scored = s.games > s.errors
        table.add_row(
            *(s.fields.get(k, "") for k in varying),
            str(s.games),
            _pct(s.success_rate) if scored else "n/a",
            f"{_pct(s.ci_low)}-{_pct(s.ci_high)}" if scored else "n/a",
            turn,
            *(score_cell(s.scores.get(k)) for k in scores),
            str(s.format_errors),
            str(s.invalid_actions),
            str(s.errors),
            *((str(s.calls), f"{s.tokens:,}", "-" if s.cost_usd is None else f"{s.cost_usd:.2f}") if models else ()),
        )
    return table
