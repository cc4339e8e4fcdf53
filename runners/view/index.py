"""What the viewer knows of a run: the summary, the conditions, one small row per game for the list,
and where each game's record and transcript lie in their files, read again only as far as they grew
(so a live run is followed without reading it all again, and a 100,000-game run costs a few bytes
per game in memory). Transcripts are found and read by ``engine.records.transcripts.TranscriptIndex``
(either format: compressed blocks, or the plain lines of older runs).

A row is ``[id, condition, outcome, error kind, turns, policies, cost, people]``: ``condition`` indexes
``conditions``, ``error kind`` indexes ``errors`` (-1: none), ``policies`` indexes ``policies``,
``outcome`` is "s", "f" or "e", ``cost`` is in dollars (None: no model played, or a price unknown),
``people`` names the seats a person played ("" for none): each seat's participant id, or "person"
where none was recorded. A game of a branch run also carries the game it branches (``original``:
its branch point and that game's detail, from the run branched), which the page shows beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from engine import GameRecord, RunDir
from engine.analysis import condition_of
from engine.records import GameLines, TranscriptIndex, decode_any_record

from runners.report.branches import BranchReportError, origin_of
from runners.view.detail import game_detail, humans_of

SUMMARY_FILE = "summary.json"
OUTCOMES = {"success": "s", "failure": "f", "error": "e"}


def people_of(record: GameRecord) -> str:
    """The seats a person played, for the list: participant ids, "person" where none was recorded."""
    return ", ".join(seat.get("participant") or "person" for seat in humans_of(record).values())


class RunIndex:
    """A run directory as the viewer shows it."""

    def __init__(self, path: Path) -> None:
        self.run = RunDir.open(path)
        self.plan = self.run.config()
        self.results = GameLines(self.run.results_path)  # each game's last line
        self.transcripts = TranscriptIndex(self.run.path)
        self.rows: dict[int, list] = {}
        self.conditions: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.policies: dict[str, int] = {}
        self._origin: tuple[RunIndex, dict[tuple[str, int], int]] | None = None

    def original(self, record: GameRecord) -> dict | None:
        """For a game of a branch run: its branch point and the game it branches, as the viewer
        shows both side by side; None for any other game (or when the run branched is not found)."""
        point = record.spec.option("branch", None)
        if point is None:
            return None
        if self._origin is None:
            try:
                origin = origin_of(self.run)
            except BranchReportError:
                return None
            if origin is None:
                return None
            index = RunIndex(origin)
            games = {(condition_of(r), r.spec.seed): r.game_id for r in index.run.iter_records()}
            self._origin = (index, games)
        index, games = self._origin
        game_id = games.get((condition_of(record), record.spec.seed))
        if game_id is None:
            return None
        index.refresh()
        return {"point": point.label(), "turn": point.turn, "role": point.role, "game": game_id,
                "run": str(index.run.path), "detail": index.detail(game_id)}

    def refresh(self) -> None:
        """Read what the run's files gained since (the results read again whole once a finished run
        rewrote them sorted)."""
        added: list[tuple[int, bytes]] = []
        self.results.refresh(added)
        for game_id, line in added:
            try:
                record = decode_any_record(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue  # a damaged line: the run's --repair deals with it
            self.rows[game_id] = self._row(record)
        self.transcripts.refresh()

    def _row(self, record: GameRecord) -> list:
        spec = record.spec
        condition = self.conditions.setdefault(spec.condition(), len(self.conditions))
        error = -1 if record.error is None else self.errors.setdefault(record.error.kind, len(self.errors))
        policies = sorted({self.policies.setdefault(str(p), len(self.policies)) for p in spec.agents.values()})
        cost = None
        if record.usage is not msgspec.UNSET:
            costs = [u.cost_usd for u in record.usage.values()]
            cost = None if None in costs else round(sum(costs), 6)
        return [record.game_id, condition, OUTCOMES[record.outcome], error, record.turns, policies, cost, people_of(record)]

    def finished(self) -> bool:
        """The run's process has ended (it writes the summary last, at every end)."""
        return (self.run.path / SUMMARY_FILE).exists()

    def state(self) -> str:
        """How the run stands, in words: finished, stopped before its end, or not ended."""
        if not self.finished():
            return "running, or stopped without its summary"
        return "finished" if len(self.rows) >= self.plan.total else "stopped before its end (resume to finish)"

    def version(self) -> tuple:
        """What ``data`` is made from: changes whenever the run's files do."""
        return (self.results.version(), self.transcripts.version(), self.finished())

    def data(self) -> dict[str, Any]:
        """The run for the page: summary, conditions with their counts, and every game's row."""
        rows = [self.rows[i] for i in sorted(self.rows)]
        counts = [[0, 0, 0] for _ in self.conditions]
        for row in rows:
            counts[row[1]]["sfe".index(row[2])] += 1
        costs = [row[6] for row in rows if row[6] is not None]
        return {
            "name": self.run.path.name, "path": str(self.run.path), "total": self.plan.total,
            "recorded": len(rows), "finished": self.finished(), "state": self.state(),
            "cost": round(sum(costs), 6) if costs else None,
            "conditions": list(self.conditions), "counts": counts,
            "errors": list(self.errors), "policies": list(self.policies), "rows": rows,
            "transcripts": len(self.transcripts) > 0,
        }

    def detail(self, game_id: int) -> dict | None:
        """One game as the viewer shows it (``detail.game_detail``), or None if it is not recorded."""
        line = self.results.line(game_id)
        if line is None:
            return None
        record = decode_any_record(line)
        detail = game_detail(record, self.transcripts.get(game_id))
        original = self.original(record)
        if original is not None:
            detail["original"] = original
        return detail
