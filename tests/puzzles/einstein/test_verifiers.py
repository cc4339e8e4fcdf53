"""The three verifiers (spec §3.2) on crafted positions, with and without the fixes of their gaps,
and the choice among candidates."""

import msgspec
import pytest

from puzzles.einstein.actions import Ask, Grounding, Move, Pass, Relation, Share, Unreadable
from puzzles.einstein.board import instance_from_id
from puzzles.einstein.params import EinsteinParams
from puzzles.einstein.rules import EinsteinGame
from puzzles.einstein.verifiers import error_cost

# 4_0202_3120_0002_210: goals block0 BR, block1 BL, block2 TR, block3 TL; starts P1, P2, P1, P2.
# player1 holds (block0, in, BR), (block0, block2, same, column) [both], (block2, block3, same, row) [its own]:
# it can place 0, 2, 3, not 1. player2 holds the grounding, (block0, block1, same, row) and the column.
ID = "4_0202_3120_0002_210"
G0 = Share(Grounding(0, "bottom_right_bin"))
COL = Share(Relation(0, 2, "column"))
ROW23 = Share(Relation(2, 3, "row"))
ROW01 = Share(Relation(0, 1, "row"))


def game(**params):
    return EinsteinGame(instance_from_id(ID), EinsteinParams(**params), 15)


def costs(state, verifier, actions, role="player1"):
    before = msgspec.json.encode([state.view(r) for r in state.roles])
    out = [error_cost(state, role, a, verifier) for a in actions]
    assert msgspec.json.encode([state.view(r) for r in state.roles]) == before  # pure
    return out


def test_affordance_judges_moves_by_reach_and_place_only():
    state = game(verifier="affordance")
    moves = [
        Move(0, "player1_bin", "bottom_right_bin"), Move(0, "player1_bin", "top_right_bin"),
        Move(1, "player1_bin", "commonbin"), Move(0, "player1_bin", "player1_bin"), Move(1, "player2_bin", "commonbin"),
        Move(2, "player1_bin", "bottom_left_bin"),  # wrong bin, but possible
    ]
    assert costs(state, "affordance", moves) == [0, 1, 1, 1, 1, 0]
    assert costs(state, "affordance", [Share(Relation(0, 1, "row")), Ask(0), Pass(), Unreadable("x")]) == [0, 0, 0, 0]
    assert costs(game(verifier="affordance", fix_affordance=True), "affordance", [Unreadable("x")]) == [1]


def test_communication_judges_shares_by_what_the_player_holds_and_lets_every_ask_pass():
    state = game(verifier="communication")
    shares = [ROW23, COL, G0, ROW01, Share(Grounding(0, "commonbin"))]
    assert costs(state, "communication", shares) == [0, 0, 0, 1, 1]
    assert costs(state, "communication", [Ask(0), Ask(1), Ask(9), Pass(), Move(1, "player2_bin", "top_left_bin"), Unreadable("")]) == [0, 0, 0, 0, 0, 1]
    fixed = game(verifier="communication", fix_communication=True)
    assert costs(fixed, "communication", [Ask(0), Ask(1), Ask(9)]) == [2, 0, 2]
    state.step("player1", (ROW23,))
    state.step("player2", (Pass(),))
    assert costs(state, "communication", [ROW23]) == [1]  # marked shared


def test_communication_reads_the_marks_as_the_players_last_step_left_them():
    state = game(verifier="communication")
    state.step("player1", (Move(0, "player1_bin", "bottom_right_bin"),))  # the grounding is now settled
    state.step("player2", (Pass(),))
    assert costs(state, "communication", [G0]) == [0]  # not marked yet: the reference's flags lag a step
    assert costs(state, "reasoning", [G0]) == [1]  # the valid set drops it
    state.step("player1", (Pass(),))
    state.step("player2", (Pass(),))
    assert costs(state, "communication", [G0]) == [1]


def test_reasoning_accepts_exactly_the_valid_set_when_there_is_one():
    state = game(verifier="reasoning")
    actions = [
        Move(0, "player1_bin", "bottom_right_bin"), Move(2, "player1_bin", "commonbin"), Move(2, "player1_bin", "bottom_left_bin"),
        ROW23, COL, ROW01, Ask(1), Ask(0), Pass(), Unreadable("x"),
    ]
    assert costs(state, "reasoning", actions) == [0, 0, 1, 0, 0, 1, 0, 2, 1, 1]


def test_reasoning_with_nothing_valid_accepts_a_pass_or_any_possible_move():
    state = game(verifier="reasoning", actions="none")
    state.step("player1", (Move(0, "player1_bin", "bottom_right_bin"),))
    state.step("player2", (Pass(),))
    state.step("player1", (Move(2, "player1_bin", "commonbin"),))
    state.step("player2", (Pass(),))
    assert state.valid("player1") == []
    actions = [Pass(), Move(2, "commonbin", "bottom_left_bin"), Move(2, "commonbin", "commonbin"), Move(1, "player2_bin", "commonbin"), Ask(1), Unreadable("")]
    assert costs(state, "reasoning", actions) == [0, 0, 1, 1, 2, 1]


def test_reasoning_rejects_an_ask_mode_answer_unless_fixed():
    for fix, expected in ((False, 1), (True, 0)):
        state = game(verifier="reasoning", actions="ask", fix_reasoning=fix)
        state.step("player1", (Pass(),))
        state.step("player2", (Ask(3),))
        assert ROW23 in state.valid("player1")  # the game takes the answer
        assert costs(state, "reasoning", [ROW23]) == [expected]


def test_choose_plays_the_first_that_passes_else_the_least_costly_and_records_it():
    state = game(verifier="reasoning")
    assert state.candidates_wanted("player1") == 4 and game().candidates_wanted("player1") == 1
    good, bad = Move(0, "player1_bin", "bottom_right_bin"), Move(2, "player1_bin", "bottom_left_bin")
    assert state.choose("player1", ((bad,), (Ask(0),), (good,), (good,))) == 2
    state.step("player1", (good,))
    assert state.choose("player2", ((Ask(0),), (Pass(),), (Unreadable(""),))) == 1  # costs 2, 1, 1: first of the least
    state.step("player2", (Pass(),))
    assert state.choose("player1", ((), (Pass(),))) == 0  # an empty candidate reads as unreadable: both cost 1
    state.step("player1", (Unreadable(""),))
    summary = state.metrics()["verifier"]
    assert summary["player1"] == {"steps": 2, "corrected": 1, "sum_err": (1 + 2) + (1 + 1), "chosen": [2, 0], "candidates": [4, 2]}
    assert summary["player2"] == {"steps": 1, "corrected": 0, "sum_err": 2 + 1 + 1, "chosen": [1], "candidates": [3]}
    assert state.scores()["corrected_rate"] == 1 / 3


def test_the_communication_verifier_refuses_the_none_mode():
    from puzzles.base import InvalidParameter

    with pytest.raises(InvalidParameter):
        EinsteinParams(verifier="communication", actions="share/none").check()
