"""The live dashboard's content: the progress line, success so far, the scores, and the tables of
models, batches in flight (``--batch``), conditions, running and recently finished games, each a section with a priority, each
frame from the engine's counters only. ``_dashboard_layout`` fits them to the terminal; a caller
can add sections of its own (``extra``), such as a ``counters_section``, without relayout.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from engine.analysis import ScoreSummary, wilson_interval
from engine.play import RunProgress
from engine.spending import Spending
from puzzles import GAMES

from runners.dashboard.layout import LEAST_ROWS, Dashboard, Section, counters_section, fitted, take
from runners.dashboard.spending import spending_line
from runners.dashboard.widths import Column, short_names
from runners.printable import printable

if TYPE_CHECKING:
    from engine.backends import ServerLoad

__all__ = ["Dashboard", "Section", "counters_section", "render_dashboard", "score_cell"]

SHOWN_RUNNING = 8
SHOWN_RECENT = 6
SHOWN_SCORES = 3  # score columns in the per-condition table


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def rate_cell(successes: int, scored: int) -> tuple[str, str]:
    if not scored:
        return "n/a", "n/a"
    low, high = wilson_interval(successes, scored)
    return f"{100 * successes / scored:.1f}", f"{100 * low:.1f}-{100 * high:.1f}"


def percent(x: float) -> str:
    """A fraction as a percentage with one decimal."""
    return f"{100 * x:.1f}"


def score_cell(score: ScoreSummary | None) -> str:
    """A rate as a percentage, a mean as a number, each with its 95% interval."""
    if score is None:
        return "-"
    if score.kind == "rate":
        return f"{percent(score.value)} [{percent(score.low)}, {percent(score.high)}]"
    if score.n < 2:
        return f"{score.value:.2f}"
    return f"{score.value:.2f} [{score.low:.2f}, {score.high:.2f}]"  # a comma: a bound may be negative


def _number(x: float) -> str:
    return str(x) if isinstance(x, int) or float(x).is_integer() else f"{x:.2f}"


def varying_fields(fields: dict[str, dict[str, str]]) -> list[str]:
    """The fields whose values differ between the conditions."""
    if len(fields) < 2:
        return []
    keys = list(dict.fromkeys(k for f in fields.values() for k in f))
    return [k for k in keys if len({f.get(k) for f in fields.values()}) > 1]


def score_labeller(games: set):
    """How scores are labelled in a run of ``games``: by the game when it plays one, else by key."""
    game = GAMES.get(next(iter(games))) if len(games) == 1 else None
    return game.score_label if game is not None else (lambda key: key)


class _Frame:
    """What every section of one frame reads: the counters and the conditions' short labels."""

    def __init__(self, progress: RunProgress, hub) -> None:
        self.p = progress
        self.hub = hub
        self.backends = hub.backends() if hub is not None else []
        self.varying = varying_fields(progress.condition_fields)
        names = [b.limiter.name for b in self.backends]
        names += [f.get(k, "") for f in progress.condition_fields.values() for k in self.varying]
        self.short = short_names(names)
        self.score_label = score_labeller({f.get("game") for f in progress.condition_fields.values()})

    def values(self, condition: str) -> list[str]:
        fields = self.p.condition_fields.get(condition, {})
        return [fields.get(k, "") for k in self.varying]

    def label(self, condition: str) -> str:
        """The condition's values of the fields that vary, model names shortened."""
        return " ".join(self.short.get(v, v) for v in self.values(condition))


def _head(frame: _Frame, elapsed: float) -> Section:
    p = frame.p

    def build(width: int, rows: int) -> RenderableType:
        counts = f"{p.done}/{p.total} done  {p.running} running  {p.queued} queued"
        clock = f"elapsed {_clock(elapsed)}  ETA {_clock(p.eta(time.monotonic()))}"
        grid = Table.grid(padding=(0, 2))
        bar = ProgressBar(total=max(p.total, 1), completed=p.done, width=max(10, min(40, width - len(counts) - len(clock) - 4)))
        if width >= len(counts) + len(clock) + 14:
            grid.add_row(bar, Text(counts, no_wrap=True), Text(clock, no_wrap=True))
        else:
            bar.width = max(10, min(40, width - len(counts) - 2))
            grid.add_row(bar, Text(counts, no_wrap=True))
            grid.add_row("", Text(clock, no_wrap=True))
        return grid

    return Section("progress", 0, build)


def _success(frame: _Frame) -> Section:
    p = frame.p
    scored = p.successes + p.failures
    rate, ci = rate_cell(p.successes, scored)
    errors = ", ".join(f"{kind} {n}" for kind, n in sorted(p.error_kinds.items())) or "none"
    line = f"success so far {rate}% (95% CI {ci}) of {scored} scored games" if scored else "success so far: no game scored yet"
    games, successes, prefix_scored = p.prefix
    if games < p.done and prefix_scored:  # some games finished out of order: the unbiased estimate differs
        unbiased, unbiased_ci = rate_cell(successes, prefix_scored)
        line += f" | unbiased: {unbiased}% ({unbiased_ci}) over the first {games} games started, all finished"
    text = Text(f"{line} | errors: {errors}")
    return Section("success", 0, lambda width, rows: text)


def _scores(frame: _Frame) -> Section | None:
    p = frame.p
    if not p.scores:
        return None
    text = Text("scores so far: " + " | ".join(f"{frame.score_label(k)} {score_cell(t.summary())}" for k, t in p.scores.items()))
    return Section("scores", 4, lambda width, rows: text)


def _server_load(load: ServerLoad) -> str:
    """A vLLM server's running/waiting requests (of the waiting, those deferred: a reply schema
    compiling), its KV-cache usage and another client's requests."""
    text = f"{load.running:.0f}/{load.waiting:.0f}"
    if load.deferred:
        text += f" ({load.deferred:.0f} deferred)"
    if load.kv_cache is not None:
        text += f" kv {100 * load.kv_cache:.0f}%"
    if load.others:
        text += f" ({load.others:.0f} others)"
    return text


def _models(frame: _Frame) -> Section | None:
    """One row per model: calls in flight and the cap, requests per minute over the last minute,
    429s and other failures, mean latency, tokens and cost; for vLLM the server's running/waiting;
    with the response cache, the calls it answered; the share of prompt tokens the provider read from
    its prefix cache; the replies the server cut at the run's token limit."""
    if not frame.backends:
        return None
    now = time.monotonic()
    rows = []
    for backend in frame.backends:
        limiter, s = backend.limiter, backend.limiter.stats
        limit = limiter.requests.per_minute
        load = frame.hub.loads.get(limiter.name)
        rows.append([
            limiter.name,
            f"{limiter.running}/{limiter.cap}" + ("*" if limiter.cap_note else ""),
            f"{s.rate(now):.0f} ({limit:.0f})" if limit else f"{s.rate(now):.0f}",
            str(s.calls), str(s.rate_limited), str(s.server_errors), str(s.timeouts), str(s.failed),
            f"{s.latency_sum / s.calls:.2f}" if s.calls else "-",
            f"{s.prompt_tokens}/{s.completion_tokens}" + (f" +{s.arriving}" if s.arriving else ""),
            "-" if s.cost_usd is None else f"{s.cost_usd:.2f}",
            _server_load(load) if load is not None else "",
            str(s.cache_hits) if s.cache_hits else "",
            f"{100 * s.cached_tokens / s.prompt_tokens:.0f}" if s.cached_tokens and s.prompt_tokens else "",
            str(s.cut) if s.cut else "",
        ])
    heads = ("model", "in flight", "rpm (limit)", "calls", "429/529", "5xx", "timeouts", "failed", "latency s", "tokens in/out",
             "cost $", "server run/wait", "cache hits", "prefix cached %", "cut at max tokens")
    priorities = (0, 0, 1, 2, 1, 3, 3, 2, 4, 5, 2, 3, 2, 4, 2)
    notes = [(b.limiter.name, b.limiter.cap_note) for b in frame.backends if b.limiter.cap_note]

    def build(width: int, shown: int) -> Table:
        part = take(rows, shown)
        columns = []
        for i, (head, priority) in enumerate(zip(heads, priorities)):
            cells = [r[i] for r in part]
            if i >= 11 and not any(cells):  # no vLLM server, no cache hit, no prefix read, no reply cut
                continue
            if i == 0:
                columns.append(Column(head, cells, justify="left", short=[frame.short.get(c, c) for c in cells], squeeze=12))
            else:
                columns.append(Column(head, cells, priority=priority))
        # Why a cap is lowered: a line under the table per model (a ``*`` by its cap), never inside a cell.
        why = [f"* {frame.short.get(name, name)}: {note}" for name, note in notes]
        return fitted(columns, width, "models", len(rows) - len(part), "models", notes=why)

    return Section("models", 2, build, rows=len(rows), least=min(len(rows), LEAST_ROWS))


def _batches(frame: _Frame) -> Section | None:
    """With ``--batch``: per model, the batches sent, those in flight, the requests in them, the calls
    waiting for the next batch and the age of the oldest batch in flight."""
    batches = frame.hub.batches if frame.hub is not None else None
    rows = batches.rows(time.monotonic()) if batches is not None else []
    if not rows:
        return None
    return counters_section("batched model", "batches", rows, priority=2)


def _conditions(frame: _Frame) -> Section | None:
    p = frame.p
    if len(p.by_condition) < 2:
        return None
    score_keys = list(p.scores)[:SHOWN_SCORES]
    # Conditions with games in flight first, then the others in the run's order.
    active = dict.fromkeys(game.condition for game in itertools.islice(p.live.values(), 64))
    order = [c for c in active if c in p.by_condition] + [c for c in p.by_condition if c not in active]

    def build(width: int, shown: int) -> Table:
        part = take(order, shown)
        columns = []
        if frame.varying:
            for i, key in enumerate(frame.varying):
                cells = [frame.values(c)[i] for c in part]
                columns.append(Column(key, cells, justify="left", short=[frame.short.get(v, v) for v in cells], squeeze=8))
        else:
            columns.append(Column("condition", part, justify="left", squeeze=12))
        counts = [p.by_condition[c] for c in part]
        rates = [rate_cell(w, w + l) for w, l, _ in counts]
        columns += [
            Column("done", [str(sum(n)) for n in counts]),
            Column("success %", [r for r, _ in rates]),
            Column("95% CI", [ci for _, ci in rates], priority=1),
            Column("errors", [str(e) for _, _, e in counts], priority=2),
        ]
        for j, key in enumerate(score_keys):
            cells = [score_cell(p.scores_by_condition.get(c, {})[key].summary()) if key in p.scores_by_condition.get(c, {}) else "-" for c in part]
            columns.append(Column(frame.score_label(key), cells, priority=3 + j))
        return fitted(columns, width, "by condition", len(order) - len(part), "conditions")

    return Section("conditions", 1, build, rows=len(order), least=min(len(order), LEAST_ROWS))


def _running(frame: _Frame) -> Section | None:
    p = frame.p
    if not p.live:
        return None
    games = list(itertools.islice(p.live.values(), SHOWN_RUNNING))

    def build(width: int, shown: int) -> Table:
        part = take(games, shown)
        columns = [Column("game", [str(g.game_id) for g in part])]
        labels = [frame.label(g.condition) for g in part]
        if any(labels):
            columns.append(Column("condition", labels, justify="left", squeeze=10, priority=2))
        columns += [
            Column("turn", [f"{g.turn}/{g.max_turns}" for g in part]),
            Column("to act", [g.role for g in part], justify="left", priority=1),
            Column("progress", [" ".join(f"{role} {_number(n)}" for role, n in g.progress.items()) for g in part], justify="left", priority=3),
            Column("last message", [printable(f"{g.last_sender}: {g.last_message}".replace("\n", " ")) if g.last_message else "" for g in part],
                   justify="left", squeeze=12, priority=4),
        ]
        return fitted(columns, width, f"running games ({len(part)} of {len(p.live)})")

    return Section("running games", 3, build, rows=len(games), least=min(len(games), LEAST_ROWS))


def _recent(frame: _Frame) -> Section | None:
    p = frame.p
    if not p.recent:
        return None
    records = list(p.recent)[-SHOWN_RECENT:][::-1]

    def build(width: int, shown: int) -> Table:
        part = take(records, shown)
        columns = [Column("game", [str(r.game_id) for r in part])]
        labels = [frame.label(r.spec.condition()) for r in part]
        if any(labels):
            columns.append(Column("condition", labels, justify="left", squeeze=10, priority=1))
        columns += [
            Column("outcome", [r.outcome if r.error is None else f"error: {r.error.kind}" for r in part], justify="left"),
            Column("turns", [str(r.turns) for r in part]),
        ]
        return fitted(columns, width, "recently finished")

    return Section("recently finished", 5, build, rows=len(records), least=min(len(records), LEAST_ROWS))


def dashboard_sections(progress: RunProgress, elapsed: float, hub=None, spending: Spending | None = None) -> list[Section]:
    """The dashboard's sections, in the order they are shown."""
    frame = _Frame(progress, hub)
    sections = [_head(frame, elapsed), _success(frame), _scores(frame), _models(frame), _batches(frame)]
    starting = hub.starting(time.monotonic()) if hub is not None else []
    if starting:  # a model server still loading its model: what the run waits for
        text = Text("\n".join(starting))
        sections.insert(1, Section("servers", 1, lambda width, rows: text))
    if spending is not None:
        text = Text(spending_line(spending))
        sections.append(Section("spending", 2, lambda width, rows: text))
    sections += [_conditions(frame), _running(frame), _recent(frame)]
    return [s for s in sections if s is not None]


def render_dashboard(
    progress: RunProgress, elapsed: float, hub=None, spending: Spending | None = None, *,
    height: int | None = None, extra: Sequence[Section] = (),
) -> Dashboard:
    """One frame of the live dashboard, from the counters only (bounded work per frame), fitted to
    the console's width and to ``height`` lines (None: every section in full). ``extra`` sections
    (such as a ``counters_section``) are shown after the others."""
    return Dashboard([*dashboard_sections(progress, elapsed, hub, spending), *extra], height)
