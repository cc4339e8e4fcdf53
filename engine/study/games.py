"""A study's games: one block's run directory, and one game played with its people in their seats.

Each block of the study is an ordinary run directory (``design.block_grid`` is its
plan), so ``asymgames report``, ``view`` and ``replay`` read it as any run. A game is played with
``engine.play.game.play_game`` on the study's event loop; its people's pages are its human seats
(through a factory that seats this game's people, the rest as the run's factory makes them); its
record is appended to the block's results before the study's journal says it ended, and its full
transcript to the block's ``transcripts.jsonl.gz`` before that, as an ordinary run writes them
(``asymgames transcript`` and the viewer read them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from engine.policies.factory import PolicyFactory, is_human
from engine.policies.seat import HumanAbsent, HumanPolicy
from engine.records.record import GameRecord
from engine.records.rundir import RunDir, RunDirError
from engine.records.transcribe import TranscriptWriter
from engine.study.design import block_grid
from engine.study.spec import Study
from puzzles import Game, Policy


class Block:
    """One block's run directory, its plan and its results writer."""

    def __init__(self, study: Study, index: int, out: Path) -> None:
        self.index = index
        self.grid = block_grid(study, index)
        self.conditions = self.grid.conditions()
        self.run = self._open(out / f"block-{index}-{study.blocks[index].game}")
        self.writer: Any = None
        self.transcripts: TranscriptWriter | None = None

    def _open(self, path: Path) -> RunDir:
        if not (path / "config.json").exists():
            return RunDir.create(path, self.grid)
        run = RunDir.open(path)
        if msgspec.json.encode(run.config()) != msgspec.json.encode(self.grid):
            raise RunDirError(f"{path} holds another plan than the study file gives this block")
        return run

    def open(self) -> None:
        self.writer = self.run.writer()
        self.transcripts = TranscriptWriter(self.run.path, full=True, at_once=True)  # a game's transcript as it ends

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.transcripts is not None:
            self.transcripts.close()

    def records(self, ids: set[int]) -> dict[int, GameRecord]:
        """The records of the games ``ids`` found in the results (the last of each)."""
        return {r.game_id: r for r in self.run.iter_records() if r.game_id in ids}


class SeatedFactory(PolicyFactory):
    """The run's policy factory, with this game's people in its human seats."""

    def __init__(self, factory: PolicyFactory, fronts: dict[str, Any], seconds: float, absent_after: int) -> None:
        super().__init__(own=factory.own)
        self.hub = factory.hub
        self._factory = factory
        self.fronts = fronts
        self.seconds = seconds
        self.absent_after = absent_after

    def make(self, name: str, role: str, seed: int, game: Game) -> Policy:
        if is_human(name):
            return HumanPolicy(game, self.fronts[role], seconds=self.seconds, absent_after=self.absent_after)
        return self._factory.make(name, role, seed, game)


def absent_one(record: GameRecord, people: dict[str, str]) -> str | None:
    """The participant whose absence ended the game, if one did."""
    error = record.error
    if error is None or error.kind != HumanAbsent.kind:
        return None
    return people.get(error.actor or "")
