"""The chain puzzle in a replay: the truth as one value per attribute at each position, each agent's
link (the first agent's values in position order, the others' pairs), and each agent's hypothesis
against the truth after its turns (``puzzles.positions.replay``)."""

from __future__ import annotations

from ..positions.replay import PositionReplay
from .rules import ChainGame, ChainReplace, Item


def _item(item: Item) -> str:
    return " ".join(value or "?" for value in item)


def _clues(state: ChainGame, role: str) -> str:
    known = [[value for value in item if value is not None] for item in state.private(role)]
    return ", ".join(" → ".join(values) for values in known)


def _action(action: ChainReplace) -> str:
    return f"{action.position} ← {' '.join(action.values)}"


REPLAY = PositionReplay(lambda state: (state.truth, state.hypotheses()), _item, _clues, _action)
