"""AsymPuzl in a replay: the truth as color and shape per position, each agent's clues, and each
agent's hypothesis against the truth after its turns (``puzzles.positions.replay``)."""

from __future__ import annotations

from ..positions.replay import PositionReplay
from .rules import AsymPuzlGame, Piece, Replace


def _piece(piece: Piece) -> str:
    return f"{piece.color or '?'} {piece.shape}"


def _clues(state: AsymPuzlGame, role: str) -> str:
    return ", ".join(f"{p.color} {p.shape}" if p.color else p.shape for p in state.private(role))


def _action(action: Replace) -> str:
    return f"{action.position} ← {action.color} {action.shape}"


REPLAY = PositionReplay(lambda state: (state.truth, state.hypotheses()), _piece, _clues, _action)
