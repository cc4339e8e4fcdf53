"""The environment verifiers (§3.2): pure checks of one candidate action, and the choice among
sampled candidates (the first that passes, else the least costly, the first of ties).

``error_cost(state, role, action, verifier)`` is 0 when the action passes, else the steps the
reference says it wastes: 2 for an ask, 1 for anything else. Faithful by default; the game's
``fix_*`` parameters close the three gaps the spec notes:

- affordance: passes everything but moves; a move passes when both bins are within reach, the block
  is in the named source bin and the bins differ. Gap: a reply that could not be read passes
  (``fix_affordance`` rejects it).
- communication: passes a pass, every move, every ask, and a share of an explicit item not marked
  shared (the marks as the player's last step left them); rejects other shares and unreadable
  replies. Gap: the ask check compares a block with bins, so every ask passes
  (``fix_communication`` rejects asks about blocks whose bin the player can infer, or that do not
  exist). Not for ``none`` mode.
- reasoning: with a non-empty valid set (§2.5, without the ask-mode answers), exactly its members;
  with an empty one, a pass or a physically possible move. Gap: it never accepts an ask-mode answer
  (``fix_reasoning`` adds the answers).
"""

from __future__ import annotations

from typing import Any

from .actions import Ask, Move, Pass, Share, Unreadable
from .knowledge import compact
from .validity import physical_problems

VERIFIERS = ("none", "affordance", "communication", "reasoning")


def _cost(action: Any) -> int:
    return 2 if isinstance(action, Ask) else 1


def error_cost(state: Any, role: str, action: Any, verifier: str) -> int:
    """0 if ``verifier`` passes ``action`` of ``role`` in ``state`` (an ``EinsteinGame``), else its
    cost. Never changes the state."""
    params = state.params
    if verifier == "none":
        return 0
    if verifier == "affordance":
        if isinstance(action, Move):
            return _cost(action) if physical_problems(role, state.board, action) else 0
        if isinstance(action, Unreadable) and params.fix_affordance:
            return _cost(action)
        return 0
    if verifier == "communication":
        if isinstance(action, (Pass, Move)):
            return 0
        if isinstance(action, Ask):
            n = state.instance.n
            if params.fix_communication and (action.block >= n or state.minds[role].know[action.block] < 4):
                return _cost(action)
            return 0
        if isinstance(action, Share):
            item = compact(action.item)
            ok = item is not None and item in state.explicit_items(role) and item not in state.marked(role, now=False)
            return 0 if ok else _cost(action)
        return _cost(action)
    if verifier == "reasoning":
        if isinstance(action, Unreadable):
            return _cost(action)
        valid = state.valid(role, answers=params.fix_reasoning and params.seek_answers)
        if valid:
            return 0 if action in valid else _cost(action)
        if isinstance(action, Pass):
            return 0
        if isinstance(action, Move) and not physical_problems(role, state.board, action):
            return 0
        return _cost(action)
    raise ValueError(f"unknown verifier {verifier!r}")


def choose_candidate(state: Any, role: str, candidates: tuple[tuple[Any, ...], ...]) -> tuple[int, dict]:
    """(the index of the candidate to play, the step's record). Each candidate is one parsed reply's
    actions; its first action is the one judged (none: an unreadable reply)."""
    if not candidates:
        raise ValueError("choose needs at least one candidate")
    actions = [c[0] if c else Unreadable("") for c in candidates]
    errors = [error_cost(state, role, a, state.params.verifier) for a in actions]
    for i, err in enumerate(errors):
        if err == 0:
            chosen, sum_err, corrected = i, sum(errors[: i + 1]), i != 0
            break
    else:
        chosen, sum_err, corrected = errors.index(min(errors)), sum(errors), False
    record = {"candidates": len(candidates), "chosen": chosen, "corrected": corrected, "sum_err": sum_err, "errors": errors}
    return chosen, record


class VerifierLog:
    """The verifier's choices over one player's steps."""

    def __init__(self) -> None:
        self.records: list[dict] = []

    def record(self, record: dict) -> None:
        self.records.append(record)

    @property
    def corrected(self) -> int:
        return sum(r["corrected"] for r in self.records)

    def summary(self) -> dict[str, Any]:
        return {
            "steps": len(self.records),
            "corrected": self.corrected,
            "sum_err": sum(r["sum_err"] for r in self.records),
            "chosen": [r["chosen"] for r in self.records],
            "candidates": [r["candidates"] for r in self.records],
        }


__all__ = ["VERIFIERS", "VerifierLog", "choose_candidate", "error_cost"]
