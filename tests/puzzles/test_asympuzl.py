import pytest
from hypothesis import given, settings, strategies as st

"""AsymPuzl's rules: generation, distractors, actions, the end, and the record's figures."""

from puzzles.asympuzl.rules import (
    ALICE, BOB, AsymPuzlGame, Piece, Replace, apply_actions, check_params, generate, is_solved,
    render_clues, render_pieces,
)
from puzzles.positions.rules import wrong_positions
from puzzles.positions.vocab import COLOR_SET, COLORS, SHAPE_SET, SHAPES

sizes = st.integers(min_value=2, max_value=30)
seeds = st.integers(min_value=0, max_value=2**63 - 1)


@settings(max_examples=300, deadline=None)
@given(size=sizes, seed=seeds)
def test_bob_holds_a_permutation_of_the_truth_and_alice_the_shapes_in_order(size, seed):
    puzzle = generate(size, seed)
    truth = puzzle.truth
    assert len(truth) == size
    assert len({p.shape for p in truth}) == size and len({p.color for p in truth}) == size
    assert all(p.shape in SHAPE_SET and p.color in COLOR_SET for p in truth)
    assert sorted(puzzle.clues[BOB], key=lambda p: p.shape) == sorted(truth, key=lambda p: p.shape)
    assert [p.shape for p in puzzle.clues[ALICE]] == [p.shape for p in truth]
    assert all(p.color is None for p in puzzle.clues[ALICE])


@settings(max_examples=300, deadline=None)
@given(size=st.integers(2, 30), distractors=st.integers(1, 10), side=st.sampled_from([ALICE, BOB]), seed=seeds)
def test_distractors_are_outside_the_truth_and_keep_the_real_order(size, distractors, side, seed):
    if size + distractors > min(len(SHAPES), len(COLORS)):
        with pytest.raises(ValueError):
            generate(size, seed, distractors, side)
        return
    puzzle = generate(size, seed, distractors, side)
    truth_shapes = [p.shape for p in puzzle.truth]
    noisy, clean = (ALICE, BOB) if side == ALICE else (BOB, ALICE)
    assert len(puzzle.clues[noisy]) == size + distractors
    assert len(puzzle.clues[clean]) == size
    extra = [p for p in puzzle.clues[noisy] if p.shape not in truth_shapes]
    assert len(extra) == distractors
    if side == ALICE:
        real = [p.shape for p in puzzle.clues[ALICE] if p.shape in truth_shapes]
        assert real == truth_shapes
    else:
        truth_colors = {p.color for p in puzzle.truth}
        assert all(p.color not in truth_colors for p in extra)
        assert set(puzzle.truth) <= set(puzzle.clues[BOB])


def test_same_seed_same_puzzle_and_different_seeds_differ():
    assert generate(10, 42, 3, BOB) == generate(10, 42, 3, BOB)
    assert generate(10, 42) != generate(10, 43)
    # Bob's order really is shuffled for some seeds.
    assert any(generate(5, s).clues[BOB] != generate(5, s).truth for s in range(10))


def test_hypothesis_starts_as_a_copy_of_the_first_n_clues():
    puzzle = generate(5, 7, 3, ALICE)
    assert puzzle.initial_hypothesis(ALICE) == puzzle.clues[ALICE][:5]
    assert puzzle.initial_hypothesis(BOB) == puzzle.clues[BOB]


@pytest.mark.parametrize(
    "size, distractors, side, fragment",
    [(1, 0, ALICE, "size"), (5, 11, ALICE, "distractors"), (35, 10, ALICE, "vocabulary"),
     (5, -1, ALICE, "distractors"), (5, 1, "carol", "distractors_in")],
)
def test_bad_parameters_are_refused_with_a_reason(size, distractors, side, fragment):
    with pytest.raises(ValueError, match=fragment):
        check_params(size, distractors, side)


def test_replace_applies_valid_actions_and_rejects_invalid_ones_with_reasons():
    hypothesis = (Piece("square", None), Piece("circle", None), Piece("star", None))
    actions = (
        Replace(1, "square", "red"),
        Replace(4, "square", "red"),
        Replace(0, "square", "red"),
        Replace(2, "blob", "red"),
        Replace(3, "star", "transparent"),
        Replace(2, "circle", "blue"),
    )
    new, written, rejected = apply_actions(hypothesis, actions)
    assert new == (Piece("square", "red"), Piece("circle", "blue"), Piece("star", None))
    assert written == ((1, hypothesis[0], new[0]), (2, hypothesis[1], new[1]))
    reasons = [r.reason for r in rejected]
    assert reasons == [
        "position 4 is out of range 1..3",
        "position 0 is out of range 1..3",
        "unknown shape 'blob'",
        "unknown color 'transparent'",
    ]
    assert hypothesis[0].color is None  # the input is not mutated


def test_solution_check_and_wrong_positions():
    puzzle = generate(4, 1)
    truth = puzzle.truth
    assert is_solved(truth, truth)
    swapped = (truth[1], truth[0]) + truth[2:]
    assert not is_solved(swapped, truth)
    assert wrong_positions(swapped, truth) == (1, 2)


def test_game_counts_modifications_and_writes_per_position_and_reports_solved():
    puzzle = generate(3, 6)  # Bob starts with position 2 right
    game = AsymPuzlGame(puzzle, max_turns=6)
    assert not game.done() and game.outcome() == "failure"
    bob_right = [p == t for p, t in zip(puzzle.initial_hypothesis(BOB), puzzle.truth)]
    for role in game.roles:
        actions = tuple(Replace(i, p.shape, p.color) for i, p in enumerate(puzzle.truth, 1))
        step = game.step(role, actions + (Replace(1, puzzle.truth[0].shape, puzzle.truth[0].color),))
        assert step.applied == 4 and step.rejected == () and step.say == ()
    assert game.done() and game.outcome() == "success"
    metrics, scores = game.metrics(), game.scores()
    # Position 1 was written twice, changed once; what Bob had right was written, not changed.
    assert metrics["position_writes"] == {ALICE: [2, 1, 1], BOB: [2, 1, 1]}
    assert metrics["position_actions"] == {ALICE: [1, 1, 1], BOB: [int(not right) for right in bob_right]}
    assert metrics["position_actions"][BOB] == [1, 0, 1]
    assert metrics["correct_positions"] == {ALICE: 3, BOB: 3}
    assert scores[f"writes_per_position.{BOB}"] == pytest.approx(4 / 3)
    assert scores[f"actions_per_position.{ALICE}"] == 1.0
    assert scores[f"actions_per_position.{BOB}"] == pytest.approx(sum(not r for r in bob_right) / 3)


def test_a_view_holds_the_roles_clues_and_hypothesis_and_nothing_of_the_partner():
    puzzle = generate(4, 9, 2, BOB)
    game = AsymPuzlGame(puzzle, max_turns=8)
    alice, bob = game.view(ALICE), game.view(BOB)
    assert alice.size == bob.size == 4
    assert alice.clues == puzzle.clues[ALICE] and bob.clues == puzzle.clues[BOB]
    assert all(p.color is None for p in alice.clues + alice.hypothesis)
    assert game.private(BOB) == puzzle.clues[BOB]


def test_renderings_name_every_piece_and_the_unknown_colors():
    puzzle = generate(3, 11, 2, ALICE)
    text = render_clues(ALICE, puzzle.clues[ALICE], 3)
    assert "The puzzle has 3 positions; 2 of the 5 pieces below are not part of the puzzle." in text
    assert "Position 5: the " in text and "is of unknown color." in text
    rendered = render_pieces(puzzle.truth)
    for i, p in enumerate(puzzle.truth, 1):
        assert f"Position {i}: the {p.shape} is {p.color}." in rendered
