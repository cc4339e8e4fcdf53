"""How much the players share and ask, by outcome: the report's analysis of the communication
actions (``asymgames report RUN --analyses``), read from the turns of played games.

One table. Each row is a condition, an outcome (success, failure, or all games) and a role. It
gives the games, the mean number of shares and of asks per game, and the percentage of games in
which the role shared, or asked, at least once. Only the first action of a turn counts, since the
game takes one action per step. It counts whether or not the action was valid. A reply that could
not be read counts as neither.
"""

from __future__ import annotations

from typing import Any

from ..analyses import AnalysisTable, PlayedGame, percent
from .board import ROLES
from .paper_table import PaperTable1

OUTCOMES = ("success", "failure")
ALL = "all"
COLUMNS = [
    "condition", "outcome", "role", "games", "shares per game", "asks per game", "% games with a share",
    "% games with an ask",
]


def action_kind(action: Any) -> str | None:
    """The kind of an action as a transcript holds it (``{"action": "share", ...}``), or None."""
    return action.get("action") if isinstance(action, dict) else None


class EinsteinActionUse:
    """Share and ask use per condition, outcome and role."""

    def __init__(self) -> None:
        # (condition, outcome, role) -> [games, shares, asks, games with a share, games with an ask]
        self.counts: dict[tuple[str, str, str], list[int]] = {}

    def add(self, game: PlayedGame) -> None:
        used = {role: {"share": 0, "ask": 0} for role in ROLES}
        for turn in game.turns:
            kind = action_kind(turn.actions[0]) if turn.actions else None
            if turn.role in used and kind in ("share", "ask"):
                used[turn.role][kind] += 1
        for outcome in (game.outcome, ALL):
            for role, n in used.items():
                counts = self.counts.setdefault((game.condition, outcome, role), [0, 0, 0, 0, 0])
                counts[0] += 1
                counts[1] += n["share"]
                counts[2] += n["ask"]
                counts[3] += n["share"] > 0
                counts[4] += n["ask"] > 0

    def tables(self) -> list[AnalysisTable]:
        if not self.counts:
            return []
        conditions = sorted({c for c, _, _ in self.counts})
        found = {o for _, o, _ in self.counts}
        outcomes = [o for o in OUTCOMES if o in found] + sorted(found - {*OUTCOMES, ALL}) + [ALL]
        rows: list[list[Any]] = []
        for condition in conditions:
            for outcome in outcomes:
                for role in ROLES:
                    counts = self.counts.get((condition, outcome, role))
                    if counts is None:
                        continue
                    games, shares, asks, sharing, asking = counts
                    rows.append([
                        condition, outcome, role, games, shares / games, asks / games,
                        percent(sharing, games), percent(asking, games),
                    ])
        return [AnalysisTable(
            name="action_use", title="Share and ask use by outcome", columns=list(COLUMNS), rows=rows, labels=3,
            note="Each turn's first action counts, valid or not.",
        )]


class EinsteinAnalyses:
    """The game's analyses: share and ask use (``EinsteinActionUse``) and the paper's Table 1 as it
    prints it (``puzzles.einstein.paper_table``)."""

    def __init__(self) -> None:
        self.parts = (EinsteinActionUse(), PaperTable1())

    def add(self, game: PlayedGame) -> None:
        for part in self.parts:
            part.add(game)

    def tables(self) -> list[AnalysisTable]:
        return [table for part in self.parts for table in part.tables()]


__all__ = ["EinsteinActionUse", "EinsteinAnalyses", "action_kind"]
