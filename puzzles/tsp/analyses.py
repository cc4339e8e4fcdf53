"""Traveling Adventurers' analysis from its paper (spec ``tsp.md`` §5.2, the paper's Tables 2, 5 and
6): how many rooms the ``suggest`` actions name, by condition, agent and role, and by outcome.

A suggestion of 2 rooms adds one hop to the path (node by node); one of rooms + 1 names a whole round
trip (the full path: 7 on the paper's 6-room boards). Percentages are of the row's suggest actions,
as in the paper's Tables 5 and 6, whose rows sum to 100. A suggestion whose argument is not a list
of room names is unreadable: it has a column of its own and counts in the row's total.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..analyses import AnalysisTable, Cell, PlayedGame, percent
from .board import ROLES
from .params import MAX_ROOMS, MIN_ROOMS, PAPER_ROOMS
from .rules import read_path

NODE = 2  # rooms a node-by-node suggestion names
ROLE_NOTE = "light is the paper's USER (moves first), ghost its BOT."

Row = tuple[str, str, str]  # condition, agent, role


def full_path(params: Any) -> int:
    """The rooms a whole round trip names: the board's rooms and the way home (a game whose
    parameters name no possible board is taken to be played on the paper's)."""
    rooms = params.get("rooms") if isinstance(params, dict) else None
    if not isinstance(rooms, int) or isinstance(rooms, bool) or not MIN_ROOMS <= rooms <= MAX_ROOMS:
        rooms = PAPER_ROOMS
    return rooms + 1


def suggest_length(action: Any) -> int | None:
    """The rooms a suggest action names (as the transcript holds it); None if its argument is not a
    list of room names."""
    argument = action.get("argument")
    path = read_path(argument) if isinstance(argument, str) else None
    return None if path is None else len(path)


def is_suggest(action: Any) -> bool:
    return isinstance(action, dict) and action.get("name") == "suggest"


class SuggestLengths:
    """The paper's suggest-argument tables (a ``puzzles.analyses.Analysis``)."""

    def __init__(self) -> None:
        self.lengths: dict[Row, Counter[int | None]] = {}  # per row: suggestions by length (None: unreadable)
        self.kinds: dict[tuple[Row, str], Counter[str]] = {}  # per row and outcome: games, node, full, suggests
        self.full_paths: set[int] = set()

    def add(self, game: PlayedGame) -> None:
        full = full_path(game.params)
        self.full_paths.add(full)
        roles = dict.fromkeys([*game.agents, *(turn.role for turn in game.turns)])
        for role in roles:
            row = (game.condition, game.agents.get(role, "?"), role)
            self.lengths.setdefault(row, Counter())
            self.kinds.setdefault((row, game.outcome), Counter())["games"] += 1
        for turn in game.turns:
            row = (game.condition, game.agents.get(turn.role, "?"), turn.role)
            kinds = self.kinds[row, game.outcome]
            for action in filter(is_suggest, turn.actions):
                length = suggest_length(action)
                self.lengths[row][length] += 1
                kinds["suggests"] += 1
                kinds["node"] += length == NODE
                kinds["full"] += length == full

    def tables(self) -> list[AnalysisTable]:
        if not self.lengths:
            return []
        return [self._by_length(), self._strategies(), self._by_outcome()]

    def _rows(self) -> list[Row]:
        def order(row: Row) -> tuple:
            condition, agent, role = row
            return condition, agent, ROLES.index(role) if role in ROLES else len(ROLES), role

        return sorted(self.lengths, key=order)

    def _by_length(self) -> AnalysisTable:
        full = max(self.full_paths)
        seen = {n for counts in self.lengths.values() for n in counts if n is not None}
        shown = list(range(min([NODE, *seen]), full + 1)) + [full + 1] * (full + 1 in seen)
        longer = any(n > shown[-1] for n in seen)  # these share one column
        unreadable = any(None in counts for counts in self.lengths.values())
        single = len(self.full_paths) == 1

        def name(n: int) -> str:
            if n == NODE:
                return f"{n} (node-by-node)"
            return f"{n} (full path)" if single and n == full else str(n)

        columns = ["condition", "agent", "role", *map(name, shown)]
        columns += [f"over {shown[-1]}"] * longer + ["unreadable"] * unreadable + ["suggests"]
        rows: list[list[Cell]] = []
        for row in self._rows():
            counts = self.lengths[row]
            total = sum(counts.values())
            cells: list[Cell] = [*row, *(percent(counts[n], total) for n in shown)]
            if longer:
                cells.append(percent(sum(c for n, c in counts.items() if n is not None and n > shown[-1]), total))
            if unreadable:
                cells.append(percent(counts[None], total))
            rows.append([*cells, total])
        note = "% of the row's suggest actions by the rooms their argument names (paper Tables 5 and 6). "
        if not single:
            note += "Boards of different sizes: a full path names the rooms + 1. "
        return AnalysisTable(name="suggest_lengths", title="Rooms named by suggest", columns=columns, rows=rows,
                             labels=3, note=note + ROLE_NOTE)

    def _strategy_cells(self, counts: Counter[str]) -> list[Cell]:
        total = counts["suggests"]
        return [counts["games"], percent(counts["node"], total), percent(counts["full"], total), total]

    def _strategies(self) -> AnalysisTable:
        rows: list[list[Cell]] = []
        for row in self._rows():
            counts: Counter[str] = Counter()
            for (kept, _), kinds in self.kinds.items():
                if kept == row:
                    counts.update(kinds)
            rows.append([*row, *self._strategy_cells(counts)])
        return AnalysisTable(
            name="suggest_strategies", title="Suggest strategies",
            columns=["condition", "agent", "role", "games", "node-by-node", "full path", "suggests"], rows=rows, labels=3,
            note="% of the row's suggest actions naming 2 rooms (node by node) or a whole round trip (full path: the "
            "board's rooms + 1), as in the paper's Table 2. " + ROLE_NOTE,
        )

    def _by_outcome(self) -> AnalysisTable:
        rows: list[list[Cell]] = []
        for row in self._rows():
            for outcome in sorted({o for kept, o in self.kinds if kept == row}, key=lambda o: (o != "success", o)):
                rows.append([*row, outcome, *self._strategy_cells(self.kinds[row, outcome])])
        return AnalysisTable(
            name="suggest_strategies_by_outcome", title="Suggest strategies by outcome",
            columns=["condition", "agent", "role", "outcome", "games", "node-by-node", "full path", "suggests"],
            rows=rows, labels=4, note="As the table of suggest strategies, split by the game's outcome. " + ROLE_NOTE,
        )
