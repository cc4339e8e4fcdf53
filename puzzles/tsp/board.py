"""Traveling Adventurers boards: the rooms, each player's private coin weights on every hallway (edge),
the six fixed boards of the paper's self-play study and the generated boards of its human study
(spec ``tsp.md`` §1).

The two players are ``light`` (the paper's USER, who moves first) and ``ghost`` (the paper's BOT).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import msgspec

from .solver import solve

LIGHT = "light"
GHOST = "ghost"
ROLES = (LIGHT, GHOST)

# The code's order for 4, 5 and 6 rooms, then the human study's garden and play room.
ROOM_ORDER = ("L", "E", "K", "B", "C", "A", "G", "P")
# The order in which the prompt lists the rooms.
DISPLAY_ORDER = ("L", "B", "E", "K", "C", "A", "G", "P")
ROOM_NAMES = {
    "L": "a well-lit living room",
    "B": "a dark, spooky bathroom",
    "E": "an empty room with no windows",
    "K": "a pristine kitchen",
    "C": "a children's room",
    "A": "an attic",
    "G": "a garden",
    "P": "a play room",
}
MIN_ROOMS = 3
MAX_ROOMS = len(ROOM_ORDER)

Edge = tuple[str, str]
WeightedEdge = tuple[str, str, int]


def rooms_for(n: int) -> tuple[str, ...]:
    """The first n rooms of ``ROOM_ORDER``, n from 3 to 8."""
    if not MIN_ROOMS <= n <= MAX_ROOMS:
        raise ValueError(f"a board has {MIN_ROOMS} to {MAX_ROOMS} rooms, not {n}")
    return ROOM_ORDER[:n]


def canonical_edges(rooms: tuple[str, ...]) -> tuple[Edge, ...]:
    """Every pair (rooms[i], rooms[j]) with i < j, in the order of the room tuple."""
    return tuple((a, b) for i, a in enumerate(rooms) for b in rooms[i + 1:])


class Board(msgspec.Struct, frozen=True, dict=True):
    """``rooms``: a prefix of ``ROOM_ORDER``. ``weights``: role -> one (r1, r2, w) per undirected edge,
    each edge exactly once, in the stored order (the spec's order for the paper boards). ``source``:
    where the board comes from, e.g. "paper:3" or "generated"."""

    rooms: tuple[str, ...]
    weights: dict[str, tuple[WeightedEdge, ...]]
    source: str

    @functools.cached_property
    def _lookup(self) -> dict[str, dict[Edge, int]]:
        """role -> edge -> weight, both orientations; built once per board."""
        table: dict[str, dict[Edge, int]] = {}
        for role, edges in self.weights.items():
            own = table[role] = {}
            for a, b, w in edges:
                own[a, b] = own[b, a] = w
        return table

    def weight(self, role: str, a: str, b: str) -> int:
        """The role's weight on the hallway between a and b, either way round; KeyError if not an edge."""
        return self._lookup[role][a, b]

    def joint(self, a: str, b: str) -> int:
        """The sum of both roles' weights on the hallway between a and b."""
        return sum(own[a, b] for own in self._lookup.values())

    def weigher(self, role: str) -> Callable[[str, str], int]:
        """The role's weight as a function (a, b) -> int, for the solver."""
        return functools.partial(self.weight, role)

    def edges(self) -> tuple[Edge, ...]:
        """All edges in the canonical order of the room tuple (``canonical_edges``)."""
        return canonical_edges(self.rooms)

    def check(self) -> None:
        """ValueError unless each role has exactly one integer weight per undirected edge of the rooms."""
        wanted = {frozenset(edge) for edge in self.edges()}
        for role, edges in self.weights.items():
            seen = [frozenset((a, b)) for a, b, _ in edges]
            if len(seen) != len(set(seen)) or set(seen) != wanted:
                raise ValueError(f"{role}'s weights do not cover each edge of {self.rooms} exactly once")
            if not all(isinstance(w, int) for _, _, w in edges):
                raise ValueError(f"{role}'s weights are not all integers")


# The paper's three distinct weight pairs (boards 1, 3 and 5; boards 2, 4 and 6 swap the roles).
PAPER_ROOMS = rooms_for(6)
PAPER_EDGE_ORDER: tuple[Edge, ...] = (
    ("L", "E"), ("L", "B"), ("L", "K"), ("L", "C"), ("L", "A"), ("E", "B"), ("E", "K"), ("E", "C"),
    ("E", "A"), ("B", "K"), ("B", "C"), ("B", "A"), ("K", "C"), ("K", "A"), ("C", "A"),
)
_PAPER_PAIRS: dict[int, tuple[str, str]] = {  # odd board -> (BOT/ghost weights, USER/light weights)
    1: ("6 4 2 1 5 3 1 2 6 5 4 3 6 2 1", "5 3 1 6 2 4 6 1 3 2 5 6 3 4 1"),
    3: ("4 6 1 3 5 2 3 5 6 4 1 2 6 5 3", "1 6 5 4 3 2 6 1 5 4 2 3 1 2 6"),
    5: ("3 5 6 4 2 1 3 5 6 2 1 4 3 6 5", "2 5 3 6 1 4 5 2 3 6 1 4 5 3 2"),
}
PAPER_BOARDS = tuple(range(1, 7))


def _paper_edges(numbers: str) -> tuple[WeightedEdge, ...]:
    return tuple((a, b, int(w)) for (a, b), w in zip(PAPER_EDGE_ORDER, numbers.split(), strict=True))


def paper_board(k: int) -> Board:
    """Board k (1 to 6) of the paper's self-play study: odd k as listed, even k the roles swapped."""
    if k not in PAPER_BOARDS:
        raise ValueError(f"the paper has boards 1 to 6, not {k}")
    bot, user = _PAPER_PAIRS[k if k % 2 else k - 1]
    if k % 2 == 0:
        bot, user = user, bot
    return Board(PAPER_ROOMS, {LIGHT: _paper_edges(user), GHOST: _paper_edges(bot)}, f"paper:{k}")


def board_for_seed(seed: int, mode: str = "random") -> int:
    """The paper board (1 to 6) a game plays: drawn from the seed, or cycling through 1..6 ("balanced")."""
    if mode == "random":
        return 1 + random.Random(seed).randrange(len(PAPER_BOARDS))
    if mode == "balanced":
        return 1 + seed % len(PAPER_BOARDS)
    raise ValueError(f"board mode is 'random' or 'balanced', not {mode!r}")


def target_sum(n_edges: int, weight_max: int = 10) -> int:
    """Each player's total weight on a generated board: floor((1 + weight_max) * |E| / 2)."""
    return (1 + weight_max) * n_edges // 2


def draw_weights(edges: tuple[Edge, ...], rng: random.Random, deviation: int, weight_max: int) -> tuple[WeightedEdge, ...]:
    """One player's weights (spec §1.4): edge by edge, uniform within ``deviation`` of the remaining
    mean, intersected with the bounds that keep the remaining edges feasible."""
    remaining = target_sum(len(edges), weight_max)
    drawn: list[WeightedEdge] = []
    for k, (a, b) in enumerate(edges):
        left = len(edges) - k  # edges still to weigh, this one included
        if left == 1:
            drawn.append((a, b, remaining))
            break
        feasible_lo = max(1, remaining - weight_max * (left - 1))
        feasible_hi = min(weight_max, remaining - (left - 1))
        lo = max(feasible_lo, (remaining - deviation * left) // left)  # floor(R/m - d)
        hi = min(feasible_hi, -((-remaining - deviation * left) // left))  # ceil(R/m + d)
        if lo > hi:
            lo, hi = feasible_lo, feasible_hi
        w = rng.randint(lo, hi)
        drawn.append((a, b, w))
        remaining -= w
    return tuple(drawn)


MAX_FILTER_ATTEMPTS = 1000


def generated_board(rooms: int, seed: int, *, deviation: int = 3, weight_max: int = 10, filtered: bool = False) -> Board:
    """A human-study board on the first ``rooms`` rooms, deterministic by the arguments. With ``filtered``,
    boards are redrawn until no tour that is optimal for one player's own weights is jointly optimal."""
    room_tuple = rooms_for(rooms)
    edges = canonical_edges(room_tuple)
    if weight_max < 1 or deviation < 0:
        raise ValueError("weight_max must be at least 1 and deviation at least 0")
    for attempt in range(MAX_FILTER_ATTEMPTS + 1 if filtered else 1):
        stem = f"{seed}:{attempt}" if attempt else f"{seed}"
        board = Board(
            room_tuple,
            {
                LIGHT: draw_weights(edges, random.Random(f"{stem}:USER"), deviation, weight_max),
                GHOST: draw_weights(edges, random.Random(f"{stem}:BOT"), deviation, weight_max),
            },
            "generated",
        )
        if not filtered or not selfish_tour_is_optimal(board):
            return board
    raise ValueError(f"no filtered board for {rooms} rooms and seed {seed} in {MAX_FILTER_ATTEMPTS} attempts")


def selfish_tour_is_optimal(board: Board) -> bool:
    """Whether some tour that is optimal for one player's own weights is also jointly optimal."""
    joint = set(solve(board.rooms, board.joint).tours)
    return any(joint.intersection(solve(board.rooms, board.weigher(role)).tours) for role in board.weights)
