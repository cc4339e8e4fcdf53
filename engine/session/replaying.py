"""Recorded games a resume plays again, besides those lost to the infrastructure (which never count
as recorded):

- on request (``errors``), games that ended in an error that is not a player's: a policy of the
  user's own that failed, a provider that refused every request. A run that gave up early on such
  games names the flag in the command that continues it, so that once the cause is fixed they play;
- games recorded without their transcript, when the run keeps transcripts (the resume keeps them, the
  run's directory has a transcripts file, and no process of the run kept none, which leaves
  ``transcripts.none``): runs made before a record waited for its game's
  transcript lost the transcripts of the games still gathered when they were killed, or ran out of
  disk, and kept their records. A game a person played is not played again (a person's game cannot
  be played the same way twice): its record is kept, without a transcript.

Their records are moved to ``results.replayed.jsonl`` first (``RunDir.move_aside``): the games then
count as not recorded, so a kill before they are played again loses nothing the next resume does not
play."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from pathlib import Path

from engine.policies.factory import is_human
from engine.records.ids import IdSet
from engine.records.rundir import Plan, RunDir
from engine.records.transcripts import NO_TRANSCRIPTS_FILE, TranscriptIndex, has_transcripts
from engine.session.giveup import PLAYERS_ERRORS
from engine.session.playing import counted_keys

REPLAYED_FILE = "results.replayed.jsonl"


@dataclass(frozen=True)
class Replays:
    """What a resume set aside to play again, and what it could not."""

    errors: int = 0  # games that ended in an error not a player's (asked for)
    untranscribed: int = 0  # games recorded without their transcript
    people: int = 0  # games with people recorded without their transcript: kept as they are
    file: Path | None = None  # where the records set aside went

    def lines(self) -> list[str]:
        """What was done, a line each, for the terminal."""
        said = []
        if self.untranscribed:
            said.append(f"Playing again {_games(self.untranscribed)} recorded without a transcript (lost to a kill or a full "
                        f"disk before records waited for their transcripts); their records moved to {self.file}.")
        if self.errors:
            said.append(f"Playing again {_games(self.errors)} that ended in an error not a player's; their records moved to {self.file}.")
        if self.people:
            said.append(f"{_games(self.people)} played by people {'has' if self.people == 1 else 'have'} no transcript and "
                        f"{'is' if self.people == 1 else 'are'} kept as recorded: a person's game cannot be played again the same way.")
        return said


def _games(n: int) -> str:
    return f"{n} game{'s' * (n != 1)}"


def set_aside_replays(run: RunDir, plan: Plan, *, errors: bool, transcripts: bool) -> Replays:
    """Move aside the records of the games the resume of ``run`` plays again (``errors``: those that
    ended in an error not a player's; ``transcripts``: the resume keeps transcripts)."""
    failed, without = IdSet(), IdSet()
    index = None
    if transcripts and has_transcripts(run.path) and not (run.path / NO_TRANSCRIPTS_FILE).exists():
        index = TranscriptIndex(run.path)
        index.refresh()
    for key in counted_keys(run):
        if not 0 <= key.game_id < plan.total:
            continue  # not the plan's: refused with its line (``recorded_games``), not played
        if errors and key.outcome == "error" and key.error is not None and key.error.kind not in PLAYERS_ERRORS:
            failed.add(key.game_id)
        elif index is not None and index.where.get(key.game_id) < 0:
            without.add(key.game_id)
    people = IdSet()
    if len(without) and any(is_human(name) for names in plan.agents for name in names):
        for record in run.iter_records():
            if record.game_id in without and any(is_human(name) for name in record.spec.agents.values()):
                people.add(record.game_id)
    replayed = IdSet(game_id for game_id in chain(failed, without) if game_id not in people)
    if not len(replayed):
        return Replays(people=len(people))
    run.move_aside(replayed, REPLAYED_FILE)
    return Replays(len(failed), len(without) - len(people), len(people), run.path / REPLAYED_FILE)
