"""The table printed at the end of a run: one row per condition, fitted to the console's width."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult

from engine.analysis import ConditionSummary

from runners.dashboard.content import percent, score_cell, score_labeller
from runners.dashboard.widths import Column, fitted_table, short_names

CAPTION = "success % of games without error, 95% Wilson interval; scores: rates % or means, 95% interval"


class SummaryTable:
    """One row per condition; fields shared by every condition go in the title. Every score the
    game gives is a column, labelled by the game. Drawn at the console's width: columns of low
    priority are left out (and named in the caption), numbers are never cut, model names are
    shortened when the full ones do not fit."""

    def __init__(self, summaries: list[ConditionSummary]) -> None:
        self.summaries = summaries

    def columns(self) -> tuple[str, list[Column]]:
        summaries = self.summaries
        keys = list(summaries[0].fields) if summaries else []
        shared = {k: summaries[0].fields[k] for k in keys if all(s.fields.get(k) == summaries[0].fields[k] for s in summaries)}
        varying = [k for k in keys if k not in shared]
        scores = list(dict.fromkeys(k for s in summaries for k in s.scores))
        label = score_labeller({s.fields.get("game") for s in summaries})
        short = short_names(s.fields.get(k, "") for s in summaries for k in varying)
        columns = []
        for key in varying:
            cells = [s.fields.get(key, "") for s in summaries]
            columns.append(Column(key, cells, justify="left", short=[short.get(c, c) for c in cells], squeeze=8))
        scored = [s.games > s.errors for s in summaries]
        columns += [
            Column("games", [str(s.games) for s in summaries]),
            Column("success %", [percent(s.success_rate) if ok else "n/a" for s, ok in zip(summaries, scored)]),
            Column("95% CI", [f"{percent(s.ci_low)}-{percent(s.ci_high)}" if ok else "n/a" for s, ok in zip(summaries, scored)]),
            Column("mean turn solved", [f"{s.mean_solved_turn:.2f}" if s.mean_solved_turn is not None else "-" for s in summaries], priority=3),
        ]
        columns += [Column(label(k), [score_cell(s.scores.get(k)) for s in summaries], priority=5) for k in scores]  # never wrapped
        columns += [
            Column("format errors", [str(s.format_errors) for s in summaries], priority=2),
            *([Column("cut replies", [str(s.cut_replies) for s in summaries], priority=2)] if any(s.cut_replies for s in summaries) else []),
            Column("invalid actions", [str(s.invalid_actions) for s in summaries], priority=4),
            Column("game errors", [str(s.errors) for s in summaries], priority=1),
        ]
        if any(s.calls for s in summaries):
            columns += [
                Column("calls", [str(s.calls) for s in summaries], priority=6),
                Column("tokens", [f"{s.tokens:,}" for s in summaries], priority=6),
                Column("cost $", ["-" if s.cost_usd is None else f"{s.cost_usd:.2f}" for s in summaries], priority=3),
            ]
        return ", ".join(f"{k}={v}" for k, v in shared.items()), columns

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        title, columns = self.columns()
        table, dropped = fitted_table(columns, options.max_width, title=title, compact=False)
        caption = CAPTION
        if dropped:
            caption += f". No room at this width for: {', '.join(dropped)} (summary.json and asymgames report have them)"
        table.caption = caption
        yield table


    def natural_width(self) -> int:
        """The width at which every column is shown with its cells on one line."""
        _, columns = self.columns()
        return sum(c.widest() + 3 for c in columns) + 1  # padding and borders: 3n + 1


def print_summary(console: Console, summaries: list[ConditionSummary]) -> None:
    """The table at the end of a run: fitted to a terminal's width; elsewhere (a file, a pipe) as wide
    as it needs, so that no column is left out and no number wraps."""
    table = SummaryTable(summaries)
    if console.is_terminal:
        console.print(table)
        return
    width = console.width
    console.width = max(width, table.natural_width())  # rich never prints wider than its console
    try:
        console.print(table)
    finally:
        console.width = width
