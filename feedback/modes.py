"""The six feedback modes as pure functions of the game state for one role.

The state is the truth and every role's current hypothesis. Each agent's feedback is computed when it is
prompted, so it describes the hypotheses as they are at that moment (for Bob that includes Alice's
actions of the same turn).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from puzzles.asympuzl import Feedback, Piece, RoleStatus, wrong_positions

Hypotheses = Mapping[str, tuple[Piece, ...]]
FeedbackFn = Callable[[tuple[Piece, ...], Hypotheses, str], Feedback]


def _status(truth: tuple[Piece, ...], hypotheses: Hypotheses, role: str, detailed: bool) -> RoleStatus:
    wrong = wrong_positions(hypotheses[role], truth)
    return RoleStatus(role=role, solved=not wrong, wrong=wrong if detailed else None)


def _others(truth: tuple[Piece, ...], hypotheses: Hypotheses, role: str, detailed: bool) -> tuple[RoleStatus, ...]:
    return tuple(_status(truth, hypotheses, r, detailed) for r in hypotheses if r != role)


def none(truth: tuple[Piece, ...], hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="none")


def own(truth: tuple[Piece, ...], hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="own", own=_status(truth, hypotheses, role, detailed=False))


def own_detailed(truth: tuple[Piece, ...], hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="own_detailed", own=_status(truth, hypotheses, role, detailed=True))


def joint(truth: tuple[Piece, ...], hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(mode="joint", joint_solved=all(h == truth for h in hypotheses.values()))


def both(truth: tuple[Piece, ...], hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(
        mode="both",
        own=_status(truth, hypotheses, role, detailed=False),
        others=_others(truth, hypotheses, role, detailed=False),
    )


def both_detailed(truth: tuple[Piece, ...], hypotheses: Hypotheses, role: str) -> Feedback:
    return Feedback(
        mode="both_detailed",
        own=_status(truth, hypotheses, role, detailed=True),
        others=_others(truth, hypotheses, role, detailed=True),
    )


MODES: dict[str, FeedbackFn] = {
    "none": none,
    "own": own,
    "own_detailed": own_detailed,
    "joint": joint,
    "both": both,
    "both_detailed": both_detailed,
}


def feedback_mode(name: str) -> FeedbackFn:
    """The mode called ``name`` (hyphens allowed); ValueError naming the choices otherwise."""
    key = name.replace("-", "_")
    try:
        return MODES[key]
    except KeyError:
        raise ValueError(f"unknown feedback mode {name!r}; choose from {', '.join(MODES)}") from None
