"""The exact max-TSP solver against independent computations written here: every ordering of every
room, planted tours, and a memoised recursion; both internal methods (brute force and Held-Karp)
are compared on the same boards."""

from __future__ import annotations

import functools
import math
import random
from collections import Counter
from itertools import combinations, permutations

import pytest

from puzzles.tsp import solver
from puzzles.tsp.board import ROOM_ORDER, paper_board
from puzzles.tsp.solver import Solution, best_with_prefix, is_tour, solve, tour_score, tour_stats

BIG_ROOMS = ("L", "A", "B", "C", "D", "F", "H", "J", "M", "N", "Q")


def random_weights(rooms, rng: random.Random, top: int) -> dict[frozenset[str], int]:
    return {frozenset(pair): rng.randint(1, top) for pair in combinations(rooms, 2)}


def weigher(weights):
    return lambda a, b: weights[frozenset((a, b))]


def all_tours(rooms, weights) -> dict[tuple[str, ...], int]:
    """Every directed tour from L with its score, from the orderings of all rooms."""
    scored = {}
    for order in permutations(rooms):
        if order[0] == "L":
            tour = (*order, "L")
            scored[tour] = sum(weights[frozenset((tour[i], tour[i + 1]))] for i in range(len(rooms)))
    return scored


def optimal(scored: dict[tuple[str, ...], int]) -> tuple[int, list[tuple[str, ...]]]:
    best = max(scored.values())
    return best, sorted(tour for tour, score in scored.items() if score == best)


def random_boards(count: int, seed: int):
    rng = random.Random(seed)
    for i in range(count):
        rooms = ROOM_ORDER[: 3 + i % 6]
        yield rooms, random_weights(rooms, rng, top=rng.choice((1, 2, 2, 3, 10)))


def test_solver_matches_brute_force_on_random_boards():
    for rooms, weights in random_boards(200, seed=1):
        best, tours = optimal(all_tours(rooms, weights))
        found = solve(rooms, weigher(weights))
        assert found == Solution(best, tuple(tours))
        matrix = solver._matrix(rooms, weigher(weights), solver.HELD_KARP_MAX)
        assert solver._solve_held_karp(rooms, matrix) == found
        assert solver._solve_brute(rooms, matrix) == found


def test_all_equal_weights_make_every_tour_optimal():
    rooms = ROOM_ORDER[:6]
    found = solve(rooms, lambda a, b: 4)
    assert found.optimum == 24 and len(found.tours) == math.factorial(5)
    matrix = solver._matrix(rooms, lambda a, b: 4, 16)
    assert solver._solve_held_karp(rooms, matrix) == found


def memoised_best(rooms, weights) -> tuple[int, set[tuple[str, ...]]]:
    """An independent recursion over the set of rooms left: the best completion and all its paths."""

    @functools.cache
    def rest(here: str, left: frozenset[str]) -> tuple[int, frozenset[tuple[str, ...]]]:
        if not left:
            return weights[frozenset((here, "L"))], frozenset({("L",)})
        options = []
        for room in left:
            score, paths = rest(room, left - {room})
            options.append((weights[frozenset((here, room))] + score, {(room, *path) for path in paths}))
        best = max(score for score, _ in options)
        return best, frozenset().union(*(paths for score, paths in options if score == best))

    best, paths = rest("L", frozenset(rooms[1:]))
    return best, {("L", *path) for path in paths}


@pytest.mark.parametrize(("n", "top", "seed"), [(10, 3, 1), (10, 20, 2), (11, 4, 3), (11, 30, 4)])
def test_held_karp_matches_an_independent_recursion(n, top, seed):
    rooms = BIG_ROOMS[:n]
    weights = random_weights(rooms, random.Random(seed), top)
    best, tours = memoised_best(rooms, weights)
    assert solve(rooms, weigher(weights)) == Solution(best, tuple(sorted(tours)))


@pytest.mark.parametrize("n", (10, 11))
def test_held_karp_finds_a_planted_tour(n):
    rng = random.Random(n)
    rooms = BIG_ROOMS[:n]
    middle = list(rooms[1:])
    rng.shuffle(middle)
    planted = ("L", *middle, "L")
    weights = random_weights(rooms, rng, top=3)
    for a, b in zip(planted, planted[1:]):
        weights[frozenset((a, b))] = 100
    found = solve(rooms, weigher(weights))
    assert found.optimum == 100 * n
    assert set(found.tours) == {planted, planted[::-1]}
    assert best_with_prefix(rooms, weigher(weights), planted[:3]) == (planted, 100 * n)
    assert best_with_prefix(rooms, weigher(weights), ["L"])[1] == 100 * n


def prefix_brute_force(scored, prefix) -> tuple[tuple[str, ...], int]:
    matching = {tour: score for tour, score in scored.items() if tour[: len(prefix)] == tuple(prefix)}
    best = max(matching.values())
    return min(tour for tour, score in matching.items() if score == best), best


def test_best_with_prefix_matches_brute_force():
    rng = random.Random(7)
    for rooms, weights in random_boards(120, seed=2):
        scored = all_tours(rooms, weights)
        matrix = solver._matrix(rooms, weigher(weights), solver.HELD_KARP_MAX)
        for _ in range(3):
            middle = list(rooms[1:])
            rng.shuffle(middle)
            prefix = ["L", *middle[: rng.randrange(len(middle) + 1)]]
            expected = prefix_brute_force(scored, prefix)
            assert best_with_prefix(rooms, weigher(weights), prefix) == expected
            assert best_with_prefix(rooms, weigher(weights), [*prefix, "L"]) == expected  # a trailing L is dropped
            order = tuple(rooms.index(room) for room in prefix)
            assert solver._best_held_karp(rooms, matrix, order) == expected
            assert solver._best_brute(rooms, matrix, order) == expected


def test_best_with_prefix_with_unknown_weights_as_zero():
    board = paper_board(1)
    known = {frozenset((a, b)): w for a, b, w in board.weights["light"]}
    own = lambda a, b: known[frozenset((a, b))]  # noqa: E731
    tour, score = best_with_prefix(board.rooms, own, ("L", "E"))
    assert score == tour_score(tour, own)
    assert score == prefix_brute_force(all_tours(board.rooms, known), ("L", "E"))[1]
    complete = ("L", "E", "A", "B", "K", "C")
    assert best_with_prefix(board.rooms, board.joint, complete) == ((*complete, "L"), 52)
    assert best_with_prefix(board.rooms, board.joint, (*complete, "L")) == ((*complete, "L"), 52)


@pytest.mark.parametrize("prefix", [(), ("E",), ("E", "L"), ("L", "E", "E"), ("L", "E", "L", "K"), ("L", "X")])
def test_best_with_prefix_rejects_bad_prefixes(prefix):
    board = paper_board(1)
    with pytest.raises(ValueError):
        best_with_prefix(board.rooms, board.joint, prefix)


def test_tour_score_and_is_tour():
    board = paper_board(1)
    tour = ("L", "E", "A", "B", "K", "C", "L")
    assert tour_score(tour, board.joint) == 11 + 9 + 9 + 7 + 9 + 7
    assert tour_score(tour, lambda a, b: board.weight("ghost", a, b)) == 6 + 6 + 3 + 5 + 6 + 1
    assert tour_score(("L", "E", "E", "K"), board.joint) is None
    assert tour_score(("L", "E", "Z", "K"), board.joint) is None
    assert tour_score(("L", "E", "L"), board.joint) == 22  # scored, though not a tour
    assert tour_score(("L",), board.joint) == 0
    assert is_tour(tour, board.rooms) and is_tour(tour[::-1], board.rooms)
    assert not is_tour(("L", "E", "A", "B", "K", "L"), board.rooms)
    assert not is_tour(("E", "L", "A", "B", "K", "C", "E"), board.rooms)
    assert not is_tour(("L", "E", "E", "B", "K", "C", "L"), board.rooms)
    assert not is_tour((), board.rooms)


def percent(part: int, whole: int) -> float:
    return round(100 * part / whole, 2)


def test_tour_stats_match_an_independent_enumeration():
    rng = random.Random(3)
    for rooms, weights in random_boards(60, seed=3):
        scores = list(all_tours(rooms, weights).values())  # directed: each cycle twice, same shares
        stats = tour_stats(rooms, weigher(weights))
        assert stats.cycles == math.factorial(len(rooms) - 1) // 2 == len(scores) // 2
        assert (stats.minimum, stats.maximum) == (min(scores), max(scores))
        for score in {min(scores), max(scores), rng.choice(scores), rng.choice(scores) + 1}:
            below = sum(s < score for s in scores)
            ties = sum(s == score for s in scores)
            shares = stats.percentile(score)
            assert shares.at_most == percent(below + ties, len(scores))
            assert shares.below == percent(below, len(scores))
            assert shares.midpoint == round(100 * (below + ties / 2) / len(scores), 2)
        assert stats.percentile(max(scores)).at_most == 100.0
        assert stats.percentile(min(scores)).below == 0.0
        matrix = solver._matrix(rooms, weigher(weights), solver.STATS_MAX)
        assert solver._counts_dp(matrix) == solver._counts_enumerated(matrix) == stats.distribution


def test_tour_stats_above_nine_rooms():
    rooms = BIG_ROOMS[:10]
    weights = random_weights(rooms, random.Random(5), top=6)
    stats = tour_stats(rooms, weigher(weights))
    assert stats.cycles == math.factorial(9) // 2 == sum(count for _, count in stats.distribution)
    assert stats.maximum == memoised_best(rooms, weights)[0]
    assert stats.minimum == -memoised_best(rooms, {edge: -w for edge, w in weights.items()})[0]
    assert stats.percentile(stats.maximum).at_most == 100.0
    with pytest.raises(ValueError):
        tour_stats(BIG_ROOMS + ("R", "S"), lambda a, b: 1)


def test_paper_boards_percentiles():
    for k in range(1, 7):
        board = paper_board(k)
        scored = all_tours(board.rooms, {frozenset((a, b)): board.joint(a, b) for a, b in board.edges()})
        stats = tour_stats(board.rooms, board.joint)
        assert stats.cycles == 60
        assert Counter(scored.values()) == Counter({s: 2 * c for s, c in stats.distribution})
        assert stats.percentile(solve(board.rooms, board.joint).optimum).at_most == 100.0
