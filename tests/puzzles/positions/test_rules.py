"""The six feedback modes of the position games, and how they read."""

from puzzles.asympuzl.game import GAME
from puzzles.asympuzl.rules import ALICE, BOB, ROLE_NAMES, AsymPuzlGame, Piece, Replace, generate
from puzzles.positions.rules import MODES, Feedback, RoleStatus, render_feedback as render


def render_feedback(feedback):
    return render(feedback, lambda role: ROLE_NAMES[role])


TRUTH = (Piece("square", "red"), Piece("circle", "blue"), Piece("star", "green"))
ALICE_WRONG_2_3 = (Piece("square", "red"), Piece("circle", None), Piece("star", None))
HYPOTHESES = {ALICE: ALICE_WRONG_2_3, BOB: TRUTH}


def test_none_gives_nothing():
    fb = MODES["none"](TRUTH, HYPOTHESES, ALICE)
    assert fb == Feedback(mode="none")
    assert render_feedback(fb) == ""


def test_own_says_only_whether_the_own_hypothesis_is_solved():
    assert MODES["own"](TRUTH, HYPOTHESES, ALICE).own == RoleStatus(ALICE, solved=False)
    fb = MODES["own"](TRUTH, HYPOTHESES, BOB)
    assert fb.own == RoleStatus(BOB, solved=True) and fb.others == () and fb.joint_solved is None


def test_own_detailed_lists_the_wrong_positions():
    fb = MODES["own_detailed"](TRUTH, HYPOTHESES, ALICE)
    assert fb.own == RoleStatus(ALICE, solved=False, wrong=(2, 3))
    assert render_feedback(fb) == "Your part of the puzzle is unsolved; wrong positions: 2, 3."
    assert MODES["own_detailed"](TRUTH, HYPOTHESES, BOB).own == RoleStatus(BOB, solved=True, wrong=())


def test_joint_says_whether_both_are_solved():
    assert MODES["joint"](TRUTH, HYPOTHESES, BOB) == Feedback(mode="joint", joint_solved=False)
    assert MODES["joint"](TRUTH, {ALICE: TRUTH, BOB: TRUTH}, ALICE).joint_solved is True
    assert render_feedback(MODES["joint"](TRUTH, HYPOTHESES, BOB)) == "The puzzle is not solved yet."


def test_both_tells_own_and_partner_status_without_positions():
    fb = MODES["both"](TRUTH, HYPOTHESES, BOB)
    assert fb.own == RoleStatus(BOB, solved=True)
    assert fb.others == (RoleStatus(ALICE, solved=False),)
    assert render_feedback(fb) == (
        "Your part of the puzzle is solved.\nAlice's part of the puzzle is unsolved."
    )


def test_both_detailed_lists_wrong_positions_on_both_sides():
    fb = MODES["both_detailed"](TRUTH, HYPOTHESES, BOB)
    assert fb.own == RoleStatus(BOB, solved=True, wrong=())
    assert fb.others == (RoleStatus(ALICE, solved=False, wrong=(2, 3)),)
    assert "Alice's part of the puzzle is unsolved; wrong positions: 2, 3." in render_feedback(fb)


def test_the_games_feedback_reads_the_state_as_it_is_when_asked():
    puzzle = generate(3, 4)
    state = AsymPuzlGame(puzzle, max_turns=6)
    first = puzzle.truth[0]
    state.step(ALICE, (Replace(1, first.shape, first.color),))
    fb = GAME.rules.feedback["both_detailed"](state, BOB)
    alice_wrong = tuple(i for i in (2, 3))
    assert fb.others == (RoleStatus(ALICE, solved=False, wrong=alice_wrong),)
    assert list(GAME.rules.feedback) == list(MODES) and GAME.rules.default_feedback == "own_detailed"
