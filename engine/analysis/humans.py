"""Which games had a person in a seat, and what the human-seats table keeps of them per condition
(``HumanTally``), one record at a time; the table itself is ``seats``'s.

A person's games count for the study when they ended without error or the person walked away (see
``seats``). What the table reports is kept as counts and running tallies (``ScoreTally``), except
the response times, kept for their median, and the participant ids: people do not play millions of
games. Each study score's tally holds the values of the games that gave it; the games the person
walked away from are counted apart, since whether they count as a *no* depends on the score's kind
over the whole run, known only once every record is read.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from engine.analysis.stats import ScoreTally, tally_scores
from engine.policies.factory import is_human
from engine.policies.seat import HumanAbsent
from engine.records.record import GameRecord

ABSENT = HumanAbsent.kind


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


def timeouts(record: GameRecord, roles: Sequence[str]) -> int:
    """Timed-out turns of the people: the seats' own count (it includes a last turn that ended the
    game), else the turn log's."""
    if isinstance(record.humans, dict) and record.humans:
        return sum(seat.timeouts for seat in record.humans.values())
    return sum(1 for t in record.turn_log if t.role in roles and t.human is not msgspec.UNSET and t.human.timed_out)


class HumanTally:
    """The games of one condition with a person in a seat, as the human-seats table needs them."""

    __slots__ = ("games", "study", "absent", "absent_study", "successes", "participants", "agent_turns",
                 "human_turns", "seconds", "timeouts", "given", "absent_given")

    def __init__(self) -> None:
        self.games = self.study = self.absent = self.absent_study = self.successes = self.timeouts = 0
        self.participants: set[str] = set()
        self.agent_turns = ScoreTally()  # turns per study game taken by the agents' seats
        self.human_turns = ScoreTally()  # and by the people's
        self.seconds: list[float] = []  # response time of each answered turn of the study's games
        self.given: dict[str, ScoreTally] = {}  # score -> its values in the study's games that ended without error
        self.absent_given: dict[str, int] = {}  # of those, games the person walked away from

    def add(self, record: GameRecord) -> None:
        self.games += 1
        absent = is_absent(record)
        self.absent += absent
        if isinstance(record.humans, dict):
            self.participants.update(seat.participant for seat in record.humans.values() if seat.participant)
        if not in_study(record):
            return
        self.study += 1
        self.absent_study += absent
        self.successes += record.outcome == "success"
        if record.outcome != "error":
            tally_scores(self.given, record.scores)
            if absent:
                for key in record.scores:
                    self.absent_given[key] = self.absent_given.get(key, 0) + 1
        people = human_roles(record)
        self.agent_turns.add(float(sum(t.role not in people for t in record.turn_log)))
        self.human_turns.add(float(sum(t.role in people for t in record.turn_log)))
        self.seconds += [
            t.human.seconds for t in record.turn_log
            if t.role in people and t.human is not msgspec.UNSET and not t.human.timed_out
        ]
        self.timeouts += timeouts(record, people)
