"""Exact max-TSP for Traveling Adventurers (spec ``tsp.md`` §2.7, §3.3, §3.4): the optimum with every
optimal tour, the best tour through an agreed prefix (the problem-solving agent's IBP), and the score
distribution of all tours for percentile ranks.

Hand-written on purpose: the boards are small (3 to about 12 rooms), so an exact search takes
milliseconds, and no dependency solves max-TSP while returning all optimal tours and percentile ranks.

A tour starts and ends at the first room (L) and visits every room once; a tour and its reverse are
two directed tours. Weights are given as any function (a, b) -> int. The solver turns it into a
matrix once per call and caches its work by (rooms, matrix), so a board is solved once.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise, permutations

import msgspec

Tour = tuple[str, ...]
Weigher = Callable[[str, str], int]
Matrix = tuple[tuple[int, ...], ...]

BRUTE_FORCE_MAX = 9  # rooms; Held-Karp above
HELD_KARP_MAX = 16
STATS_MAX = 12


def tour_score(path: Sequence[str], weight: Weigher) -> int | None:
    """The summed weight along the path, or None if a consecutive pair is not an edge."""
    total = 0
    for a, b in pairwise(path):
        if not (isinstance(a, str) and isinstance(b, str)) or a == b:
            return None
        try:
            total += weight(a, b)
        except (KeyError, IndexError):
            return None
    return total


def is_tour(path: Sequence[str], rooms: Sequence[str]) -> bool:
    """Starts and ends at the first room, and visits every room exactly once."""
    return (
        len(path) == len(rooms) + 1
        and path[0] == path[-1] == rooms[0]
        and sorted(path[:-1]) == sorted(rooms)
    )


def _matrix(rooms: tuple[str, ...], weight: Weigher, limit: int) -> Matrix:
    """weight(rooms[i], rooms[j]) for i != j (0 on the diagonal), after checking the rooms."""
    if len(set(rooms)) != len(rooms):
        raise ValueError(f"rooms repeat: {rooms}")
    if not 3 <= len(rooms) <= limit:
        raise ValueError(f"the solver handles 3 to {limit} rooms, not {len(rooms)}")
    return tuple(tuple(0 if a == b else weight(a, b) for b in rooms) for a in rooms)


def _letters(rooms: tuple[str, ...], order: Iterable[int]) -> Tour:
    return tuple(rooms[i] for i in order)


# ---- optimum and all optimal tours ----


class Solution(msgspec.Struct, frozen=True):
    """``tours``: every optimal directed tour, sorted; ``tours[0]`` is the agreed tie-break."""

    optimum: int
    tours: tuple[Tour, ...]


def solve(rooms: Sequence[str], weight: Weigher) -> Solution:
    """The maximum tour weight and all directed tours reaching it: brute force up to 9 rooms, Held-Karp above."""
    rooms = tuple(rooms)
    matrix = _matrix(rooms, weight, HELD_KARP_MAX)
    return _solve_brute(rooms, matrix) if len(rooms) <= BRUTE_FORCE_MAX else _solve_held_karp(rooms, matrix)


@functools.lru_cache(maxsize=256)
def _solve_brute(rooms: tuple[str, ...], matrix: Matrix) -> Solution:
    best: int | None = None
    found: list[tuple[int, ...]] = []
    for middle in permutations(range(1, len(rooms))):
        order = (0, *middle, 0)
        score = sum(matrix[a][b] for a, b in pairwise(order))
        if best is None or score > best:
            best, found = score, [order]
        elif score == best:
            found.append(order)
    assert best is not None
    return Solution(best, tuple(sorted(_letters(rooms, order) for order in found)))


@functools.lru_cache(maxsize=16)
def _completion_table(matrix: Matrix) -> Matrix:
    """Held-Karp, backwards: table[mask][j] is the best weight from room j, having visited the rooms in
    ``mask`` (bit k-1 for room k, j among them), through every other room and back to room 0.
    table[0][0] is the optimum. Unreachable entries hold 0 and are never read."""
    n = len(matrix)
    full = (1 << (n - 1)) - 1
    table: list[list[int]] = [[0] * n for _ in range(full + 1)]
    for j in range(1, n):
        table[full][j] = matrix[j][0]
    for mask in range(full - 1, -1, -1):
        free = [k for k in range(1, n) if not mask >> (k - 1) & 1]
        lasts = [j for j in range(1, n) if mask >> (j - 1) & 1] if mask else [0]
        after = [(k, table[mask | 1 << (k - 1)][k]) for k in free]
        row = table[mask]
        for j in lasts:
            weights = matrix[j]
            row[j] = max(weights[k] + rest for k, rest in after)
    return tuple(tuple(row) for row in table)


def _optimal_steps(rooms: tuple[str, ...], matrix: Matrix, table: Matrix, mask: int, last: int) -> list[int]:
    """The next rooms that keep the best completion from (mask, last), in letter order."""
    free = [k for k in range(1, len(rooms)) if not mask >> (k - 1) & 1]
    target = table[mask][last]
    steps = [k for k in free if matrix[last][k] + table[mask | 1 << (k - 1)][k] == target]
    return sorted(steps, key=rooms.__getitem__)


@functools.lru_cache(maxsize=64)
def _solve_held_karp(rooms: tuple[str, ...], matrix: Matrix) -> Solution:
    table = _completion_table(matrix)
    full = (1 << (len(rooms) - 1)) - 1
    found: list[Tour] = []

    def follow(order: list[int], mask: int) -> None:
        if mask == full:
            found.append(_letters(rooms, [*order, 0]))
            return
        for k in _optimal_steps(rooms, matrix, table, mask, order[-1]):
            order.append(k)
            follow(order, mask | 1 << (k - 1))
            order.pop()

    follow([0], 0)
    return Solution(table[0][0], tuple(sorted(found)))


# ---- the intermediate best path (IBP) ----


def best_with_prefix(rooms: Sequence[str], weight: Weigher, prefix: Sequence[str]) -> tuple[Tour, int]:
    """The heaviest tour starting with ``prefix`` and its weight, ties broken by the lexicographically
    smallest tour. A trailing start room on a prefix longer than one room is dropped; a prefix with
    every room is closed as it is. Weights the caller does not know should be given as 0."""
    rooms = tuple(rooms)
    start = tuple(prefix)
    if len(start) > 1 and start[-1] == rooms[0]:
        start = start[:-1]
    if not start or start[0] != rooms[0]:
        raise ValueError(f"a prefix starts with {rooms[0]}: {tuple(prefix)}")
    if len(set(start)) != len(start) or not set(start) <= set(rooms):
        raise ValueError(f"a prefix names each room of {rooms} at most once: {tuple(prefix)}")
    matrix = _matrix(rooms, weight, HELD_KARP_MAX)
    index = {room: i for i, room in enumerate(rooms)}
    order = tuple(index[room] for room in start)
    if len(rooms) - len(order) <= BRUTE_FORCE_MAX - 1:
        return _best_brute(rooms, matrix, order)
    return _best_held_karp(rooms, matrix, order)


def _prefix_weight(matrix: Matrix, order: Sequence[int]) -> int:
    return sum(matrix[a][b] for a, b in pairwise(order))


@functools.lru_cache(maxsize=1024)
def _best_brute(rooms: tuple[str, ...], matrix: Matrix, order: tuple[int, ...]) -> tuple[Tour, int]:
    left = sorted(set(range(len(rooms))) - set(order), key=rooms.__getitem__)
    head = _prefix_weight(matrix, order)
    best: tuple[int, ...] = ()
    best_score: int | None = None
    for rest in permutations(left):  # lexicographic, so the first maximum is the smallest tour
        tail = (order[-1], *rest, 0)
        score = head + sum(matrix[a][b] for a, b in pairwise(tail))
        if best_score is None or score > best_score:
            best, best_score = (*order, *rest, 0), score
    assert best_score is not None
    return _letters(rooms, best), best_score


def _best_held_karp(rooms: tuple[str, ...], matrix: Matrix, order: tuple[int, ...]) -> tuple[Tour, int]:
    table = _completion_table(matrix)
    full = (1 << (len(rooms) - 1)) - 1
    mask = sum(1 << (k - 1) for k in order[1:])
    path = list(order)
    score = _prefix_weight(matrix, order) + table[mask][path[-1]]
    while mask != full:
        step = _optimal_steps(rooms, matrix, table, mask, path[-1])[0]
        path.append(step)
        mask |= 1 << (step - 1)
    return _letters(rooms, [*path, 0]), score


# ---- percentile ranks ----


class Percentiles(msgspec.Struct, frozen=True):
    """The share (in %, 2 decimals) of tours scoring at most / strictly below the score, and the
    midpoint rank (strictly below plus half the ties)."""

    at_most: float
    below: float
    midpoint: float


class TourStats(msgspec.Struct, frozen=True):
    """The scores of all (n-1)!/2 undirected tours: ``distribution`` holds (score, count) pairs by score."""

    cycles: int
    minimum: int
    maximum: int
    distribution: tuple[tuple[int, int], ...]

    def percentile(self, score: int) -> Percentiles:
        below = sum(count for s, count in self.distribution if s < score)
        equal = sum(count for s, count in self.distribution if s == score)
        return Percentiles(
            at_most=round(100 * (below + equal) / self.cycles, 2),
            below=round(100 * below / self.cycles, 2),
            midpoint=round(100 * (2 * below + equal) / (2 * self.cycles), 2),
        )


def tour_stats(rooms: Sequence[str], weight: Weigher) -> TourStats:
    """The score distribution of all undirected tours: enumerated up to 9 rooms, counted by a DP up to 12."""
    rooms = tuple(rooms)
    matrix = _matrix(rooms, weight, STATS_MAX)
    counts = _counts_enumerated(matrix) if len(rooms) <= BRUTE_FORCE_MAX else _counts_dp(matrix)
    return _stats(counts)


def _stats(counts: tuple[tuple[int, int], ...]) -> TourStats:
    return TourStats(sum(c for _, c in counts), counts[0][0], counts[-1][0], counts)


@functools.lru_cache(maxsize=256)
def _counts_enumerated(matrix: Matrix) -> tuple[tuple[int, int], ...]:
    """Each undirected tour once: the directed one whose second room has the lower index of the two ends."""
    scores: Counter[int] = Counter()
    for middle in permutations(range(1, len(matrix))):
        if middle[0] < middle[-1]:
            scores[sum(matrix[a][b] for a, b in pairwise((0, *middle, 0)))] += 1
    return tuple(sorted(scores.items()))


@functools.lru_cache(maxsize=64)
def _counts_dp(matrix: Matrix) -> tuple[tuple[int, int], ...]:
    """Held-Karp over (visited set, last room), carrying the count of paths per score as one big
    integer: the count of score s sits in bits [s*width, (s+1)*width), so adding an edge of weight w is
    a shift by w*width and merging paths is an addition. Counts never exceed (n-1)! so never overflow."""
    n = len(matrix)
    if any(not isinstance(w, int) for row in matrix for w in row):
        raise ValueError("counting tours by score needs integer weights")
    base = min(matrix[a][b] for a in range(n) for b in range(n) if a != b)
    width = math.factorial(n - 1).bit_length()
    shift = [[(matrix[a][b] - base) * width for b in range(n)] for a in range(n)]
    full = (1 << (n - 1)) - 1
    paths: list[list[int]] = [[0] * n for _ in range(full + 1)]
    for k in range(1, n):
        paths[1 << (k - 1)][k] = 1 << shift[0][k]
    for mask in range(1, full):
        free = [k for k in range(1, n) if not mask >> (k - 1) & 1]
        for j in range(1, n):
            here = paths[mask][j]
            if here:
                for k in free:
                    paths[mask | 1 << (k - 1)][k] += here << shift[j][k]
    total = sum(paths[full][j] << shift[j][0] for j in range(1, n))
    low = (1 << width) - 1
    counts: list[tuple[int, int]] = []
    score = n * base
    while total:
        if total & low:
            counts.append((score, (total & low) // 2))  # a tour and its reverse share a score
        total >>= width
        score += 1
    return tuple(counts)
