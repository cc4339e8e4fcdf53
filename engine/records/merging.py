"""Runs of the same plan merged into one run directory (for instance halves played on two machines).

The runs must have the same plan, and a game recorded by more than one of them must have the same
record in each (games are deterministic by seed, so scripted games always agree; model games played
twice do not, and are refused rather than silently dropped, within one run as between runs). Games
lost to the infrastructure count as not recorded: a record of the game from another run wins. The merged run can be resumed and
reported like any other; when it holds every game, its results are sorted as a finished run's are.

Memory does not grow with the runs: each run's results are read in game-id order, one game at a
time (``RunDir.ordered``: a pass of ids first, then the lines as they come in a sorted file, or
window by window in one that is not), the runs side by side, and each game's record is chosen and
written before the next is read; the merged file comes out sorted. A merge refused half-way (a game
recorded differently, a damaged line) removes what it wrote. Each game's transcript is copied from
the run its record was taken from (``engine.records.transcripts.copy_transcripts``), a bit per game
remembering which.
"""

from __future__ import annotations

import heapq
import itertools
import shutil
from collections.abc import Iterator
from pathlib import Path

import msgspec

from engine.records.ids import IdSet
from engine.records.record import GameRecord, encode_record, is_infra_error
from engine.records.rundir import CONFIG_FILE, LOCK_FILE, RESULTS_FILE, RecordWriter, RunDir, RunDirError
from engine.records.transcripts import copy_transcripts


def _numbered(records: Iterator[GameRecord], index: int) -> Iterator[tuple[int, int, GameRecord]]:
    return ((record.game_id, index, record) for record in records)


def merge_runs(out: Path, sources: list[Path]) -> tuple[int, int]:
    """Merge ``sources`` into a new run at ``out``; (games recorded, games in the plan). RunDirError
    with a one-line reason if the runs do not go together."""
    runs = [RunDir.open(path) for path in sources]
    plans = [run.config() for run in runs]
    for run, plan in zip(runs[1:], plans[1:]):
        if msgspec.json.encode(plan) != msgspec.json.encode(plans[0]):
            raise RunDirError(f"{run.path} has another plan than {runs[0].path}; only runs of one plan merge")
    for run in runs:  # a game recorded twice differently within one run is refused as between runs
        conflict = run.conflict_error()
        if conflict is not None:
            raise conflict
    total = plans[0].total
    streams = [_numbered(run.last_records(run.ordered()[1]), index) for index, run in enumerate(runs)]
    existed = out.exists()
    merged = RunDir.create(out, plans[0])
    taken = {run.path: IdSet() for run in runs}  # the games whose record each run gave
    try:
        with merged.lock(), merged.writer() as writer:
            recorded = _write(heapq.merge(*streams), runs, total, writer, taken)
    except BaseException:
        _remove(merged, existed)
        raise
    merged.finalize(total)
    copy_transcripts(merged.path, [(run.path, taken[run.path]) for run in runs])
    return recorded, total


def _write(games: Iterator[tuple[int, int, GameRecord]], runs: list[RunDir], total: int, writer: RecordWriter,
           taken: dict[Path, IdSet]) -> int:
    """Write each game's record, chosen among the runs' records of it (in game-id order); the games written."""
    recorded = 0
    for game_id, group in itertools.groupby(games, key=lambda item: item[0]):
        chosen: tuple[GameRecord, bytes, bool, Path] | None = None  # the record, its line, lost, from
        for _, index, record in group:
            run = runs[index]
            if not 0 <= game_id < total:
                raise RunDirError(f"{run.results_path} holds game {game_id}, outside the plan of {total} games")
            line, lost = encode_record(record), is_infra_error(record)
            if chosen is None or (chosen[2] and not lost):
                chosen = (record, line, lost, run.path)
            elif not lost and chosen[1] != line:
                raise RunDirError(f"game {game_id} has different records in {chosen[3]} and {run.path}; refusing to choose")
        assert chosen is not None  # a group has at least one record
        writer.write(chosen[0])
        taken[chosen[3]].add(game_id)
        recorded += 1
    return recorded


def _remove(run: RunDir, existed: bool) -> None:
    """Remove what a refused merge wrote: the run directory, or the files in it if it was there before."""
    if not existed:
        shutil.rmtree(run.path, ignore_errors=True)
        return
    for name in (CONFIG_FILE, RESULTS_FILE, LOCK_FILE):
        (run.path / name).unlink(missing_ok=True)
