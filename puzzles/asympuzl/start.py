"""How a game of asympuzl starts: the puzzle of a seed, as the rules' ``new`` (apart from the rules so
that the game's parameters and its analyses can both use it)."""

from __future__ import annotations

from .params import AsymPuzlParams
from .rules import AsymPuzlGame, generate


def new_game(params: AsymPuzlParams, seed: int, roles: tuple[str, ...], max_turns: int) -> AsymPuzlGame:
    """The game of ``seed`` as it starts (the rules' ``new``)."""
    puzzle = generate(params.size, seed, params.distractors, params.distractors_in)
    return AsymPuzlGame(puzzle, max_turns, roles, params.prompt)
