"""The paper's Table 1 as it prints it: one row per condition with the numbers of blocks pooled
(its 300 games are 100 each of N = 4, 5 and 6), SR, Sub.R and Corr.R in %, StepR as a ratio, each
with its standard error as the paper prints them ("51.00 ± 2.89": SR 51.00% over 300 games). Part
of the game's analyses (``asymgames report RUN --analyses``).

- SR: the share of games solved; SE sqrt(p (1 - p) / n).
- Sub.R: the mean share of blocks in their bins; StepR: the mean step ratio over the solved games
  (the paper's "steps taken to complete each game"); Corr.R: the mean share of steps the verifier
  corrected, in games played with one. SE: the sample standard deviation over sqrt(n).

The rows are the report's conditions with ``N=...`` left out of the label, so the games of one
condition at every N fall into one row; the N pooled are listed.
"""

from __future__ import annotations

import math

from ..analyses import AnalysisTable, Cell, PlayedGame

COLUMNS = ["condition", "N", "games", "SR %", "Sub.R %", "StepR", "Corr.R %"]
_SIZE = "N="


class _Mean:
    """Count, sum and sum of squares: a mean and its standard error."""

    __slots__ = ("n", "total", "squares")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.squares = 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.squares += value * value

    def mean(self, scale: float = 1.0) -> float | None:
        return None if self.n == 0 else scale * self.total / self.n

    def error(self, scale: float = 1.0) -> float | None:
        if self.n < 2:
            return None
        mean = self.total / self.n
        variance = max(0.0, (self.squares - self.n * mean * mean) / (self.n - 1))
        return scale * math.sqrt(variance / self.n)


class _Row:
    def __init__(self) -> None:
        self.sizes: set[int] = set()
        self.solved = 0
        self.games = 0
        self.partial = _Mean()
        self.step_ratio = _Mean()
        self.corrected = _Mean()


def pooled_label(condition: str) -> str:
    """The condition's label without its number of blocks ("all" when nothing else is left)."""
    return ", ".join(part for part in condition.split(", ") if not part.startswith(_SIZE)) or "all"


def with_error(value: float | None, error: float | None) -> str | None:
    """A figure as the paper prints it, "51.00 ± 2.89" (two decimals; no error below two values)."""
    if value is None:
        return None
    return f"{value:.2f}" if error is None else f"{value:.2f} ± {error:.2f}"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class PaperTable1:
    """SR, Sub.R, StepR and Corr.R with standard errors per condition, the numbers of blocks pooled."""

    def __init__(self) -> None:
        self.rows: dict[str, _Row] = {}

    def add(self, game: PlayedGame) -> None:
        row = self.rows.setdefault(pooled_label(game.condition), _Row())
        blocks = game.params.get("blocks")
        if isinstance(blocks, int):
            row.sizes.add(blocks)
        row.games += 1
        row.solved += game.outcome == "success"
        for tally, key in ((row.partial, "partial"), (row.step_ratio, "step_ratio"), (row.corrected, "corrected_rate")):
            value = _number(game.scores.get(key))
            if value is not None:
                tally.add(value)

    def tables(self) -> list[AnalysisTable]:
        if not self.rows:
            return []
        rows: list[list[Cell]] = []
        for label in sorted(self.rows):
            row = self.rows[label]
            rate = row.solved / row.games
            rows.append([
                label, ", ".join(map(str, sorted(row.sizes))), row.games,
                with_error(100 * rate, 100 * math.sqrt(rate * (1 - rate) / row.games)),
                with_error(row.partial.mean(100), row.partial.error(100)),
                with_error(row.step_ratio.mean(), row.step_ratio.error()),
                with_error(row.corrected.mean(100), row.corrected.error(100)),
            ])
        return [AnalysisTable(
            name="paper_table1", title="Table 1 as the paper prints it: N pooled, ± standard errors",
            columns=list(COLUMNS), rows=rows, labels=2,
            note=("Each row pools the numbers of blocks N listed (the paper: 100 games each of N = 4, 5, 6). Figures "
                  "± standard errors (SR: sqrt(p (1 - p) / n); the others: standard deviation / sqrt(n)). SR, Sub.R and "
                  "Corr.R in %; StepR over solved games; Corr.R only with a verifier."),
        )]


__all__ = ["PaperTable1", "pooled_label"]
