"""How a game of chain starts: the puzzle of a seed, as the rules' ``new`` (apart from the rules so
that the game's parameters and its analyses can both use it)."""

from __future__ import annotations

from .params import ChainParams
from .rules import ChainGame, generate_chain


def new_game(params: ChainParams, seed: int, roles: tuple[str, ...], max_turns: int) -> ChainGame:
    """The game of ``seed`` as it starts (the rules' ``new``); the roles must be the puzzle's."""
    puzzle = generate_chain(params.size, len(roles), seed)
    if tuple(roles) != puzzle.roles:
        raise ValueError(f"the chain puzzle's roles are {', '.join(puzzle.roles)}, got {', '.join(roles)}")
    return ChainGame(puzzle, max_turns)
