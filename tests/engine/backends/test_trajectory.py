"""A seat's turns as token sequences: the loss mask, the turn boundaries, and a prompt that does not
begin with the chat so far reported and cut, never joined."""

from __future__ import annotations

import pytest

from bus import Tokens
from engine.backends import Boundary, Mismatch, seat_trajectory, turn_prompt_ids


def test_turns_that_extend_the_chat_join_into_one_sequence_masked_where_the_seat_generated():
    turns = [Tokens((1, 2, 3), (4, 5), (-0.1, -0.2)), Tokens((1, 2, 3, 4, 5, 9, 7), (8, 2), (-0.3, -0.4))]
    trajectory = seat_trajectory(turns)
    (sequence,) = trajectory.sequences
    assert sequence.ids == (1, 2, 3, 4, 5, 9, 7, 8, 2)
    assert sequence.mask == (0, 0, 0, 1, 1, 0, 0, 1, 1)
    assert sequence.logprobs == (0.0, 0.0, 0.0, -0.1, -0.2, 0.0, 0.0, -0.3, -0.4)
    assert trajectory.turns == (Boundary(0, 0, 3, 5), Boundary(0, 5, 7, 9))
    assert trajectory.mismatches == ()
    assert turn_prompt_ids(trajectory, 1) == turns[1].prompt_ids  # what the server consumed for that turn


@pytest.mark.parametrize("prompt, offset", [
    ((1, 2, 3, 6, 5, 9), 3),  # the reply's tokens as the server cut its text differ from those sampled
    ((1, 2, 3, 4), 4),  # the template dropped the end of the reply
])
def test_a_prompt_that_does_not_begin_with_the_chat_so_far_is_reported_and_starts_a_new_sequence(prompt, offset):
    turns = [Tokens((1, 2, 3), (4, 5), (-0.1, -0.2)), Tokens(prompt, (8,), (-0.3,)), Tokens((*prompt, 8, 7), (6,), (-0.5,))]
    trajectory = seat_trajectory(turns)
    assert trajectory.mismatches == (Mismatch(1, offset, (1, 2, 3, 4, 5)[offset:], prompt[offset:]),)
    first, second = trajectory.sequences
    assert first.ids == (1, 2, 3, 4, 5) and second.ids == (*prompt, 8, 7, 6)
    assert [b.sequence for b in trajectory.turns] == [0, 1, 1]
    assert [turn_prompt_ids(trajectory, i) for i in range(3)] == [t.prompt_ids for t in turns]


def test_without_chat_memory_each_turn_is_a_sequence_of_its_own_and_nothing_is_a_mismatch():
    turns = [Tokens((1, 2), (3,), (-0.1,)), Tokens((1, 9), (4,), (-0.2,))]
    trajectory = seat_trajectory(turns, chat=False)
    assert [s.ids for s in trajectory.sequences] == [(1, 2, 3), (1, 9, 4)]
    assert [s.mask for s in trajectory.sequences] == [(0, 0, 1), (0, 0, 1)]
    assert trajectory.mismatches == ()


@pytest.mark.parametrize("tokens, message", [
    (Tokens((1,), None, None), "turn 0 has no token ids or logprobs"),
    (Tokens((1,), (2, 3), (-0.1,)), "turn 0 has 1 logprobs for 2 completion tokens"),
])
def test_a_turn_without_its_tokens_is_refused(tokens, message):
    with pytest.raises(ValueError, match=message):
        seat_trajectory([tokens])
