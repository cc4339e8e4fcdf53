"""For games where every role edits its own list of positions towards one truth (AsymPuzl, the
chain puzzle): the feedback modes, how feedback reads, and the position figures of a record.

Feedback is a pure function of the truth and every role's current hypothesis, computed when a role
is prompted, so it describes the hypotheses as they are at that moment (for Bob that includes
Alice's actions of the same turn). ``joint`` (whether the whole puzzle is solved) always says
"unsolved" while a game is played, since a game ends when it is solved; ``partner`` is the other
reading of the long paper's joint feedback (appendix B: each agent sees the other's completion status).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import re

import msgspec

from ..base import Outcome

Hypotheses = Mapping[str, Sequence[Any]]


class RoleStatus(msgspec.Struct, frozen=True, gc=False):
    """What an agent is told about one hypothesis: solved or not, and maybe which positions are wrong."""

    role: str
    solved: bool
    wrong: tuple[int, ...] | None = None


class Feedback(msgspec.Struct, frozen=True, gc=False):
    """Feedback for one agent. Fields a mode does not give are None / empty."""

    mode: str
    own: RoleStatus | None = None
    others: tuple[RoleStatus, ...] = ()
    joint_solved: bool | None = None


def wrong_positions(hypothesis: Sequence[Any], truth: Sequence[Any]) -> tuple[int, ...]:
    return tuple(i for i, (h, t) in enumerate(zip(hypothesis, truth), start=1) if h != t)


def correct_count(hypothesis: Sequence[Any], truth: Sequence[Any]) -> int:
    return sum(h == t for h, t in zip(hypothesis, truth))


def _status(truth, hypotheses: Hypotheses, role: str, detailed: bool) -> RoleStatus:
    wrong = wrong_positions(hypotheses[role], truth)
    return RoleStatus(role=role, solved=not wrong, wrong=wrong if detailed else None)


def _others(truth, hypotheses: Hypotheses, role: str, detailed: bool) -> tuple[RoleStatus, ...]:
    return tuple(_status(truth, hypotheses, r, detailed) for r in hypotheses if r != role)


def none(truth, hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="none")


def own(truth, hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="own", own=_status(truth, hypotheses, role, detailed=False))


def own_detailed(truth, hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="own_detailed", own=_status(truth, hypotheses, role, detailed=True))


def joint(truth, hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="joint", joint_solved=all(h == truth for h in hypotheses.values()))


def partner(truth, hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="partner", others=_others(truth, hypotheses, role, detailed=False))


def both(truth, hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(
        mode="both",
        own=_status(truth, hypotheses, role, detailed=False),
        others=_others(truth, hypotheses, role, detailed=False),
    )


def both_detailed(truth, hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(
        mode="both_detailed",
        own=_status(truth, hypotheses, role, detailed=True),
        others=_others(truth, hypotheses, role, detailed=True),
    )


MODES: dict[str, Callable[[Any, Hypotheses, str], Feedback]] = {
    "none": none,
    "own": own,
    "own_detailed": own_detailed,
    "joint": joint,
    "both": both,
    "both_detailed": both_detailed,
    "partner": partner,
}


def feedback_modes(truth_and_hypotheses: Callable[[PositionGame], tuple[Any, Hypotheses]]) -> dict[str, Callable[[PositionGame, str], Feedback]]:
    """The modes as a game's feedback table: ``truth_and_hypotheses(state)`` reads the state."""

    def bind(mode):
        def feedback(state: PositionGame, role: str) -> Feedback:
            truth, hypotheses = truth_and_hypotheses(state)
            return mode(truth, hypotheses, role)

        feedback.__name__ = mode.__name__
        return feedback

    return {name: bind(mode) for name, mode in MODES.items()}


# ---- How feedback reads ----


def _positions(wrong: tuple[int, ...]) -> str:
    return ", ".join(str(p) for p in wrong)


def _status_line(subject: str, status: RoleStatus) -> str:
    line = f"{subject} part of the puzzle is {'solved' if status.solved else 'unsolved'}"
    if status.wrong:
        line += f"; wrong positions: {_positions(status.wrong)}"
    return line + "."


def render_feedback(feedback: Feedback, name: Callable[[str], str]) -> str:
    """Feedback as the sentences an agent reads; empty when the mode gives nothing. ``name`` gives
    how another role is called."""
    lines = []
    if feedback.own is not None:
        lines.append(_status_line("Your", feedback.own))
    for status in feedback.others:
        lines.append(_status_line(f"{name(status.role)}'s", status))
    if feedback.joint_solved is not None:
        lines.append(f"The puzzle is {'solved' if feedback.joint_solved else 'not solved yet'}.")
    return "\n".join(lines)


_STATUS = re.compile(r"^(Your|(.+)'s) part of the puzzle is (solved|unsolved)(?:; wrong positions: ([\d, ]+))?\.$")
_JOINT = re.compile(r"^The puzzle is (solved|not solved yet)\.$")


def read_feedback(text: str, role: str, role_of: Callable[[str], str]) -> Feedback:
    """Feedback read back from the sentences ``render_feedback`` wrote for ``role`` (``role_of``
    turns a name back into a role); mode "none" when it says nothing, else "read"."""
    own, others, joint = None, [], None
    for line in text.splitlines():
        if (m := _STATUS.match(line.strip())) is not None:
            wrong = tuple(int(p) for p in m.group(4).split(",")) if m.group(4) else None
            if m.group(1) == "Your":
                own = RoleStatus(role, m.group(3) == "solved", wrong)
            else:
                others.append(RoleStatus(role_of(m.group(2)), m.group(3) == "solved", wrong))
        elif (j := _JOINT.match(line.strip())) is not None:
            joint = j.group(1) == "solved"
    if own is None and not others and joint is None:
        return Feedback(mode="none")
    return Feedback(mode="read", own=own, others=tuple(others), joint_solved=joint)


def positions_to_rewrite(feedback: Feedback | None, written: bool, target: Mapping[int, Any]) -> set[int]:
    """The positions an agent that acts on feedback writes again: those said to be wrong; all of
    them on a bare "unsolved" (its own or the joint one); none before it has written anything."""
    if not written or feedback is None:
        return set()
    own = feedback.own
    if own is not None:
        if own.solved:
            return set()
        if own.wrong is not None:
            return set(own.wrong)
        return set(target)
    if feedback.joint_solved is False:
        return set(target)
    return set()


class PositionGame:
    """The state every position game shares: one truth, every role's hypothesis (a list of items,
    one per position), how often each role wrote each position and how often a write changed it.
    Subclasses set ``roles``, ``max_turns``, ``truth`` and ``_hypotheses``, call ``_start_counts``,
    report each applied write with ``_wrote``, and give ``view``, ``private`` and ``step``."""

    roles: tuple[str, ...]
    max_turns: int
    truth: tuple[Any, ...]
    _hypotheses: dict[str, tuple[Any, ...]]
    _size: int
    _counts: dict[str, list[int]]  # per role: the writes of each position, then its modifications

    def _start_counts(self, size: int) -> None:
        # One list a role for both counts: a game in flight holds these, thousands at once.
        self._size = size
        self._counts = {role: [0] * (2 * size) for role in self.roles}

    def _wrote(self, role: str, position: int, before: Any, after: Any) -> None:
        """``role`` wrote ``after`` at ``position`` (1-based) where ``before`` was."""
        counts = self._counts[role]
        counts[position - 1] += 1
        if after != before:
            counts[self._size + position - 1] += 1

    @property
    def _writes(self) -> dict[str, list[int]]:
        return {role: counts[: self._size] for role, counts in self._counts.items()}

    @property
    def _modifications(self) -> dict[str, list[int]]:
        return {role: counts[self._size:] for role, counts in self._counts.items()}

    def hypotheses(self) -> dict[str, tuple[Any, ...]]:
        return dict(self._hypotheses)

    def done(self) -> bool:
        return all(h == self.truth for h in self._hypotheses.values())

    def private(self, role: str) -> tuple[object, ...]:  # each game's own
        raise NotImplementedError

    def outcome(self) -> Outcome:
        return "success" if self.done() else "failure"

    def progress(self, role: str) -> int:
        return correct_count(self._hypotheses[role], self.truth)

    def scores(self) -> dict[str, Any]:
        return position_scores(self._modifications, self._writes)

    def metrics(self) -> dict[str, Any]:
        return position_metrics(self._modifications, self._writes, {r: self.progress(r) for r in self.roles})

    def instance(self) -> dict[str, Any]:
        """What a third party needs to check a transcript of this game: the truth and what each
        role was given."""
        return {"truth": self.truth, "private": {role: self.private(role) for role in self.roles}}


# ---- The record's figures ----


def position_scores(modifications: dict[str, list[int]], writes: dict[str, list[int]]) -> dict[str, float]:
    """Per agent, the long paper's average number of actions per position: how often a position was
    modified (1 is optimal for Alice, at most 1 for Bob; 0 while unsolved means ignoring the
    partner; 4 and more is over-correction); and how often it was written, changed or not."""
    scores = {f"actions_per_position.{r}": sum(c) / len(c) for r, c in modifications.items()}
    scores.update({f"writes_per_position.{r}": sum(c) / len(c) for r, c in writes.items()})
    return scores


def position_metrics(
    modifications: dict[str, list[int]], writes: dict[str, list[int]], progress: dict[str, int],
) -> dict[str, Any]:
    """Per agent and position, how often it was modified and written; per agent, the positions right."""
    return {
        "position_actions": {r: list(c) for r, c in modifications.items()},
        "position_writes": {r: list(c) for r, c in writes.items()},
        "correct_positions": progress,
    }


def upgrade_figures(scores: dict[str, Any], metrics: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A record's figures as written before modifications were told from writes (its metrics have
    ``position_actions`` but no ``position_writes``: every write was counted as an action), renamed
    as writes; None if the record is current."""
    if "position_actions" not in metrics or "position_writes" in metrics:
        return None
    renamed = {k.replace("actions_per_position.", "writes_per_position.", 1): v for k, v in scores.items()}
    fixed = {("position_writes" if k == "position_actions" else k): v for k, v in metrics.items()}
    return renamed, fixed


POSITION_SCORE_WORDS = {
    "actions_per_position": "changes you made to your answer, per position (fewer is more direct)",
    "writes_per_position": "writes to your answer, per position, changes or not",
}


def position_sort_keys() -> dict[str, Callable[[str], Any]]:
    """Condition labels of position games: N sorts as a number; D as "0", then by side and count."""

    def number(text: str) -> tuple:
        try:
            return (float(text), text)
        except ValueError:
            return (float("inf"), text)

    def distractors(text: str) -> tuple:
        count, _, side = text.partition(" in ")
        return (side, number(count))

    return {"N": number, "D": distractors}


def position_upgrade(**played_with: Any) -> Callable[[msgspec.Struct, dict, dict], tuple[msgspec.Struct, dict, dict]]:
    """A position game's ``ResultsFormat.upgrade``: a record written before modifications were told from
    writes gets its figures renamed as writes and ``played_with`` as its parameters (parameters
    that did not exist then, as its games were played)."""

    def upgrade(params: msgspec.Struct, scores: dict[str, Any], metrics: dict[str, Any]) -> tuple[msgspec.Struct, dict, dict]:
        figures = upgrade_figures(scores, metrics)
        if figures is None:
            return params, scores, metrics
        return (msgspec.structs.replace(params, **played_with) if played_with else params), *figures

    return upgrade


class Format1:
    """How a position game's results were written by results format 1: its parameters were flat
    fields of the game spec (``param_names``), and its figures were fields of the record, every
    write counted as an action. ``played_with``: parameters that did not exist then, as the games
    were played (the prompt, say)."""

    def __init__(self, param_names: tuple[str, ...], played_with: Mapping[str, Any] | None = None) -> None:
        self.param_names = param_names
        self.played_with = dict(played_with or {})

    def params(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The game's parameters from the old flat fields (values, or lists of values in a grid)."""
        given = {name: fields[name] for name in self.param_names if name in fields}
        grid = isinstance(fields.get("agents"), list)  # a grid's fields are lists of values
        return given | {k: [v] if grid else v for k, v in self.played_with.items()}

    def figures(self, record: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]:
        """(scores, metrics, the old record fields they replace). Format 1 counted writes only."""
        scores = {f"writes_per_position.{r}": v for r, v in record.get("actions_per_position", {}).items()}
        metrics = {}
        if record.get("position_actions"):
            metrics["position_writes"] = record["position_actions"]
        if record.get("correct_positions"):
            metrics["correct_positions"] = record["correct_positions"]
        return scores, metrics, ("actions_per_position", "position_actions", "correct_positions")
