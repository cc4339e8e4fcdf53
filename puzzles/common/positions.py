"""For games where every role edits its own list of positions towards one truth (AsymPuzl, the
chain puzzle): the six feedback modes, how feedback reads, and the position figures of a record.

Feedback is a pure function of the truth and every role's current hypothesis, computed when a role
is prompted, so it describes the hypotheses as they are at that moment (for Bob that includes
Alice's actions of the same turn).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import re

import msgspec

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
}


def feedback_modes(truth_and_hypotheses: Callable[[Any], tuple[Any, Hypotheses]]) -> dict[str, Callable[[Any, str], Feedback]]:
    """The six modes as a game's feedback table: ``truth_and_hypotheses(state)`` reads the state."""

    def bind(mode):
        def feedback(state: Any, role: str) -> Feedback:
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
    one per position) and how often each role wrote each position. Subclasses set ``roles``,
    ``max_turns``, ``truth``, ``_hypotheses`` and ``_writes``, and give ``view``, ``private`` and
    ``step``."""

    roles: tuple[str, ...]
    max_turns: int
    truth: tuple[Any, ...]
    _hypotheses: dict[str, tuple[Any, ...]]
    _writes: dict[str, list[int]]

    def hypotheses(self) -> dict[str, tuple[Any, ...]]:
        return dict(self._hypotheses)

    def done(self) -> bool:
        return all(h == self.truth for h in self._hypotheses.values())

    def outcome(self) -> str:
        return "success" if self.done() else "failure"

    def progress(self, role: str) -> int:
        return correct_count(self._hypotheses[role], self.truth)

    def scores(self) -> dict[str, Any]:
        return position_scores(self._writes)

    def metrics(self) -> dict[str, Any]:
        return position_metrics(self._writes, {r: self.progress(r) for r in self.roles})


# ---- The record's figures ----


def position_scores(writes: dict[str, list[int]]) -> dict[str, float]:
    """How often each agent wrote each position, on average (1 is optimal for Alice; 0 while
    unsolved means ignoring the partner; 4 and more is over-correction)."""
    return {f"actions_per_position.{r}": sum(c) / len(c) for r, c in writes.items()}


def position_metrics(writes: dict[str, list[int]], progress: dict[str, int]) -> dict[str, Any]:
    """Per agent, how often it wrote each position and how many positions it got right."""
    return {
        "position_actions": {r: list(c) for r, c in writes.items()},
        "correct_positions": progress,
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


class Format1:
    """How a position game's results were written by results format 1: its parameters were flat
    fields of the game spec (``param_names``), and its figures were fields of the record."""

    def __init__(self, param_names: tuple[str, ...]) -> None:
        self.param_names = param_names

    def params(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The game's parameters from the old flat fields (values, or lists of values in a grid)."""
        return {name: fields[name] for name in self.param_names if name in fields}

    def figures(self, record: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]:
        """(scores, metrics, the old record fields they replace)."""
        scores = {f"actions_per_position.{r}": v for r, v in record.get("actions_per_position", {}).items()}
        metrics = {k: record[k] for k in ("position_actions", "correct_positions") if record.get(k)}
        return scores, metrics, ("actions_per_position", "position_actions", "correct_positions")
