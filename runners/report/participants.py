"""The report's table of participants: one row per person who played a seat (their pseudonymous id),
with the conditions and seats they had, their time on task, the games they finished and those left
unfinished (walked away from, or ended by another error), from the records alone, so that a study's
block and an ``asymgames play`` run report alike.

The records go by one at a time (``read_participants`` streams a results file in game-id order, the
last record of a game id winning, as the report's totals do); each participant keeps counts and the
conditions they had, so memory is set by the participants, not by the games. A study's block names
its conditions as the study file does (``study_names``), not by the fields that tell them apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from engine.analysis import ABSENT, field_values, human_roles, is_absent, recorded_games
from engine.records import GameRecord
from engine.study import StudyError, condition_names, load_study

from runners.report.cells import Table, frac, key_label, num

NO_ID = "-"  # a seat played without a participant id
STUDY_FILE = "study.toml"  # beside a study's blocks, in the study's directory
BLOCK = re.compile(r"block-(\d+)-.+")  # a study's block: block-INDEX-GAME


def study_names(run_dir: Path | str) -> dict[str, str]:
    """Where ``run_dir`` is a block of a study (``block-N-GAME`` beside the study's ``study.toml``),
    the study's name of each of its conditions by the condition's label; elsewhere nothing."""
    run_dir = Path(run_dir)
    found = BLOCK.fullmatch(run_dir.name)
    if found is None or not (run_dir.parent / STUDY_FILE).is_file():
        return {}
    try:
        return condition_names(load_study(run_dir.parent / STUDY_FILE), int(found.group(1)))
    except (StudyError, IndexError, ValueError):  # not the study this block was played from
        return {}


class Participant:
    """What the table keeps of one participant's games."""

    __slots__ = ("id", "games", "finished", "walked_away", "partner_away", "other_errors", "turns", "timeouts",
                 "seconds", "conditions", "seats")

    def __init__(self, participant: str) -> None:
        self.id = participant
        self.games = self.finished = self.walked_away = self.partner_away = self.other_errors = 0
        self.turns = self.timeouts = 0
        self.seconds = 0.0
        self.conditions: dict[str, int] = {}  # condition label -> games, first seen first
        self.seats: dict[str, int] = {}  # role -> games

    @property
    def unfinished(self) -> int:
        return self.walked_away + self.partner_away + self.other_errors


class ParticipantTally:
    """The participants of a run, filled one record at a time."""

    def __init__(self, fields: Sequence[str], names: Mapping[str, str] | None = None) -> None:
        self.fields = list(fields)  # the fields that name a condition (the human seats table's)
        self.names = dict(names or {})  # a study's names of its conditions, by the condition's label
        self.people: dict[str, Participant] = {}  # first seen first

    def add(self, record: GameRecord) -> None:
        roles = human_roles(record)
        if not roles:
            return
        seats = record.humans if isinstance(record.humans, dict) else {}
        values = field_values(record)
        label = self.names.get(record.spec.condition()) or key_label(self.fields, [values.get(f, "") for f in self.fields])
        absent_role = record.error.actor if is_absent(record) and record.error is not None else None
        mine: dict[str, list[str]] = {}  # participant -> their roles in this game
        for role in roles:
            seat = seats.get(role)
            mine.setdefault((seat.participant if seat is not None else None) or NO_ID, []).append(role)
        for who, played in mine.items():
            person = self.people.setdefault(who, Participant(who))
            person.games += 1
            person.conditions[label] = person.conditions.get(label, 0) + 1
            for role in played:
                person.seats[role] = person.seats.get(role, 0) + 1
                seat = seats.get(role)
                if seat is not None:
                    person.turns += seat.turns
                    person.timeouts += seat.timeouts
                    person.seconds += seat.seconds
            if record.outcome != "error":
                person.finished += 1
            elif is_absent(record):
                if absent_role is None or absent_role in played:
                    person.walked_away += 1
                else:
                    person.partner_away += 1
            else:
                person.other_errors += 1

    def add_all(self, records: Iterable[GameRecord]) -> ParticipantTally:
        for record in records:
            self.add(record)
        return self


def read_participants(path: Path | str, fields: Sequence[str], names: Mapping[str, str] | None = None) -> ParticipantTally:
    """The participants of a results file's games, read in game-id order (the last record of a game
    id that decodes wins; damaged lines are skipped, as the report's totals skip them)."""
    return ParticipantTally(fields, names).add_all(recorded_games(path))


def _counted(counts: dict[str, int]) -> str:
    return "; ".join(f"{k} ({n})" if n > 1 else k for k, n in counts.items())


def participants_table(tally: ParticipantTally) -> Table | None:
    """One row per participant; None when no person played."""
    if not tally.people:
        return None
    header = ["participant", "games", "finished", "unfinished", "walked away", "partner away", "other errors",
              "time on task s", "turns", "timeouts", "conditions", "seats"]
    body, csv_rows = [], []
    for p in tally.people.values():
        body.append([
            p.id, str(p.games), str(p.finished), str(p.unfinished), str(p.walked_away), str(p.partner_away),
            str(p.other_errors), num(p.seconds, 1), str(p.turns), str(p.timeouts), _counted(p.conditions), _counted(p.seats),
        ])
        csv_rows.append([
            p.id, p.games, p.finished, p.unfinished, p.walked_away, p.partner_away, p.other_errors, frac(round(p.seconds, 3)),
            p.turns, p.timeouts, ";".join(f"{k}={n}" for k, n in p.conditions.items()),
            ";".join(f"{k}={n}" for k, n in p.seats.items()),
        ])
    csv_header = ["participant", "games", "finished", "unfinished", ABSENT, "partner_absent", "other_errors",
                  "seconds_on_task", "turns", "timeouts", "conditions", "seats"]
    note = (
        "One row per participant (their pseudonymous id; - for a seat played without one), in the order of their "
        "first game. Finished: games that ended without error. Unfinished: games that ended in an error, split into "
        f"those the person walked away from ({ABSENT} on their seat), those their partner walked away from, and "
        "other errors. Time on task: the person's response time summed over their turns (turns that timed out "
        "count their full time). Conditions and seats: the games they had in each (N in brackets where more than one); "
        + ("the conditions are named as the study names them." if tally.names else
           f"the conditions are named by {', '.join(tally.fields) or 'nothing: one condition'}.")
    )
    return Table("participants", "Participants", header, body, 1, note, csv_header, csv_rows)
