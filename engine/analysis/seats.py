"""The games with a person in a seat, per condition: the human-study scores the game's papers report,
and how the turns went (the papers' AMT and HMT: turns per game taken by the agents and by the people).

Which games count:

- A condition's *games* are its games with a seat played by a person (policy ``human``).
- The study's games (``n``) are those that ended without error, and those the person walked away
  from (error kind "human_absent"): a person who stopped answering did not complete the game, so
  such a game counts as a *no* for every yes/no study score (and as a failure where the game names
  no study scores and success stands in). Numeric scores are averaged over the games that gave them,
  with the interval of ``engine.analysis.stats.mean_interval`` (inside the values' range).
  Games lost to any other error (such as the infrastructure's) say nothing about the person and are
  left out.
- Turns, response times and timeouts are taken over the study's games. A response time is the time
  from a turn being shown to the person's answer; turns that timed out are left out of the median.

The study's scores are the game's own (``Records.human_study``: score key -> label), read when the
report is made; a game that names none is reported by its success rate alone.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence

import msgspec

from puzzles import get_game

from engine.policies.seat import HumanAbsent
from engine.policies.factory import is_human
from engine.records.record import GameRecord
from engine.analysis.stats import ScoreSummary, mean_interval, wilson_interval
from engine.analysis.conditions import group_by
from engine.analysis.measures import score_keys

ABSENT = HumanAbsent.kind
SUCCESS = ""  # the column key of the success rate, for games that name no study scores (never a score key)

StudyOf = Callable[[str], Mapping[str, str]]


def study_of_game(name: str) -> Mapping[str, str]:
    """The game's human-study scores, score key -> label."""
    return get_game(name).records.human_study


def human_roles(record: GameRecord) -> list[str]:
    """The roles a person played in the game."""
    roles = [role for role, policy in record.spec.agents.items() if is_human(str(policy))]
    if isinstance(record.humans, dict):
        roles += [role for role in record.humans if role not in roles]
    return roles


def has_human(record: GameRecord) -> bool:
    return bool(human_roles(record))


def is_absent(record: GameRecord) -> bool:
    """The game ended because the person in a seat stopped answering."""
    return record.error is not None and record.error.kind == ABSENT


def in_study(record: GameRecord) -> bool:
    """The game counts for the study: it ended without error, or the person walked away."""
    return record.outcome != "error" or is_absent(record)


class StudyColumn(msgspec.Struct, frozen=True):
    """One human-study score of the run: its key (``SUCCESS`` for the success rate), its label, and
    its kind: "rate" (yes/no) or "mean"."""

    key: str
    label: str
    kind: str


def study_columns(records: Sequence[GameRecord], study_of: StudyOf = study_of_game) -> list[StudyColumn]:
    """The human-study scores of the games with a person, in first-seen order. A score's kind is the
    one it has over the run's games; a score no game gave is taken as yes/no."""
    kinds = score_keys(records)
    columns: dict[str, StudyColumn] = {}
    for game in dict.fromkeys(r.spec.game for r in records if has_human(r)):
        study = dict(study_of(game)) or {SUCCESS: "Success"}
        for key, label in study.items():
            if key not in columns:
                columns[key] = StudyColumn(key, label, kinds.get(key, "rate") if key != SUCCESS else "rate")
    return list(columns.values())


def study_summary(records: Sequence[GameRecord], column: StudyColumn) -> ScoreSummary | None:
    """One study score over the study's games; None when no game of them has it to give."""
    values: list[float] = []
    for r in records:
        if column.key == SUCCESS:
            values.append(float(r.outcome == "success"))
        elif column.key in r.scores and r.outcome != "error":
            values.append(float(r.scores[column.key]))
        elif is_absent(r) and column.kind == "rate":
            values.append(0.0)  # a person who walked away did not complete the game
    if not values:
        return None
    if column.kind == "rate":
        hits = round(sum(values))
        low, high = wilson_interval(hits, len(values))
        return ScoreSummary("rate", len(values), hits / len(values), low, high)
    mean, low, high = mean_interval(values)
    return ScoreSummary("mean", len(values), mean, low, high)


class HumanRow(msgspec.Struct):
    """The games of one condition with a person in a seat."""

    key: tuple[str, ...]
    games: int  # every game of the condition
    n: int  # the study's games: ended without error, or the person walked away
    participants: list[str]  # distinct participant ids, sorted; [] when none was recorded
    scores: dict[str, ScoreSummary]  # study column key -> its summary, where the games give it
    agent_turns: ScoreSummary  # turns per game taken by the agents' seats (AMT), mean with its interval (stats.mean_interval)
    human_turns: ScoreSummary  # and by the people's seats (HMT)
    median_seconds: float  # a person's median response time per answered turn; NaN if none
    timeouts: float  # turns that timed out, per game; NaN when n == 0
    absent: int  # games that ended because the person walked away


def _mean(values: Sequence[float]) -> ScoreSummary:
    mean, low, high = mean_interval(values)
    return ScoreSummary("mean", len(values), mean, low, high)


def _timeouts(record: GameRecord, roles: Sequence[str]) -> int:
    """Timed-out turns of the people: the seats' own count (it includes a last turn that ended the
    game), else the turn log's."""
    if isinstance(record.humans, dict) and record.humans:
        return sum(seat.timeouts for seat in record.humans.values())
    return sum(1 for t in record.turn_log if t.role in roles and t.human is not msgspec.UNSET and t.human.timed_out)


def human_row(key: tuple[str, ...], group: Sequence[GameRecord], columns: Sequence[StudyColumn]) -> HumanRow:
    study = [r for r in group if in_study(r)]
    participants = sorted({
        seat.participant for r in group if isinstance(r.humans, dict) for seat in r.humans.values() if seat.participant
    })
    agent_turns, human_turns, seconds, timeouts = [], [], [], 0
    for r in study:
        people = human_roles(r)
        agent_turns.append(float(sum(t.role not in people for t in r.turn_log)))
        human_turns.append(float(sum(t.role in people for t in r.turn_log)))
        seconds += [
            t.human.seconds for t in r.turn_log if t.role in people and t.human is not msgspec.UNSET and not t.human.timed_out
        ]
        timeouts += _timeouts(r, people)
    scores = {c.key: s for c in columns if (s := study_summary(study, c)) is not None}
    return HumanRow(
        key=key, games=len(group), n=len(study), participants=participants, scores=scores,
        agent_turns=_mean(agent_turns), human_turns=_mean(human_turns),
        median_seconds=statistics.median(seconds) if seconds else math.nan,
        timeouts=timeouts / len(study) if study else math.nan, absent=sum(is_absent(r) for r in group),
    )


def human_seats(
    records: Sequence[GameRecord], fields: Sequence[str], study_of: StudyOf = study_of_game,
) -> tuple[list[StudyColumn], list[HumanRow]]:
    """Per condition (grouped by ``fields``) that has games with a person in a seat: the study's
    columns and one row each; ([], []) when no person played."""
    people = [r for r in records if has_human(r)]
    if not people:
        return [], []
    columns = study_columns(records, study_of)
    return columns, [human_row(key, group, columns) for key, group in group_by(people, fields)]


__all__ = [
    "ABSENT", "SUCCESS", "HumanRow", "StudyColumn", "has_human", "human_roles", "human_row", "human_seats",
    "in_study", "is_absent", "study_columns", "study_summary",
]
