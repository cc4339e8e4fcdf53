"""Recorded games a resume plays again, besides those lost to the infrastructure (which never count
as recorded):

- on request (``errors``), games that ended in an error that is not a player's: a policy of the
  user's own that failed, a provider that refused every request. A run that gave up early on such
  games names the flag in the command that continues it, so that once the cause is fixed they play;
- games recorded without a transcript that reads, when the run keeps transcripts (the resume keeps
  them, the run's directory has a transcripts file, and no process of the run kept none, which leaves
  ``transcripts.none``): runs made before a record waited for its game's transcript lost the
  transcripts of the games still gathered when they were killed, or ran out of disk, and kept their
  records; a block damaged on disk, or cut short with blocks written after it, takes its games'
  transcripts with it. A game a person played is not played again (a person's game cannot be played
  the same way twice): its record is kept, without a transcript, and its id is written to
  ``transcripts.missing`` (ranges of ids), so that the line saying so is said once for each game.

Their records are moved to ``results.replayed.jsonl`` first (``RunDir.move_aside``): the games then
count as not recorded, so a kill before they are played again loses nothing the next resume does not
play. ``find_replays`` says which games, moving nothing, for the forecast of a resume."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from engine.policies.factory import is_human
from engine.records.blocks import parse_ranges, ranges
from engine.records.ids import IdSet
from engine.records.rundir import Plan, RunDir
from engine.records.transcripts import NO_TRANSCRIPTS_FILE, TranscriptIndex, has_transcripts
from engine.session.giveup import PLAYERS_ERRORS
from engine.session.playing import counted_keys

REPLAYED_FILE = "results.replayed.jsonl"
MISSING_FILE = "transcripts.missing"  # games people played kept without a transcript, already said


@dataclass(frozen=True)
class Replays:
    """What a resume set aside to play again, and what it could not."""

    errors: int = 0  # games that ended in an error not a player's (asked for)
    untranscribed: int = 0  # games recorded without a transcript that reads
    people: int = 0  # games with people recorded without a transcript, not said before: kept as they are
    file: Path | None = None  # where the records set aside went

    def lines(self) -> list[str]:
        """What was done, a line each, for the terminal."""
        said = []
        if self.untranscribed:
            said.append(f"Playing again {_games(self.untranscribed)} recorded without a transcript that reads (lost to a kill "
                        f"or a full disk before records waited for their transcripts, or in a damaged block); their records "
                        f"moved to {self.file}.")
        if self.errors:
            said.append(f"Playing again {_games(self.errors)} that ended in an error not a player's; their records moved to {self.file}.")
        if self.people:
            said.append(f"{_games(self.people)} played by people {'has' if self.people == 1 else 'have'} no transcript and "
                        f"{'is' if self.people == 1 else 'are'} kept as recorded: a person's game cannot be played again the same way.")
        return said


def _games(n: int) -> str:
    return f"{n} game{'s' * (n != 1)}"


@dataclass(frozen=True)
class Found:
    """The recorded games of a run that a resume plays again, and those it keeps without a transcript."""

    errors: IdSet = field(default_factory=IdSet)  # ended in an error not a player's (asked for)
    untranscribed: IdSet = field(default_factory=IdSet)  # without a transcript that reads, no person played
    people: IdSet = field(default_factory=IdSet)  # without a transcript that reads, people played: kept

    def replayed(self) -> IdSet:
        return IdSet(chain(self.errors, self.untranscribed))


def find_replays(run: RunDir, plan: Plan, *, errors: bool, transcripts: bool) -> Found:
    """The recorded games the resume of ``run`` plays again (``errors``: those that ended in an error
    not a player's; ``transcripts``: the resume keeps transcripts), moving nothing."""
    failed, without = IdSet(), IdSet()
    readable = None
    if transcripts and has_transcripts(run.path) and not (run.path / NO_TRANSCRIPTS_FILE).exists():
        index = TranscriptIndex(run.path)
        index.refresh()
        readable = IdSet(game_id for game_id, _ in index.transcripts())  # a damaged block's games are left out
    for key in counted_keys(run):
        if not 0 <= key.game_id < plan.total:
            continue  # not the plan's: refused with its line (``recorded_games``), not played
        if errors and key.outcome == "error" and key.error is not None and key.error.kind not in PLAYERS_ERRORS:
            failed.add(key.game_id)
        elif readable is not None and key.game_id not in readable:
            without.add(key.game_id)
    people = IdSet()
    if len(without) and any(is_human(name) for names in plan.agents for name in names):
        for record in run.iter_records():
            if record.game_id in without and any(is_human(name) for name in record.spec.agents.values()):
                people.add(record.game_id)
    return Found(failed, IdSet(game_id for game_id in without if game_id not in people), people)


def set_aside_replays(run: RunDir, plan: Plan, *, errors: bool, transcripts: bool) -> Replays:
    """Move aside the records of the games the resume of ``run`` plays again (``find_replays``); the
    games people played kept without a transcript are counted only if not said before."""
    found = find_replays(run, plan, errors=errors, transcripts=transcripts)
    people = _newly_missing(run, found.people)
    replayed = found.replayed()
    if not len(replayed):
        return Replays(people=people)
    run.move_aside(replayed, REPLAYED_FILE)
    return Replays(len(found.errors), len(found.untranscribed), people, run.path / REPLAYED_FILE)


def _newly_missing(run: RunDir, people: IdSet) -> int:
    """How many of ``people`` (games people played, kept without a transcript) were not said before;
    they are added to ``MISSING_FILE``."""
    if not len(people):
        return 0
    path = run.path / MISSING_FILE
    try:
        said = IdSet(parse_ranges(path.read_bytes().strip()))
    except (FileNotFoundError, ValueError):  # none said yet, or a file damaged: said again
        said = IdSet()
    new = [game_id for game_id in people if game_id not in said]
    if new:
        tmp = path.with_name(MISSING_FILE + ".tmp")
        tmp.write_bytes(ranges(chain(said, new)) + b"\n")
        os.replace(tmp, path)
    return len(new)
