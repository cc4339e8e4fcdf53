"""The optimal planner against an exhaustive search written again here, the spec's [RUN] optima, and
the game: a plan plays out in the game, step by step, as planned."""

import heapq
from functools import lru_cache

import pytest

from puzzles.einstein.actions import Ask, Move, Pass, Share
from puzzles.einstein.board import BIN_NAMES, instance_from_id
from puzzles.einstein.generate import generate
from puzzles.einstein.params import EinsteinParams
from puzzles.einstein.planner import plan
from puzzles.einstein.rules import EinsteinGame

from .helpers import NAME, determined
from .model import as_struct

OWN = {0: ("bottom_left_bin", "bottom_right_bin"), 1: ("top_left_bin", "top_right_bin")}
START = {0: "player1_bin", 1: "player2_bin"}
KINDS = {0: "bin", 1: "column", 2: "row", 3: "diagonal"}


def exhaustive(inst, modes, answers=True):
    """Uniform-cost search over every joint state, written from the spec's text (§2.5, §3.3)."""
    n, items, goal = inst.n, inst.items, tuple(NAME[g] for g in inst.goal)

    @lru_cache(maxsize=None)
    def knows(explicit, placed):
        groundings = [(b, x) for b, x in placed] + [(items[i][0], NAME[items[i][1]]) for i in explicit if len(items[i]) == 2]
        relations = [(items[i][0], items[i][1], KINDS[items[i][2]]) for i in explicit if len(items[i]) == 3]
        return tuple(determined(n, groundings, relations))

    def placed(board):
        return frozenset((b, x) for b, x in enumerate(board) if x in NAME.values())

    def settled(board, i):
        item = items[i]
        if len(item) == 2:
            return board[item[0]] == NAME[item[1]]
        return board[item[0]] in NAME.values() and board[item[1]] in NAME.values()

    def mentions(i, b):
        return items[i][0] == b if len(items[i]) == 2 else b in items[i][:2]

    def moves(p, board, goals):
        out = []
        for b in range(n):
            g, where = goals[b], board[b]
            if g is None or where == g:
                continue
            if g in OWN[p] and where in (START[p], "commonbin", *OWN[p]):
                out.append((b, g))
            elif where in (START[p], *OWN[p]):
                out.append((b, "commonbin"))
        return out

    def put(board, b, x):
        return board[:b] + (x,) + board[b + 1:]

    def children(state):
        board, explicit, shared, p = state
        q, mode = 1 - p, modes[p]
        goals = knows(explicit[p], placed(board))
        out = []

        def with_explicit(who, i):
            e = list(explicit)
            e[who] = e[who] | {i}
            return tuple(e)

        found = moves(p, board, goals)
        out += [(1, (put(board, b, x), explicit, shared, q)) for b, x in found]
        if mode in ("share_ask", "share"):
            for i in sorted(explicit[p] - shared - explicit[q]):
                if not settled(board, i):
                    out.append((1, (board, with_explicit(q, i), shared | {i}, q)))
        if mode in ("share_ask", "ask") and (modes[q] in ("share_ask", "share") or (modes[q] == "ask" and answers)):
            for b in range(n):
                if goals[b] is None:
                    for i in sorted(explicit[q] - shared):
                        if mentions(i, b) and not settled(board, i):
                            out.append((2, (board, with_explicit(p, i), shared | {i}, p)))
        if not out:
            out.append((1, (board, explicit, shared, q)))
        # guesses: in none mode, or when nothing the partner may say can reach this player
        informed = modes[q] in ("share_ask", "share") or (modes[q] == "ask" and answers and mode in ("share_ask", "ask"))
        if mode == "none" or not informed:
            for b in range(n):
                if goals[b] is None and board[b] in (START[p], "commonbin"):
                    for x in (*OWN[p], "commonbin"):
                        if x != board[b]:
                            out.append((1, (put(board, b, x) if x in (goal[b], "commonbin") else board, explicit, shared, q)))
        return out

    board = tuple("player1_bin" if s == 4 else "player2_bin" for s in inst.start)
    explicit = (frozenset(inst.knowledge["player1"]), frozenset(inst.knowledge["player2"]))
    first = 0 if moves(0, board, knows(explicit[0], placed(board))) else 1
    start = (board, explicit, frozenset(), first)
    best = {start: 0}
    heap = [(0, 0, start)]
    counter = 1
    while heap:
        cost, _, state = heapq.heappop(heap)
        if cost > best[state]:
            continue
        if state[0] == goal:
            return cost
        for step, child in children(state):
            if cost + step < best.get(child, 10**9):
                best[child] = cost + step
                heapq.heappush(heap, (cost + step, counter, child))
                counter += 1
    return None


MODES = [
    ("share_ask", "share_ask"), ("share", "share"), ("ask", "ask"), ("none", "none"), ("share_ask", "ask"), ("share", "ask"),
    ("ask", "none"), ("share_ask", "none"), ("none", "share"),
]


@pytest.mark.parametrize("modes", MODES)
def test_the_planner_finds_the_exhaustive_optimum_on_small_instances(modes):
    for seed in range(25):
        inst = generate(4, seed)
        assert plan(inst, modes).steps == exhaustive(inst, modes), inst.id


def test_the_planner_finds_the_exhaustive_optimum_with_five_blocks():
    for seed in range(4):
        inst = generate(5, seed)
        for modes in (("share_ask", "share_ask"), ("none", "none")):
            assert plan(inst, modes).steps == exhaustive(inst, modes), inst.id


def test_ask_mode_players_that_may_not_answer_make_asks_useless():
    for seed in range(10):
        inst = generate(4, seed)
        assert plan(inst, ("ask", "ask"), answers=False).steps == exhaustive(inst, ("ask", "ask"), answers=False)


# Spec §3.3, [RUN]: the reference repository's planner on sampled instances.
RUN = {
    "4_2002_0132_0001_012": (4, 4, 4, 4),
    "4_0202_3120_0002_210": (8, 8, 10, 6),
    "4_2020_0123_0002_102": (6, 6, 6, 4),
    "4_2200_1023_0011_210": (6, 6, 6, 6),
    "4_0022_2103_0001_012": (8, 8, 8, 6),
    "4_0022_2103_0011_210": (7, 7, 8, 6),
    "5_20200_31012_00112_1102": (8, 8, 9, 7),
}


@pytest.mark.parametrize("game_id", list(RUN))
def test_the_planner_agrees_with_the_references_optima(game_id):
    inst = instance_from_id(game_id)
    got = tuple(plan(inst, (m, m)).steps for m in ("share_ask", "share", "ask", "none"))
    assert got == RUN[game_id]


def test_player2_starts_when_player1_has_no_move_as_in_the_reference():
    assert plan(instance_from_id("4_2200_1023_0011_210")).first == "player2"  # "(P2 starts)"
    assert plan(instance_from_id("4_2002_0132_0001_012")).first == "player1"


def test_instances_the_reference_could_not_plan_in_its_budget_are_planned():
    # [RUN]: no solution within 2500 expansions; the exhaustive search agrees with ours
    inst = instance_from_id("5_20200_12310_00001_1022")
    assert plan(inst).steps == exhaustive(inst, ("share_ask", "share_ask")) == 12
    assert plan(instance_from_id("6_220002_312003_000221_12022")).steps is not None


def test_a_budget_too_small_finds_nothing():
    found = plan(instance_from_id("4_0202_3120_0002_210"), budget=3)
    assert found.steps is None and found.expansions == 3


def _action(inst, step):
    if step.kind in ("move", "guess"):
        b, src, dst = step.args
        return Move(b, BIN_NAMES[src], BIN_NAMES[dst])
    if step.kind == "share":
        return Share(as_struct(inst.items[step.args[0]]))
    if step.kind == "pass":
        return Pass()
    raise AssertionError(step)


@pytest.mark.parametrize("actions", ["share_ask", "share", "ask", "none", "share_ask/ask"])
def test_a_plan_plays_out_in_the_game_in_exactly_its_steps(actions):
    params = EinsteinParams(blocks=5, actions=actions)
    for seed in range(10):
        inst = generate(5, seed)
        found = plan(inst, params.modes, first="player1", with_path=True)
        state = EinsteinGame(inst, params, 15)
        for step in found.path:
            if step.kind == "ask":
                block, answer = step.args
                partner = "player2" if step.role == "player1" else "player1"
                state.step(step.role, (Ask(block),))
                assert not state.history[-1][2]
                state.step(partner, (Share(as_struct(inst.items[answer])),))
                assert not state.history[-1][2]
            else:
                state.step(step.role, (_action(inst, step),))
                if step.kind in ("move", "share"):
                    assert not state.history[-1][2]
        assert state.solved() and state.steps == found.steps
