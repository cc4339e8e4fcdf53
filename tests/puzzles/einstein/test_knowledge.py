"""Inference (spec §1.4) against a brute-force solver: a block's bin is inferred exactly when every
layout satisfying the known constraints puts it in the same bin."""

import random

import pytest

from puzzles.einstein.actions import Grounding, relation
from puzzles.einstein.board import BIN_NAMES, DELTA
from puzzles.einstein.generate import generate
from puzzles.einstein.knowledge import Mind, add_grounding, add_relation, closure, empty, goal_of, infer, known_mask

from .helpers import NAME, NUMBER, determined


def _brute(n, items, seen):
    kinds = {0: "bin", 1: "column", 2: "row", 3: "diagonal"}
    groundings = [(b, NAME[x]) for b, x in seen] + [(i[0], NAME[i[1]]) for i in items if len(i) == 2]
    relations = [(i[0], i[1], kinds[i[2]]) for i in items if len(i) == 3]
    return determined(n, groundings, relations)


@pytest.mark.parametrize("n", [4, 5, 6])
def test_the_closure_infers_exactly_what_every_satisfying_layout_agrees_on(n):
    rng = random.Random(n)
    for seed in range(60):
        inst = generate(n, seed)
        items = [inst.items[i] for i in range(n) if rng.random() < 0.6]
        rng.shuffle(items)
        seen = [(b, inst.goal[b]) for b in range(n) if rng.random() < 0.2]
        know = closure(n, items, seen)
        expected = _brute(n, items, seen)
        assert [None if goal_of(know, b) is None else NAME[goal_of(know, b)] for b in range(n)] == expected


def test_relations_between_unplaced_blocks_are_kept_until_one_is_grounded():
    # row(0,1), column(1,2): nothing placed yet; then block2's bin grounds all three
    know = closure(4, [(0, 1, DELTA["row"]), (1, 2, DELTA["column"])])
    assert known_mask(know) == 0
    know = closure(4, [(0, 1, DELTA["row"]), (1, 2, DELTA["column"])], [(2, NUMBER["top_left_bin"])])
    # block2 TL; column: block1 BL; row: block0 BR; block3 unknown
    assert [goal_of(know, b) for b in range(4)] == [NUMBER["bottom_right_bin"], NUMBER["bottom_left_bin"], NUMBER["top_left_bin"], None]


@pytest.mark.parametrize("first, second, composed", [
    ("bin", "row", "row"), ("bin", "column", "column"), ("bin", "diagonal", "diagonal"), ("bin", "bin", "bin"),
    ("row", "row", "bin"), ("column", "column", "bin"), ("diagonal", "diagonal", "bin"),
    ("row", "column", "diagonal"), ("row", "diagonal", "column"), ("column", "diagonal", "row"),
])
def test_composition_is_the_spec_table(first, second, composed):
    # A-B first, B-C second; once A is grounded in TL, C lands where `composed` from TL says
    know = add_relation(add_relation(empty(3), 0, 1, DELTA[first]), 1, 2, DELTA[second])
    know = add_grounding(know, 0, NUMBER["top_left_bin"])
    expected = _brute(3, [(0, NUMBER["top_left_bin"]), (0, 2, DELTA[composed])], [])
    assert NAME[goal_of(know, 2)] == expected[2]


def test_grounding_and_relation_give_a_grounding_as_the_spec_says():
    # same bin: the same bin; row: flip the column; column: flip the row; diagonal: flip both
    start = NUMBER["top_right_bin"]
    for kind, bin_ in (("bin", "top_right_bin"), ("row", "top_left_bin"), ("column", "bottom_right_bin"), ("diagonal", "bottom_left_bin")):
        know = closure(2, [(0, start), (0, 1, DELTA[kind])])
        assert NAME[goal_of(know, 1)] == bin_


def test_items_read_from_a_prompt_infer_the_same():
    inst = generate(5, 3)
    structs = [Grounding(0, BIN_NAMES[inst.goal[0]])] + [relation(*i[:2], {0: "bin", 1: "column", 2: "row", 3: "diagonal"}[i[2]]) for i in inst.items[1:]]
    assert infer(5, structs) == closure(5, inst.items)
    assert known_mask(infer(5, structs)) == 0b11111
    assert infer(5, [Grounding(1, "commonbin")]) == empty(5)  # says nothing about a destination bin


def test_a_mind_hears_an_item_once_and_sees_the_board():
    inst = generate(4, 1)
    mind = Mind((0,), closure(4, [inst.items[0]]))
    heard = mind.hears(2, inst.items[2]).hears(2, inst.items[2])
    assert heard.explicit == (0, 2)
    assert heard.know == closure(4, [inst.items[0], inst.items[2]])
    seen = mind.sees(3, inst.goal[3])
    assert seen.explicit == (0,) and goal_of(seen.know, 3) == inst.goal[3]
    assert mind.marked(0b100).marks == 0b100 and mind.marked(0).marks == 0
