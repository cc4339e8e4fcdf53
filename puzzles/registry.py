"""The puzzles the engine can play: for each, how to set up one game from its spec.

The engine looks puzzles up here by ``spec.puzzle`` and knows nothing else about them. A kit is
built from a game spec (anything with ``seed``, ``size``, ``distractors``, ``distractors_in``,
``max_turns`` and ``agents``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from .asympuzl import ROLES, SOLO, AsymPuzlGame, generate
from .base import GameRules
from .chain import CHAIN_ROLES, ChainGame, ChainReplace, generate_chain
from .replies import parse_reply


class GameKit(NamedTuple):
    """What the engine needs from a puzzle to set up one game."""

    game: GameRules  # the state: roles in turn order, apply, solved
    truth: Any  # for the feedback modes
    size: int
    parse: Callable[..., Any]  # reply text -> Reply; takes ``optional`` top-level field names
    kind: str  # shown to policies as TurnContext.puzzle


def asympuzl_kit(spec: Any, roles: tuple[str, ...] = ROLES) -> GameKit:
    puzzle = generate(spec.size, spec.seed, spec.distractors, spec.distractors_in)
    game = AsymPuzlGame(puzzle, spec.max_turns, roles)
    return GameKit(game, puzzle.truth, puzzle.size, parse_reply, "asympuzl")


def chain_kit(spec: Any) -> GameKit:
    puzzle = generate_chain(spec.size, len(spec.agents), spec.seed)
    if tuple(spec.agents) != puzzle.roles:
        raise ValueError(f"the chain puzzle's roles are {', '.join(puzzle.roles)}, got {', '.join(spec.agents)}")
    parse = functools.partial(parse_reply, attributes=puzzle.attributes, make_action=ChainReplace)
    return GameKit(ChainGame(puzzle, spec.max_turns), puzzle.truth, puzzle.size, parse, "chain")


KITS: dict[str, Callable[[Any], GameKit]] = {
    "asympuzl": asympuzl_kit,
    "asympuzl_solo": lambda spec: asympuzl_kit(spec, (SOLO,)),
    "chain": chain_kit,
}


def puzzle_roles(puzzle: str, agents: int) -> tuple[str, ...]:
    """The roles of a puzzle, in turn order; the chain puzzle has as many as there are agents."""
    if puzzle == "chain":
        return CHAIN_ROLES[:agents]
    return (SOLO,) if puzzle == "asympuzl_solo" else ROLES
