"""The error labels of spec §3.1 on crafted steps."""

from puzzles.einstein.actions import Ask, Grounding, Move, Pass, Share, Unreadable
from puzzles.einstein.taxonomy import classify

from .test_verifiers import COL, G0, ROW01, ROW23, game


def labels(state, role, action):
    return sorted(classify(state, role, action))


def test_format_and_physical_errors():
    state = game()
    assert labels(state, "player1", Unreadable("??")) == ["format"]
    assert labels(state, "player1", Move(1, "player1_bin", "commonbin")) == ["object_not_in_source"]
    assert labels(state, "player1", Move(2, "player2_bin", "top_right_bin")) == [
        "destination_unreachable", "object_not_in_source", "source_unreachable",
    ]
    assert labels(state, "player1", Move(9, "player1_bin", "commonbin")) == ["object_not_in_source"]
    assert labels(state, "player1", Move(2, "player1_bin", "commonbin")) == []  # the planner's move
    assert labels(state, "player1", Pass()) == []


def test_reasoning_errors_depend_on_what_the_player_can_infer():
    state = game()
    assert labels(state, "player1", Move(0, "player1_bin", "bottom_left_bin")) == ["wrong_rule_understanding"]
    assert labels(state, "player1", Move(0, "player1_bin", "commonbin")) == ["wrong_rule_understanding"]  # its side
    assert labels(state, "player1", Move(0, "player1_bin", "player1_bin")) == ["same_source_destination", "wrong_rule_understanding"]
    assert labels(state, "player2", Move(3, "player2_bin", "top_right_bin")) == ["wrong_random_guess"]  # unknown to player2
    assert labels(state, "player2", Move(3, "player2_bin", "top_left_bin")) == []  # a lucky guess
    assert labels(state, "player2", Move(3, "player2_bin", "commonbin")) == []


def test_communication_errors():
    state = game()
    assert labels(state, "player1", COL) == ["redundant_share"]  # player2 holds it from the start
    assert labels(state, "player1", G0) == ["redundant_share"]
    assert labels(state, "player1", ROW23) == []
    assert labels(state, "player1", ROW01) == ["unknown_share"]
    assert labels(state, "player1", Share(Grounding(1, "bottom_left_bin"))) == ["unknown_share"]
    assert labels(state, "player1", Ask(0)) == ["seek_known_object"] and labels(state, "player1", Ask(1)) == []
    state.step("player1", (ROW23,))
    assert labels(state, "player2", ROW23) == ["redundant_share"]  # shared to it: marked
    state.step("player2", (Ask(3),))  # player2 could have placed block3 now; it asks anyway
    assert classify(state, "player1", Pass()) == []  # nothing left about block3 to share


def test_errors_after_an_ask():
    state = game(actions="ask")
    state.step("player1", (Pass(),))
    state.step("player2", (Ask(3),))
    assert labels(state, "player1", Move(0, "player1_bin", "bottom_right_bin")) == ["no_share_after_seek"]
    assert labels(state, "player1", G0) == ["redundant_share", "wrong_share_after_seek"]
    assert labels(state, "player1", ROW23) == []
    state.step("player1", (Move(0, "player1_bin", "bottom_right_bin"),))
    counts = state.metrics()["errors"]["player1"]
    assert counts["no_share_after_seek"] == 1 and sum(counts.values()) == 1


def test_every_label_is_counted_per_player():
    state = game()
    state.step("player1", (Unreadable("x"),))
    state.step("player2", (Move(3, "player2_bin", "top_right_bin"),))
    metrics = state.metrics()
    assert metrics["errors"]["player1"]["format"] == 1 and metrics["errors"]["player2"]["wrong_random_guess"] == 1
    assert metrics["actions"]["player1"]["unreadable"] == 1 and metrics["actions"]["player2"]["moves"] == 1
    assert metrics["actions"]["player2"]["failed"] == 1 and metrics["actions"]["player2"]["guesses"] == 1
