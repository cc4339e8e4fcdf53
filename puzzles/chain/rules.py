"""AsymPuzl for K agents (2 to 4): each agent holds one link of a chain of attributes.

Every position has K attributes: shape, color, pattern, material (the first K). Agent 0 (Alice) knows
the shape at each position; agent i knows, for every piece, attribute i-1 -> attribute i (Bob: shape
-> color, Carol: color -> pattern, Dave: pattern -> material), listed in a seeded random order. No
K-1 agents can solve it without the last one. Every agent's working hypothesis is the full truth to
reconstruct: each position with all K attributes; it starts as a copy of the agent's clues, unknown
attributes empty. The game is solved when every agent's hypothesis equals the truth.

With K = 2 this is the two-agent shape/color game under another name.
"""

from __future__ import annotations

import random

import msgspec

from ..base import InvalidParameter, Step
from ..turn import Rejected
from ..positions.rules import PositionGame
from ..positions.vocab import COLORS, MATERIALS, PATTERNS, SHAPES

ATTRIBUTES: tuple[str, ...] = ("shape", "color", "pattern", "material")
VOCABULARIES: dict[str, tuple[str, ...]] = {
    "shape": SHAPES, "color": COLORS, "pattern": PATTERNS, "material": MATERIALS,
}
VOCABULARY_SETS = {name: frozenset(words) for name, words in VOCABULARIES.items()}
CHAIN_ROLES: tuple[str, ...] = ("alice", "bob", "carol", "dave")
MAX_AGENTS = len(ATTRIBUTES)
MIN_SIZE = 2

Item = tuple[str | None, ...]  # one position: K attribute values, None where unknown


class ChainReplace(msgspec.Struct, frozen=True, gc=False):
    """Put ``values`` (one per attribute) at ``position`` (1-based)."""

    position: int
    values: tuple[str, ...]

    def as_by(self) -> dict[str, str]:
        return dict(zip(ATTRIBUTES, self.values))


class ChainView(msgspec.Struct, frozen=True, gc=False):
    """What one agent sees on its turn: the size, the attributes in play, its clues and its hypothesis."""

    size: int
    attributes: tuple[str, ...]
    clues: tuple[Item, ...]
    hypothesis: tuple[Item, ...]


class ChainPuzzle(msgspec.Struct, frozen=True):
    size: int
    agents: int
    truth: tuple[Item, ...]
    clues: dict[str, tuple[Item, ...]]

    @property
    def roles(self) -> tuple[str, ...]:
        return CHAIN_ROLES[: self.agents]

    @property
    def attributes(self) -> tuple[str, ...]:
        return ATTRIBUTES[: self.agents]


def check_chain_params(size: int, agents: int) -> None:
    if not isinstance(size, int) or size < MIN_SIZE:
        raise InvalidParameter("size", f"size must be an integer >= {MIN_SIZE}, got {size!r}")
    if size > min(len(v) for v in VOCABULARIES.values()):
        raise InvalidParameter("size", f"size must be at most 40 for the chain puzzle, got {size}")
    if not 2 <= agents <= MAX_AGENTS:
        raise InvalidParameter("agents", f"the chain puzzle takes 2 to {MAX_AGENTS} agents, got {agents}")


def generate_chain(size: int, agents: int, seed: int) -> ChainPuzzle:
    """The same arguments always give the same puzzle."""
    check_chain_params(size, agents)
    rng = random.Random(seed)
    attributes = ATTRIBUTES[:agents]
    columns = [rng.sample(VOCABULARIES[name], size) for name in attributes]
    truth = tuple(tuple(column[j] for column in columns) for j in range(size))
    clues: dict[str, tuple[Item, ...]] = {}
    for i, role in enumerate(CHAIN_ROLES[:agents]):
        if i == 0:
            clues[role] = tuple((item[0],) + (None,) * (agents - 1) for item in truth)
            continue
        links = [tuple(v if k in (i - 1, i) else None for k, v in enumerate(item)) for item in truth]
        rng.shuffle(links)
        while [link[i] for link in links] == [item[i] for item in truth]:  # never start in order
            rng.shuffle(links)
        clues[role] = tuple(links)
    return ChainPuzzle(size=size, agents=agents, truth=truth, clues=clues)


def check_chain_action(action: ChainReplace, size: int, attributes: tuple[str, ...]) -> str | None:
    if not 1 <= action.position <= size:
        return f"position {action.position} is out of range 1..{size}"
    for name, value in zip(attributes, action.values):
        if value not in VOCABULARY_SETS[name]:
            return f"unknown {name} {value!r}"
    return None


def render_item(position: int, item: Item, attributes: tuple[str, ...]) -> str:
    known = ", ".join(f"{name} {value}" for name, value in zip(attributes, item) if value is not None)
    unknown = [name for name, value in zip(attributes, item) if value is None]
    text = f"Position {position}: {known}"
    return text + (f" ({', '.join(unknown)} unknown)." if unknown else ".")


class ChainGame(PositionGame):
    """One chain game in progress (a ``puzzles.base.GameState``)."""

    def __init__(self, puzzle: ChainPuzzle, max_turns: int) -> None:
        self.puzzle = puzzle
        self.truth = puzzle.truth
        self.max_turns = max_turns
        self.roles = puzzle.roles
        self._hypotheses = {role: puzzle.clues[role] for role in self.roles}
        self._start_counts(puzzle.size)

    def view(self, role: str) -> ChainView:
        return ChainView(self.puzzle.size, self.puzzle.attributes, self.puzzle.clues[role], self._hypotheses[role])

    def private(self, role: str) -> tuple[Item, ...]:
        return self.puzzle.clues[role]

    def step(self, role: str, actions: tuple[ChainReplace, ...]) -> Step:
        items = list(self._hypotheses[role])
        applied = 0
        rejected = []
        for action in actions:
            reason = check_chain_action(action, self.puzzle.size, self.puzzle.attributes)
            if reason is None:
                before, items[action.position - 1] = items[action.position - 1], tuple(action.values)
                self._wrote(role, action.position, before, items[action.position - 1])
                applied += 1
            else:
                rejected.append(Rejected(f"replace position {action.position} by {', '.join(action.values)}", reason))
        self._hypotheses[role] = tuple(items)
        return Step(applied=applied, rejected=tuple(rejected))
