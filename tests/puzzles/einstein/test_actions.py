"""Action text as the reference writes and reads it (spec §2.3)."""

import pytest

from puzzles.einstein.actions import (
    Ask, Grounding, Move, Pass, Relation, Share, Unreadable, action_text, malformed, read_action, reply_text,
    why_unreadable,
)


@pytest.mark.parametrize("text, action", [
    ("move block1 from player1_bin to commonbin", Move(1, "player1_bin", "commonbin")),
    ("move   block0  from top_left_bin to\tbottom_right_bin", Move(0, "top_left_bin", "bottom_right_bin")),
    ("share (block2, block1, same, row)", Share(Relation(1, 2, "row"))),
    ("share (block3,block0,same,diagonal)", Share(Relation(0, 3, "diagonal"))),
    ("share (block0, in, bottom_right_bin)", Share(Grounding(0, "bottom_right_bin"))),
    ("share (block0, in, commonbin)", Share(Grounding(0, "commonbin"))),  # parses; never valid
    ("ask block3", Ask(3)),
    ("ask   block30", Ask(30)),
    ("ask block07", Ask(7)),
    ("pass", Pass()),
])
def test_actions_read_as_the_reference_reads_them(text, action):
    assert read_action(text) == action


@pytest.mark.parametrize("text", [
    "", "Pass", "pass.", "pass the turn", "move block1 from player1_bin to commonbin now",
    "move block1 player1_bin commonbin", "move block1 from player3_bin to commonbin", "move blk1 from player1_bin to commonbin",
    "ask block31", "ask block-1", "ask block1 block2", "ask", "share block1", "share (block1, block2, same, near)",
    "share (block1, block2, different, row)", "share (block1, on, top_left_bin)", "share (block1, in, top_bin)",
    "MOVE block1 from player1_bin to commonbin", "jump",
])
def test_anything_else_is_unreadable_with_a_reason(text):
    assert read_action(text) == Unreadable(text)
    assert why_unreadable(text) and why_unreadable(text) != "it reads"


@pytest.mark.parametrize("action, shown", [
    (Move(2, "commonbin", "top_right_bin"), "move block2 from commonbin to top_right_bin"),
    (Share(Relation(1, 4, "column")), "share (block1, block4, same, column)"),
    (Share(Grounding(0, "top_left_bin")), "share (block0, in, top_left_bin)"),
    (Ask(5), "ask block5"),
    (Pass(), "pass the turn"),
    (Unreadable("blah"), "pass the turn"),
])
def test_the_history_writes_actions_as_the_reference(action, shown):
    assert action_text(action) == shown


def test_what_a_player_writes_reads_back():
    for action in (Move(2, "commonbin", "top_right_bin"), Share(Relation(1, 4, "column")), Ask(5), Pass(), Unreadable("x y")):
        assert read_action(reply_text(action)) == action


def test_only_actions_no_reply_can_name_are_malformed():
    assert malformed(Move(31, "player1_bin", "commonbin")) and malformed(Move(1, "moon", "commonbin"))
    assert malformed(Ask(-1)) and malformed(Share(Relation(0, 1, "near"))) and malformed(Share(Relation(2, 1, "row")))
    assert malformed("move")
    for fine in (Move(30, "player1_bin", "player1_bin"), Ask(9), Share(Relation(3, 3, "row")), Pass(), Unreadable("")):
        assert malformed(fine) is None
