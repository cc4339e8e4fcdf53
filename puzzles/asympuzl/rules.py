"""AsymPuzl: the two-agent shape/color/position puzzle. Pure, synchronous, deterministic.

Ground truth: N pieces (shape, color), N distinct shapes and N distinct colors. Alice's clues are the
shapes in position order with colors unknown; Bob's clues are the true shape-color pairs in a seeded
random order. Distractors are pieces outside the truth added to one agent's clues.

Choices where the papers are silent:
- Positions are 1-based, as in the prompts.
- A working hypothesis always has N positions. It starts as a copy of the first N clues (with
  distractors the clues hold N + D pieces, so the copy can start with a distractor in it).
- Bob's shuffled clues are never in the true order (re-shuffled if they are), so that neither agent
  starts out solved; for N = 2 this makes Bob's order always the reversed truth.
- Alice's unknown colors are ``None``; a replace action must name a shape and a color, both from the
  vocabulary, so an unknown color can never be written back.
"""

from __future__ import annotations

import random
from typing import Final, Literal, get_args

import msgspec

from ..base import InvalidParameter, Step
from ..turn import Rejected
from ..positions.rules import PositionGame
from ..positions.vocab import COLOR_SET, COLORS, SHAPE_SET, SHAPES

ALICE: Final = "alice"
BOB: Final = "bob"
ROLES: tuple[str, str] = (ALICE, BOB)
SOLO = "solo"  # the single-agent check: one agent holds both views
ROLE_NAMES = {ALICE: "Alice", BOB: "Bob", SOLO: "You"}

DistractorSide = Literal["alice", "bob"]

MIN_SIZE = 2
MAX_PIECES = min(len(SHAPES), len(COLORS))
MAX_DISTRACTORS = 10


class Piece(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A shape with its color; ``color`` is None where the agent does not know it."""

    shape: str
    color: str | None


class Replace(msgspec.Struct, frozen=True, gc=False):
    """Put ``Piece(shape, color)`` at ``position`` (1-based) of the acting agent's hypothesis."""

    position: int
    shape: str
    color: str


class Puzzle(msgspec.Struct, frozen=True):
    size: int
    truth: tuple[Piece, ...]
    clues: dict[str, tuple[Piece, ...]]
    distractors: int = 0
    distractors_in: DistractorSide = ALICE

    def role_clues(self, role: str) -> tuple[Piece, ...]:
        """A role's clues; the solo agent gets Alice's clues followed by Bob's."""
        if role == SOLO:
            return self.clues[ALICE] + self.clues[BOB]
        return self.clues[role]

    def initial_hypothesis(self, role: str) -> tuple[Piece, ...]:
        """The first N clues (the solo agent starts from Alice's)."""
        return self.clues[ALICE if role == SOLO else role][: self.size]


PromptStyle = Literal["paper", "guided"]
PROMPTS: tuple[str, ...] = get_args(PromptStyle)


class AsymView(msgspec.Struct, frozen=True, gc=False):
    """What one agent sees on its turn: the puzzle's size, its clues and its working hypothesis, and
    the prompt they are shown in (``puzzles.asympuzl.prompt``)."""

    size: int
    clues: tuple[Piece, ...]
    hypothesis: tuple[Piece, ...]
    prompt: PromptStyle = "paper"


def check_params(size: int, distractors: int = 0, distractors_in: str = ALICE) -> None:
    """Raise InvalidParameter with a one-line reason if the puzzle parameters are out of range."""
    if not isinstance(size, int) or size < MIN_SIZE:
        raise InvalidParameter("size", f"size must be an integer >= {MIN_SIZE}, got {size!r}")
    if not isinstance(distractors, int) or not 0 <= distractors <= MAX_DISTRACTORS:
        raise InvalidParameter(
            "distractors", f"distractors must be between 0 and {MAX_DISTRACTORS}, got {distractors!r}"
        )
    if size + distractors > MAX_PIECES:
        raise InvalidParameter(
            "size",
            f"size + distractors must be at most {MAX_PIECES} (the vocabulary size), "
            f"got {size} + {distractors}",
        )
    if distractors_in not in ROLES:
        raise InvalidParameter(
            "distractors_in", f"distractors_in must be one of {', '.join(ROLES)}, got {distractors_in!r}"
        )


def generate(size: int, seed: int, distractors: int = 0, distractors_in: DistractorSide = ALICE) -> Puzzle:
    """The puzzle for ``seed``: the same arguments always give the same puzzle."""
    check_params(size, distractors, distractors_in)
    rng = random.Random(seed)
    shapes = rng.sample(SHAPES, size + distractors)
    colors = rng.sample(COLORS, size + distractors)
    truth = tuple(Piece(s, c) for s, c in zip(shapes[:size], colors[:size]))
    extra = [Piece(s, c) for s, c in zip(shapes[size:], colors[size:])]

    alice_pieces = [Piece(p.shape, None) for p in truth]
    bob_pieces = list(truth)
    if distractors and distractors_in == ALICE:
        # Distractors at random places, real pieces keeping their relative order.
        slots = set(rng.sample(range(size + distractors), distractors))
        real, fake = iter(alice_pieces), iter(Piece(p.shape, None) for p in extra)
        alice_pieces = [next(fake) if i in slots else next(real) for i in range(size + distractors)]
    elif distractors:
        bob_pieces += extra
    rng.shuffle(bob_pieces)
    while tuple(bob_pieces[:size]) == truth:  # Bob must not start out solved
        rng.shuffle(bob_pieces)
    return Puzzle(
        size=size,
        truth=truth,
        clues={ALICE: tuple(alice_pieces), BOB: tuple(bob_pieces)},
        distractors=distractors,
        distractors_in=distractors_in,
    )


def check_action(action: Replace, size: int) -> str | None:
    """Why ``action`` is invalid for a puzzle of ``size`` positions, or None if it is valid."""
    if not 1 <= action.position <= size:
        return f"position {action.position} is out of range 1..{size}"
    if action.shape not in SHAPE_SET:
        return f"unknown shape {action.shape!r}"
    if action.color not in COLOR_SET:
        return f"unknown color {action.color!r}"
    return None


def describe_action(action: Replace) -> str:
    return f"replace position {action.position} by the {action.color} {action.shape}"


def apply_actions(
    hypothesis: tuple[Piece, ...], actions: tuple[Replace, ...]
) -> tuple[tuple[Piece, ...], tuple[tuple[int, Piece, Piece], ...], tuple[Rejected, ...]]:
    """Apply the valid actions in order; return the new hypothesis, each write as (position, the
    piece that was there, the piece written), and the rejected actions."""
    size = len(hypothesis)
    pieces = list(hypothesis)
    written: list[tuple[int, Piece, Piece]] = []
    rejected: list[Rejected] = []
    for action in actions:
        reason = check_action(action, size)
        if reason is None:
            new = Piece(action.shape, action.color)
            written.append((action.position, pieces[action.position - 1], new))
            pieces[action.position - 1] = new
        else:
            rejected.append(Rejected(describe_action(action), reason))
    return tuple(pieces), tuple(written), tuple(rejected)


def is_solved(hypothesis: tuple[Piece, ...], truth: tuple[Piece, ...]) -> bool:
    return hypothesis == truth


# ---- Text renderings used by prompts ----


def render_piece(position: int, piece: Piece) -> str:
    color = piece.color if piece.color is not None else "of unknown color"
    return f"Position {position}: the {piece.shape} is {color}."


def render_pieces(pieces: tuple[Piece, ...]) -> str:
    return "\n".join(render_piece(i, p) for i, p in enumerate(pieces, start=1))


def render_clues(role: str, clues: tuple[Piece, ...], size: int) -> str:
    """An agent's clues with a line saying what they mean."""
    if role == SOLO:
        positions = tuple(p for p in clues if p.color is None)
        pairs = tuple(p for p in clues if p.color is not None)
        return (
            render_clues(ALICE, positions, size)
            + "\n\nYou also see the correct shape-color pairs, in random order:\n"
            + render_pieces(pairs)
        )
    if role == ALICE:
        head = (
            f"You see the correct shape at each position, but not the colors. "
            f"The puzzle has {size} positions"
        )
    else:
        head = (
            f"You see the correct shape-color pairs, but in random order. "
            f"The puzzle has {size} positions"
        )
    if len(clues) > size:
        head += f"; {len(clues) - size} of the {len(clues)} pieces below are not part of the puzzle"
    return head + ".\n" + render_pieces(clues)


class AsymPuzlGame(PositionGame):
    """One AsymPuzl game in progress: the puzzle, every role's hypothesis and the action counts.
    ``roles`` is Alice and Bob, or ``(SOLO,)`` for the single-agent check; ``prompt`` is the prompt
    the agents are shown their views in."""

    def __init__(
        self, puzzle: Puzzle, max_turns: int, roles: tuple[str, ...] = ROLES, prompt: PromptStyle = "paper",
    ) -> None:
        self.puzzle = puzzle
        self.truth = puzzle.truth
        self.max_turns = max_turns
        self.roles = roles
        self.prompt = prompt
        self._hypotheses = {role: puzzle.initial_hypothesis(role) for role in self.roles}
        self._start_counts(puzzle.size)

    def view(self, role: str) -> AsymView:
        return AsymView(self.puzzle.size, self.puzzle.role_clues(role), self._hypotheses[role], self.prompt)

    def private(self, role: str) -> tuple[Piece, ...]:
        return self.puzzle.role_clues(role)

    def step(self, role: str, actions: tuple[Replace, ...]) -> Step:
        hypothesis, written, rejected = apply_actions(self._hypotheses[role], actions)
        self._hypotheses[role] = hypothesis
        for position, before, after in written:
            self._wrote(role, position, before, after)
        return Step(applied=len(written), rejected=rejected)
