"""The games with a person in a seat, per condition: the human-study scores the game's papers report,
and how the turns went (the papers' AMT and HMT: turns per game taken by the agents and by the people).

Which games count:

- A condition's *games* are its games with a seat played by a person (policy ``human``).
- The study's games (``n``) are those that ended without error, and those the person walked away
  from (error kind "human_absent"): a person who stopped answering did not complete the game, so
  such a game counts as a *no* for every yes/no study score (and as a failure where the game names
  no study scores and success stands in). Numeric scores are averaged over the games that gave them,
  with the interval of ``engine.analysis.stats.mean_interval``.
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

from engine.analysis.conditions import group_by
from engine.analysis.humans import ABSENT, HumanTally, has_human, human_roles, in_study, is_absent
from engine.analysis.stats import ScoreSummary, ScoreTally, wilson_interval
from engine.analysis.totals import Source, combined_tally, totals_of
from engine.analysis.measures import score_keys

SUCCESS = ""  # the column key of the success rate, for games that name no study scores (never a score key)

StudyOf = Callable[[str], Mapping[str, str]]


def study_of_game(name: str) -> Mapping[str, str]:
    """The game's human-study scores, score key -> label."""
    return get_game(name).records.human_study


class StudyColumn(msgspec.Struct, frozen=True):
    """One human-study score of the run: its key (``SUCCESS`` for the success rate), its label, and
    its kind: "rate" (yes/no) or "mean"."""

    key: str
    label: str
    kind: str


def study_columns(source: Source, study_of: StudyOf = study_of_game) -> list[StudyColumn]:
    """The human-study scores of the games with a person, in first-seen order. A score's kind is the
    one it has over the run's games; a score no game gave is taken as yes/no."""
    run = totals_of(source)
    kinds = score_keys(run)
    columns: dict[str, StudyColumn] = {}
    for game in run.human_games:
        study = dict(study_of(game)) or {SUCCESS: "Success"}
        for key, label in study.items():
            if key not in columns:
                columns[key] = StudyColumn(key, label, kinds.get(key, "rate") if key != SUCCESS else "rate")
    return list(columns.values())


def study_summary(tally: HumanTally, column: StudyColumn) -> ScoreSummary | None:
    """One study score over the study's games; None when no game of them has it to give. A yes/no
    score counts the games the person walked away from as a no, where they did not give it."""
    if column.key == SUCCESS:
        hits, n = tally.successes, tally.study
    else:
        given = tally.given.get(column.key, ScoreTally())
        if column.kind != "rate":
            return given.mean_summary() if given.n else None
        hits = given.hits if given.booleans else round(given.mean * given.n)
        n = given.n + tally.absent_study - tally.absent_given.get(column.key, 0)
    if n == 0:
        return None
    low, high = wilson_interval(hits, n)
    return ScoreSummary("rate", n, hits / n, low, high)


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


def combined(tallies: Sequence[HumanTally]) -> HumanTally:
    """One tally of the people's games of several conditions; the tally itself if one."""
    if len(tallies) == 1:
        return tallies[0]
    out = HumanTally()
    for name in ("games", "study", "absent", "absent_study", "successes", "timeouts"):
        setattr(out, name, sum(getattr(t, name) for t in tallies))
    out.participants = set().union(*(t.participants for t in tallies))
    out.agent_turns = combined_tally([t.agent_turns for t in tallies])
    out.human_turns = combined_tally([t.human_turns for t in tallies])
    out.seconds = [s for t in tallies for s in t.seconds]
    keys = dict.fromkeys(key for t in tallies for key in t.given)
    out.given = {key: combined_tally([t.given[key] for t in tallies if key in t.given]) for key in keys}
    out.absent_given = {key: sum(t.absent_given.get(key, 0) for t in tallies) for key in keys}
    return out


def human_row(key: tuple[str, ...], tally: HumanTally, columns: Sequence[StudyColumn]) -> HumanRow:
    scores = {c.key: s for c in columns if (s := study_summary(tally, c)) is not None}
    return HumanRow(
        key=key, games=tally.games, n=tally.study, participants=sorted(tally.participants), scores=scores,
        agent_turns=tally.agent_turns.mean_summary(), human_turns=tally.human_turns.mean_summary(),
        median_seconds=statistics.median(tally.seconds) if tally.seconds else math.nan,
        timeouts=tally.timeouts / tally.study if tally.study else math.nan, absent=tally.absent,
    )


def human_seats(
    source: Source, fields: Sequence[str], study_of: StudyOf = study_of_game,
) -> tuple[list[StudyColumn], list[HumanRow]]:
    """Per condition (grouped by ``fields``) that has games with a person in a seat: the study's
    columns and one row each; ([], []) when no person played."""
    run = totals_of(source)
    if not run.people:
        return [], []
    columns = study_columns(run, study_of)
    groups = group_by(run.people, fields)  # ordered as the games with a person came
    return columns, [human_row(key, combined([c.humans for c in group]), columns) for key, group in groups]


__all__ = [
    "ABSENT", "SUCCESS", "HumanRow", "StudyColumn", "has_human", "human_roles", "human_row", "human_seats",
    "in_study", "is_absent", "study_columns", "study_summary",
]
