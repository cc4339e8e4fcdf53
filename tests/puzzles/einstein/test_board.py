"""Instances and their game IDs (spec §1.2)."""

import pytest

from puzzles.einstein.board import P1_BIN, P2_BIN, instance_from_id, instance_id, make_instance
from puzzles.einstein.generate import generate

from .helpers import NAME, holds


def test_the_cli_default_id_reads_as_the_spec_describes():
    inst = instance_from_id("6_220002_312003_000221_12022_00")
    assert inst.n == 6
    assert inst.start == (P2_BIN, P2_BIN, P1_BIN, P1_BIN, P1_BIN, P2_BIN)
    assert NAME[inst.goal[0]] == "bottom_right_bin"  # "block0 ... its goal is BR (digit 3)"
    assert inst.start[0] == P2_BIN  # "block0 starts in player2_bin"
    assert inst.anchors == (0, 0, 0, 2, 2, 1)
    assert inst.split == (1, 2, 0, 2, 2)
    assert inst.id == "6_220002_312003_000221_12022"  # the solution index is not part of the instance


def test_items_are_the_grounding_of_block0_and_one_true_relation_per_block():
    inst = instance_from_id("6_220002_312003_000221_12022")
    assert inst.items[0] == (0, inst.goal[0])
    kinds = {0: "bin", 1: "column", 2: "row", 3: "diagonal"}
    for i in range(1, 6):
        a, b, delta = inst.items[i]
        assert {a, b} == {i, inst.anchors[i]} and a < b
        assert holds(kinds[delta], NAME[inst.goal[a]], NAME[inst.goal[b]])


def test_each_player_holds_the_grounding_and_the_relations_the_split_gives_it():
    inst = instance_from_id("6_220002_312003_000221_12022")
    # split 1 2 0 2 2 for relations 1..5: 0 player1 only, 1 both, 2 player2 only
    assert inst.knowledge["player1"] == (0, 1, 3)
    assert inst.knowledge["player2"] == (0, 1, 2, 4, 5)


@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
def test_ids_round_trip(n):
    for seed in range(50):
        inst = generate(n, seed)
        again = instance_from_id(instance_id(inst))
        assert again == inst
        assert make_instance(inst.start, inst.goal, inst.anchors, inst.split) == inst


@pytest.mark.parametrize("text", [
    "3_202_012_000_01", "4_2002_0132_0001", "4_2102_0132_0001_012", "4_2002_0142_0001_012",
    "4_2002_0132_0301_012", "4_2002_0132_1001_012", "4_2002_0132_0001_013", "4_20022_0132_0001_012", "hello",
])
def test_bad_ids_are_refused(text):
    with pytest.raises(ValueError):
        instance_from_id(text)


def test_file_names_read_as_ids():
    assert instance_from_id("data/4_2002_0132_0001_012_03.pkl").id == "4_2002_0132_0001_012"
