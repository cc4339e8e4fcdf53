"""The optimal planner against an exhaustive search of the game as it is played, written again here,
the spec's [RUN] optima (the reference's rule for who starts), and the game: a plan plays out in the
game, step by step, as planned."""

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
SHARES, ASKS = ("share_ask", "share"), ("share_ask", "ask")


def played_optimum(inst, modes, answers=True, first="player1"):
    """The fewest steps that solve ``inst`` when the players alternate one step each, player 1 first
    as the game plays (``first="reference"``: player 2 first when player 1 has no move at the start):
    breadth-first over every game state, written from the spec's text (§2.5, §3.3). A step is any
    action of the player's valid set (§2.5: a redundant share, an ask nobody answers and, in ``ask``
    mode, the answer right after the partner's ask included), the reference planner's guesses where
    it guesses, or a pass (as any action that fails: the step is spent and nothing changes)."""
    n, items = inst.n, inst.items
    goal = tuple(NAME[g] for g in inst.goal)
    destinations = set(NAME.values())

    @lru_cache(maxsize=None)
    def knows(explicit, placed):
        groundings = list(placed) + [(items[i][0], NAME[items[i][1]]) for i in explicit if len(items[i]) == 2]
        relations = [(items[i][0], items[i][1], KINDS[items[i][2]]) for i in explicit if len(items[i]) == 3]
        return tuple(determined(n, groundings, relations))

    def settled(board, i):
        item = items[i]
        if len(item) == 2:
            return board[item[0]] == NAME[item[1]]
        return board[item[0]] in destinations and board[item[1]] in destinations

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

    def steps(state):
        """Every state one step on; ``asked``: the block the step before asked about, when the
        player to move may answer it."""
        board, explicit, marked, asked, p = state
        q, mode = 1 - p, modes[p]
        goals = knows(explicit[p], frozenset((b, x) for b, x in enumerate(board) if x in destinations))
        yield board, explicit, marked, None, q  # a pass
        for b, x in moves(p, board, goals):
            yield put(board, b, x), explicit, marked, None, q
        open_items = [i for i in sorted(explicit[p] - marked) if not settled(board, i)]
        if mode in SHARES:
            shares = open_items
        elif mode == "ask" and answers and asked is not None:
            shares = [i for i in open_items if mentions(i, asked)]
        else:
            shares = []
        for i in shares:  # the item is the partner's, and marked shared for both
            told = tuple(e | {i} if who == q else e for who, e in enumerate(explicit))
            yield board, told, marked | {i}, None, q
        if mode in ASKS:
            answering = modes[q] == "ask" and answers
            for b in range(n):
                if goals[b] is None:
                    yield board, explicit, marked, b if answering else None, q
        informed = modes[q] in SHARES or (modes[q] == "ask" and answers and mode in ASKS)
        if mode == "none" or not informed:
            for b in range(n):
                if goals[b] is None and board[b] in (START[p], "commonbin", *OWN[p]):
                    for x in (*OWN[p], "commonbin"):
                        if x != board[b]:  # the board takes a guess into the true bin or the common bin
                            yield put(board, b, x) if x in (goal[b], "commonbin") else board, explicit, marked, None, q

    board = tuple(START[0] if s == 4 else START[1] for s in inst.start)
    explicit = (frozenset(inst.knowledge["player1"]), frozenset(inst.knowledge["player2"]))
    starter = 0
    if first == "reference" and not moves(0, board, knows(explicit[0], frozenset())):
        starter = 1
    root = (board, explicit, frozenset(), None, starter)
    seen, frontier, depth = {root}, [root], 0
    while frontier:
        depth += 1
        following = []
        for state in frontier:
            for new in steps(state):
                if new[0] == goal:
                    return depth
                if new not in seen:
                    seen.add(new)
                    following.append(new)
        frontier = following
    return None


MODES = [
    ("share", "share"), ("ask", "ask"), ("none", "none"), ("share_ask", "ask"), ("share", "ask"), ("ask", "share"),
    ("ask", "none"), ("share_ask", "none"), ("none", "share"),
]
# Who starts changes these optima: player 1 first (as played), then player 2 first (the reference).
EXAMPLES = {"4_2020_3120_0011_210": (7, 8), "4_2020_0321_0011_210": (5, 4)}


def test_the_planner_finds_the_played_optimum_of_every_instance_of_a_seed_range():
    ids = [generate(4, seed).id for seed in range(300)] + list(EXAMPLES)
    for game_id in ids:
        inst = instance_from_id(game_id)
        assert plan(inst).steps == played_optimum(inst, ("share_ask", "share_ask")), game_id


@pytest.mark.parametrize("modes", MODES)
def test_the_planner_finds_the_played_optimum_in_every_mode(modes):
    for seed in range(40):
        inst = generate(4, seed)
        assert plan(inst, modes).steps == played_optimum(inst, modes), inst.id


def test_the_planner_finds_the_played_optimum_with_five_blocks():
    for seed in range(4):
        inst = generate(5, seed)
        for modes in (("share_ask", "share_ask"), ("none", "none")):
            assert plan(inst, modes).steps == played_optimum(inst, modes), inst.id


def test_ask_mode_players_that_may_not_answer_make_asks_useless():
    for seed in range(20):
        inst = generate(4, seed)
        assert plan(inst, ("ask", "ask"), answers=False).steps == played_optimum(inst, ("ask", "ask"), answers=False)


@pytest.mark.parametrize("game_id", list(EXAMPLES))
def test_the_optimum_is_the_one_of_the_order_the_game_is_played_in(game_id):
    inst = instance_from_id(game_id)
    played, reference = EXAMPLES[game_id]
    assert plan(inst).first == "player1" and plan(inst).steps == played_optimum(inst, ("share_ask", "share_ask")) == played
    found = plan(inst, first="reference")
    assert found.first == "player2"
    assert found.steps == played_optimum(inst, ("share_ask", "share_ask"), first="reference") == reference


def test_a_player_with_only_asks_at_hand_may_pass_the_turn():
    # Player 1 can neither move nor share at the start; passing lets player 2 move first: 9 steps,
    # where asking first (and then never handing the turn over unasked) takes 10.
    inst = instance_from_id("4_2002_1302_0012_210")
    found = plan(inst, ("ask", "ask"), with_path=True)
    assert found.steps == played_optimum(inst, ("ask", "ask")) == 9
    assert found.path[0].kind == "pass"


# Spec §3.3, [RUN]: the reference repository's planner on sampled instances (its rule for who starts).
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
    got = tuple(plan(inst, (m, m), first="reference").steps for m in ("share_ask", "share", "ask", "none"))
    assert got == RUN[game_id]


def test_player2_starts_when_player1_has_no_move_with_the_references_rule_and_never_as_played():
    assert plan(instance_from_id("4_2200_1023_0011_210"), first="reference").first == "player2"  # "(P2 starts)"
    assert plan(instance_from_id("4_2002_0132_0001_012"), first="reference").first == "player1"
    played = plan(instance_from_id("4_2200_1023_0011_210"), with_path=True)
    assert played.first == "player1" and played.path[0].role == "player1"


def test_instances_the_reference_could_not_plan_in_its_budget_are_planned():
    # [RUN]: no solution within 2500 expansions; the exhaustive search agrees with ours
    inst = instance_from_id("5_20200_12310_00001_1022")
    assert plan(inst).steps == played_optimum(inst, ("share_ask", "share_ask")) == 12
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
        found = plan(inst, params.modes, with_path=True)
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
