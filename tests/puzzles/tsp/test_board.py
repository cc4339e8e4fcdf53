"""Traveling Adventurers boards: the paper's six fixed boards, the generated boards of the human study,
and the board lookups, checked against independent brute force and a literal reading of the spec."""

from __future__ import annotations

import math
import random
from itertools import combinations, permutations

import msgspec
import pytest

from puzzles.tsp.board import (
    DISPLAY_ORDER, GHOST, LIGHT, ROLES, ROOM_NAMES, ROOM_ORDER, Board, board_for_seed, generated_board,
    paper_board, rooms_for,
)

SPEC_EDGE_ORDER = "LE LB LK LC LA EB EK EC EA BK BC BA KC KA CA".split()
SPEC_TABLE = {  # board: (BOT weights, USER weights), spec §1.3
    1: "6 4 2 1 5 3 1 2 6 5 4 3 6 2 1 | 5 3 1 6 2 4 6 1 3 2 5 6 3 4 1",
    3: "4 6 1 3 5 2 3 5 6 4 1 2 6 5 3 | 1 6 5 4 3 2 6 1 5 4 2 3 1 2 6",
    5: "3 5 6 4 2 1 3 5 6 2 1 4 3 6 5 | 2 5 3 6 1 4 5 2 3 6 1 4 5 3 2",
}


def edge_weights(board: Board, role: str) -> dict[frozenset[str], int]:
    return {frozenset((a, b)): w for a, b, w in board.weights[role]}


def brute_force(rooms: tuple[str, ...], weights: dict[frozenset[str], int]) -> tuple[int, set[tuple[str, ...]]]:
    """The optimum and all optimal directed tours, over every ordering of every room."""
    scored = {}
    for order in permutations(rooms):
        if order[0] == "L":
            tour = (*order, "L")
            scored[tour] = sum(weights[frozenset(pair)] for pair in zip(tour, tour[1:]))
    best = max(scored.values())
    return best, {tour for tour, score in scored.items() if score == best}


def joint_weights(board: Board) -> dict[frozenset[str], int]:
    light, ghost = edge_weights(board, LIGHT), edge_weights(board, GHOST)
    return {edge: light[edge] + ghost[edge] for edge in light}


def test_rooms_and_names():
    assert ROLES == ("light", "ghost")
    assert rooms_for(4) == ("L", "E", "K", "B")
    assert rooms_for(6) == ("L", "E", "K", "B", "C", "A")
    assert rooms_for(8) == ROOM_ORDER
    for bad in (2, 9, 0):
        with pytest.raises(ValueError):
            rooms_for(bad)
    assert set(ROOM_NAMES) == set(ROOM_ORDER) == set(DISPLAY_ORDER)
    assert ROOM_NAMES["L"] == "a well-lit living room" and ROOM_NAMES["B"] == "a dark, spooky bathroom"


@pytest.mark.parametrize("k", range(1, 7))
def test_paper_boards_have_one_weight_per_edge(k):
    board = paper_board(k)
    board.check()
    assert board.source == f"paper:{k}"
    assert len(board.rooms) == 6
    every_edge = {frozenset(pair) for pair in combinations(board.rooms, 2)}
    for role in ROLES:
        listed = [frozenset((a, b)) for a, b, _ in board.weights[role]]
        assert len(listed) == 15 and set(listed) == every_edge
        assert all(1 <= w <= 6 for _, _, w in board.weights[role])
        assert ["".join(pair) for pair in ((a, b) for a, b, _ in board.weights[role])] == SPEC_EDGE_ORDER


@pytest.mark.parametrize("k", (1, 3, 5))
def test_paper_boards_match_the_spec_table_and_swap_roles(k):
    bot, user = (list(map(int, half.split())) for half in SPEC_TABLE[k].split("|"))
    odd, even = paper_board(k), paper_board(k + 1)
    assert [w for *_, w in odd.weights[GHOST]] == bot
    assert [w for *_, w in odd.weights[LIGHT]] == user
    assert even.weights[LIGHT] == odd.weights[GHOST] and even.weights[GHOST] == odd.weights[LIGHT]


def test_paper_board_outside_range():
    for bad in (0, 7, -1):
        with pytest.raises(ValueError):
            paper_board(bad)


def test_lookups_are_orientation_free():
    board = paper_board(1)
    for a, b in combinations(board.rooms, 2):
        for role in ROLES:
            assert board.weight(role, a, b) == board.weight(role, b, a) == edge_weights(board, role)[frozenset((a, b))]
        assert board.joint(a, b) == board.weight(LIGHT, a, b) + board.weight(GHOST, b, a)
    assert board.weight(GHOST, "L", "E") == 6 and board.weight(LIGHT, "C", "L") == 6
    with pytest.raises(KeyError):
        board.weight(LIGHT, "L", "G")
    with pytest.raises(KeyError):
        board.weight(LIGHT, "L", "L")
    assert board.edges() == tuple(combinations(board.rooms, 2))


def test_board_survives_a_msgspec_round_trip():
    board = generated_board(5, 3)
    again = msgspec.json.decode(msgspec.json.encode(board), type=Board)
    assert again == board
    assert again.joint("E", "C") == board.joint("C", "E")


def test_board_one_optimum_is_the_papers():
    board = paper_board(1)
    best, tours = brute_force(board.rooms, joint_weights(board))
    assert best == 52
    assert ("L", "E", "A", "B", "K", "C", "L") in tours


@pytest.mark.parametrize("k", (1, 3, 5))
def test_swapping_the_pair_keeps_the_joint_optimum(k):
    odd, even = paper_board(k), paper_board(k + 1)
    assert joint_weights(odd) == joint_weights(even)
    assert brute_force(odd.rooms, joint_weights(odd)) == brute_force(even.rooms, joint_weights(even))


def test_board_for_seed():
    for seed in range(50):
        assert board_for_seed(seed) == 1 + random.Random(seed).randrange(6)
        assert board_for_seed(seed, "balanced") == 1 + seed % 6
    assert {board_for_seed(seed) for seed in range(100)} == set(range(1, 7))
    with pytest.raises(ValueError):
        board_for_seed(1, "round-robin")


def spec_weights(edges, seed: str, d: int = 3, top: int = 10) -> list[int]:
    """The spec's pseudo-code for one player, read literally (float window, math.floor / math.ceil)."""
    rng = random.Random(seed)
    total = math.floor((1 + top) * len(edges) / 2)
    drawn = []
    for k, _ in enumerate(edges):
        m = len(edges) - k
        if m == 1:
            drawn.append(total)
            break
        feas_lo, feas_hi = max(1, total - top * (m - 1)), min(top, total - (m - 1))
        t = total / m
        lo, hi = max(feas_lo, math.floor(t - d)), min(feas_hi, math.ceil(t + d))
        if lo > hi:
            lo, hi = feas_lo, feas_hi
        drawn.append(rng.randint(lo, hi))
        total -= drawn[-1]
    return drawn


@pytest.mark.parametrize(("rooms", "total"), [(4, 33), (5, 55), (6, 82)])
def test_generated_boards_follow_the_spec(rooms, total):
    pairs = list(combinations(ROOM_ORDER[:rooms], 2))
    for seed in range(150):
        board = generated_board(rooms, seed)
        board.check()
        assert board.source == "generated" and board.rooms == ROOM_ORDER[:rooms]
        for role, side in ((LIGHT, "USER"), (GHOST, "BOT")):
            edges = board.weights[role]
            assert [(a, b) for a, b, _ in edges] == pairs
            assert sum(w for *_, w in edges) == total
            assert all(1 <= w <= 10 for *_, w in edges)
            assert [w for *_, w in edges] == spec_weights(pairs, f"{seed}:{side}")
        assert board.weights[LIGHT] != board.weights[GHOST]


def test_generated_board_options():
    for seed in range(30):
        board = generated_board(6, seed, weight_max=6, deviation=1)
        pairs = list(combinations(board.rooms, 2))
        for role, side in ((LIGHT, "USER"), (GHOST, "BOT")):
            weights = [w for *_, w in board.weights[role]]
            assert sum(weights) == 7 * 15 // 2 and all(1 <= w <= 6 for w in weights)
            assert weights == spec_weights(pairs, f"{seed}:{side}", d=1, top=6)


def test_generated_boards_are_deterministic_by_seed():
    assert generated_board(6, 11) == generated_board(6, 11)
    boards = [generated_board(6, seed) for seed in range(40)]
    distinct = {msgspec.json.encode(board) for board in boards}
    assert len(distinct) == len(boards)


def test_filtered_boards_defeat_both_selfish_optima():
    for rooms in (4, 5, 6):
        for seed in range(8):
            board = generated_board(rooms, seed, filtered=True)
            board.check()
            _, joint_best = brute_force(board.rooms, joint_weights(board))
            for role in ROLES:
                _, own_best = brute_force(board.rooms, edge_weights(board, role))
                assert not own_best & joint_best
            plain = generated_board(rooms, seed)
            if plain != board:  # redrawn, so the unfiltered draw must have failed the filter
                _, plain_joint = brute_force(plain.rooms, joint_weights(plain))
                assert any(brute_force(plain.rooms, edge_weights(plain, role))[1] & plain_joint for role in ROLES)
    assert generated_board(6, 5, filtered=True) == generated_board(6, 5, filtered=True)


def test_filter_gives_up_when_impossible():
    with pytest.raises(ValueError):  # three rooms have one cycle, optimal for everyone
        generated_board(3, 1, filtered=True)
