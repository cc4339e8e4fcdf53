"""Independent reference computations for the Einstein tests: a brute-force solver over goal
layouts, and a game loop driving scripted players without the engine."""

from __future__ import annotations

import itertools
import random

from puzzles.turn import TurnContext
from puzzles.einstein.game import GAME
from puzzles.testing import run_now

# Destination bins as (row, column): the spec's geometry, written out again here.
GEOMETRY = {"top_left_bin": (0, 0), "top_right_bin": (0, 1), "bottom_left_bin": (1, 0), "bottom_right_bin": (1, 1)}
NUMBER = {"top_left_bin": 0, "bottom_left_bin": 1, "top_right_bin": 2, "bottom_right_bin": 3}  # the ID's goal digit
NAME = {v: k for k, v in NUMBER.items()}


def holds(kind: str, a: str, b: str) -> bool:
    """Whether bins ``a`` and ``b`` stand in relation ``kind`` (spec §1.1)."""
    (ra, ca), (rb, cb) = GEOMETRY[a], GEOMETRY[b]
    return {
        "bin": ra == rb and ca == cb,
        "row": ra == rb and ca != cb,
        "column": ra != rb and ca == cb,
        "diagonal": ra != rb and ca != cb,
    }[kind]


def layouts(n: int, groundings=(), relations=()):
    """Every goal layout (a bin name per block) satisfying the constraints: ``groundings`` (block,
    bin name), ``relations`` (a, b, kind)."""
    for layout in itertools.product(GEOMETRY, repeat=n):
        if all(layout[b] == bin_ for b, bin_ in groundings) and all(holds(k, layout[a], layout[b]) for a, b, k in relations):
            yield layout


def determined(n: int, groundings=(), relations=()) -> list[str | None]:
    """Per block, the bin every satisfying layout agrees on, or None."""
    found = list(layouts(n, groundings, relations))
    return [found[0][b] if len({lay[b] for lay in found}) == 1 else None for b in range(n)]


def play(params, seed: int, strategies, *, max_turns: int = 15, hook=None):
    """A game with scripted players, stepped directly (no referee, no engine); ``hook(state, role,
    action)`` is called before each step. Returns the final state."""
    state = GAME.rules.new(params, seed, ("player1", "player2"), max_turns)
    if isinstance(strategies, str):
        strategies = {"player1": strategies, "player2": strategies}
    policies = {r: GAME.rules.scripted[strategies[r]](r, random.Random(f"{seed}:{r}")) for r in state.roles}
    while not state.done():
        role = state.roles[state.steps % 2]
        context = TurnContext(
            game_id=0, role=role, turn=state.steps // 2 + 1, max_turns=max_turns, view=state.view(role),
            feedback=None, conversation=(),
        )
        reply = GAME.faces.prompter.parse(run_now(policies[role].reply(context)).text, context)
        if hook is not None:
            hook(state, role, reply.actions[0])
        state.step(role, reply.actions)
    return state
