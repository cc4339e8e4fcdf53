"""What each message is worth: a branch run's games against the games they branch.

A branch game (``engine.plan.branching``) is its original game played again with one message
changed, so the two pair by condition and seed. For each alternative and each turn (and each seat),
the change is the branch's result minus the original's: success as a difference of paired
proportions (Newcombe's interval), each partial score as the mean change (Student's t interval over
the branches). A branch whose point the original never reached (the game was over, or the seat did
not act then) is the original game again: it is counted apart as unreached, not as "no change".
The messages that mattered most are the branches whose results moved furthest from their
original's, each named by its two game ids so a viewer can show them side by side. Where the game
reads its messages by kind (``Records.message_kinds``: what a message says of its sender's private
information, say), the branches are grouped by the kind of the message they replace too, read from the original run's
transcripts (``message_kinds``).

Where a point has K branches (``resample``, ``noise``), each branch's leave-one-out advantage is its
result minus the mean of the other K - 1 (``advantages``): the credit of that one message, in the
form a trainer takes per turn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from puzzles import InvalidParameter, get_game

from engine.analysis.paired import paired_difference_interval
from engine.analysis.played import played_game
from engine.analysis.stats import mean_interval
from engine.plan.branching import BranchPoint
from engine.records.record import GameRecord
from engine.records.transcripts import TranscriptIndex, has_transcripts

Interval = tuple[float, float, float]  # (estimate, low, high)
Kinds = Mapping[tuple[str, int], Mapping[tuple[int, str], str]]  # (condition, seed) -> (turn, role) -> the message's kind


class BranchRow(msgspec.Struct):
    """The branches of one alternative at one turn (or in one seat) of one condition."""

    condition: str
    alternative: str
    at: str  # "turn 3", a seat, or a kind of message
    branches: int  # branches whose point the original reached
    success: Interval  # change in the success rate, branch minus original
    scores: dict[str, Interval]  # mean change of the rounds played (``turns``) and of each numeric score
    outcome_changed: int  # branches whose outcome differs from the original's


class Mattered(msgspec.Struct):
    """One branch that moved the result: its game, the game it branches, and by how much."""

    condition: str
    original_game: int
    branch_game: int
    point: str
    success_change: int  # -1, 0 or 1
    score_change: float  # the largest change of a numeric score or of the rounds played, by size


class BranchReport(msgspec.Struct):
    by_turn: list[BranchRow]
    by_seat: list[BranchRow]
    mattered: list[Mattered]
    unreached: int  # branches at a point the original never reached
    unpaired: int  # branches whose original is missing, or either ended in an error
    by_kind: list[BranchRow] = []  # per kind of the message replaced, where the game reads kinds


def condition_of(record: GameRecord) -> str:
    """The condition of a record without its branch point: that of the game it branches."""
    fields = record.spec.condition_fields()
    fields.pop("branch", None)
    return " ".join(f"{k}={v}" for k, v in fields.items())


def reached(original: GameRecord, point: BranchPoint) -> bool:
    return any(turn.turn == point.turn and turn.role == point.role for turn in original.turn_log)


def _numeric(record: GameRecord) -> dict[str, float]:
    """The record's numeric scores, and the rounds it played (``turns``)."""
    return {"turns": float(record.turns), **{k: float(v) for k, v in record.scores.items() if not isinstance(v, bool)}}


class _Cell:
    def __init__(self) -> None:
        self.pairs = [0, 0, 0, 0]  # success under both, branch only, original only, neither
        self.changes: dict[str, list[float]] = defaultdict(list)

    def add(self, branch: GameRecord, original: GameRecord) -> None:
        won, was = branch.outcome == "success", original.outcome == "success"
        self.pairs[{(True, True): 0, (True, False): 1, (False, True): 2, (False, False): 3}[(won, was)]] += 1
        before = _numeric(original)
        for key, value in _numeric(branch).items():
            if key in before:
                self.changes[key].append(value - before[key])

    def row(self, condition: str, alternative: str, at: str) -> BranchRow:
        return BranchRow(
            condition=condition, alternative=alternative, at=at, branches=sum(self.pairs),
            success=paired_difference_interval(*self.pairs),
            scores={k: mean_interval(v) for k, v in self.changes.items()},
            outcome_changed=self.pairs[1] + self.pairs[2],
        )


def message_kinds(records: Iterable[GameRecord], run_path: Path) -> dict[tuple[str, int], dict[tuple[int, str], str]]:
    """The kind of each message of a run's games that ended without error, as their game reads it
    (``Records.message_kinds``), from the run's transcripts, by (condition, seed); nothing for a game
    that reads no kinds, or a run without transcripts."""
    if not has_transcripts(run_path):
        return {}
    index = TranscriptIndex(run_path)
    index.refresh()
    kinds = {}
    for record in records:
        try:
            read = get_game(record.spec.game).records.message_kinds
        except InvalidParameter:
            read = None
        transcript = index.get(record.game_id) if read is not None and record.outcome != "error" else None
        if read is not None and transcript is not None and transcript.game_id == record.game_id:
            kinds[(condition_of(record), record.spec.seed)] = dict(read(played_game(record, transcript, "")))
    return kinds


def value_of_information(branches: Iterable[GameRecord], originals: Iterable[GameRecord], *, top: int = 10,
                         kinds: Kinds | None = None) -> BranchReport:
    """The branch run's records against the original run's; ``kinds``: the originals' messages by
    kind (``message_kinds``), to group the branches by the kind of the message they replace."""
    by_seed = {(condition_of(r), r.spec.seed): r for r in originals}
    turns: dict[tuple[str, str, int], _Cell] = defaultdict(_Cell)
    seats: dict[tuple[str, str, str], _Cell] = defaultdict(_Cell)
    by_kind: dict[tuple[str, str, str], _Cell] = defaultdict(_Cell)
    mattered: list[Mattered] = []
    unreached = unpaired = 0
    for branch in branches:
        point = branch.spec.option("branch", None)
        if point is None:
            continue
        condition = condition_of(branch)
        original = by_seed.get((condition, branch.spec.seed))
        if original is None or original.outcome == "error" or branch.outcome == "error":
            unpaired += 1
            continue
        if not reached(original, point):
            unreached += 1
            continue
        turns[(condition, point.alternative, point.turn)].add(branch, original)
        seats[(condition, point.alternative, point.role)].add(branch, original)
        kind = (kinds or {}).get((condition, branch.spec.seed), {}).get((point.turn, point.role))
        if kind is not None:
            by_kind[(condition, point.alternative, kind)].add(branch, original)
        before = _numeric(original)
        changes = [v - before[k] for k, v in _numeric(branch).items() if k in before]
        mattered.append(Mattered(
            condition=condition, original_game=original.game_id, branch_game=branch.game_id, point=point.label(),
            success_change=(branch.outcome == "success") - (original.outcome == "success"),
            score_change=max(changes, key=abs, default=0.0),
        ))
    mattered.sort(key=lambda m: (-abs(m.success_change), -abs(m.score_change), m.branch_game))
    return BranchReport(
        by_turn=[cell.row(c, a, f"turn {t}") for (c, a, t), cell in sorted(turns.items())],
        by_seat=[cell.row(c, a, seat) for (c, a, seat), cell in sorted(seats.items())],
        mattered=[m for m in mattered if m.success_change or m.score_change][:top],
        unreached=unreached, unpaired=unpaired,
        by_kind=[cell.row(c, a, kind) for (c, a, kind), cell in sorted(by_kind.items())],
    )


class Advantage(msgspec.Struct):
    """One branch's leave-one-out advantage at its point: its success minus the mean of the other
    branches of the same point (same game, turn, seat and alternative)."""

    branch_game: int
    original_seed: int
    point: str
    advantage: float


def advantages(branches: Iterable[GameRecord]) -> list[Advantage]:
    """Leave-one-out advantages of every point with two or more finished branches."""
    groups: dict[tuple[str, int, int, str, str], list[GameRecord]] = defaultdict(list)
    for record in branches:
        point = record.spec.option("branch", None)
        if point is not None and record.outcome != "error":
            groups[(condition_of(record), record.spec.seed, point.turn, point.role, point.alternative)].append(record)
    out = []
    for group in groups.values():
        if len(group) < 2:
            continue
        won = [float(r.outcome == "success") for r in group]
        for record, advantage in zip(group, leave_one_out(won)):
            out.append(Advantage(
                branch_game=record.game_id, original_seed=record.spec.seed, point=record.spec.options.branch.label(),  # type: ignore[union-attr]
                advantage=advantage,
            ))
    return sorted(out, key=lambda a: a.branch_game)


def leave_one_out(values: list[float]) -> list[float]:
    """Each value minus the mean of the others (two values or more): a group's relative advantages."""
    if len(values) < 2:
        raise ValueError(f"leave-one-out needs two values or more, got {len(values)}")
    total = sum(values)
    return [value - (total - value) / (len(values) - 1) for value in values]
