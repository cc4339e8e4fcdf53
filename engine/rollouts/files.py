"""A rollout's groups kept in its run directory: ``rollouts.jsonl`` (one group a line, appended as
each group finishes) and ``rollouts.json`` (what the trainer asked of the trajectories, saved at the
start so that a resume makes them alike).

A kill leaves at most a last line cut short, which is dropped when the run is resumed; the groups
whose games were all recorded but that the file does not hold yet are written first, then the rest
as they finish. Each group is in the file once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from puzzles import Game

from engine.records import GameRecord, RunDir, TranscriptIndex
from engine.records.rundir import drop_partial_tail
from engine.rollouts.collect import Assembler, Settings, groups_in
from engine.rollouts.groups import GroupIds, make_group
from engine.rollouts.trajectory import Weights, encode_group
from engine.rollouts.weights import with_weights

GROUPS_FILE = "rollouts.jsonl"
SETTINGS_FILE = "rollouts.json"


def save_settings(run: RunDir, settings: Settings) -> None:
    (run.path / SETTINGS_FILE).write_bytes(msgspec.json.format(msgspec.json.encode(settings)) + b"\n")


def saved_settings(run: RunDir) -> Settings | None:
    """The settings the rollout was started with; None for a run that is not one."""
    try:
        return msgspec.json.decode((run.path / SETTINGS_FILE).read_bytes(), type=Settings)
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ValueError(f"cannot read {run.path / SETTINGS_FILE}: {exc}") from None


class GroupFile:
    """Writes the groups of the run's plan to ``rollouts.jsonl`` as their games are on disk: give
    ``written`` each record once it is written (``play_plan``'s ``on_written``), and ``recorded``
    the records earlier processes of the run wrote; ``pins``: the weights of each game's model seats
    where a trainer swaps them (``PolicyWeights.pins``). A group that cannot be made
    (``MissingTokens``) stops the writing; ``failed`` says why."""

    def __init__(self, run: RunDir, plan_total: int, ids: GroupIds, game: Game, settings: Settings,
                 recorded: Iterable[GameRecord] = (), pins: Mapping[tuple[int, str], Weights] | None = None) -> None:
        self.path = run.path / GROUPS_FILE
        self.game, self.settings, self.pins = game, settings, pins
        self.index = TranscriptIndex(run.path)
        self.failed: str | None = None
        self.count = 0
        drop_partial_tail(self.path)  # a last line a kill cut short
        known = groups_in(self.path.read_bytes().splitlines() if self.path.exists() else [])
        self.assembler = Assembler(ids, known, self._group)
        self._file = self.path.open("ab")
        for record in recorded:  # what earlier processes of the run recorded
            if 0 <= record.game_id < plan_total:
                self.assembler.written(record)

    def written(self, record: GameRecord) -> None:
        if self.failed is None:
            self.assembler.written(record)

    def _group(self, number: int, records: list[GameRecord]) -> None:
        self.index.refresh()
        s = self.settings
        try:
            group = make_group(number, [(r, self.index.line(r.game_id)) for r in records], self.game,
                               trained=s.trained, reward=s.reward, tokens=s.tokens)
        except ValueError as exc:
            self.failed = str(exc)
            return
        if self.pins is not None:
            group = with_weights(group, self.pins)
        self._file.write(encode_group(group) + b"\n")
        self._file.flush()
        self.count += 1

    def close(self) -> None:
        self._file.close()
