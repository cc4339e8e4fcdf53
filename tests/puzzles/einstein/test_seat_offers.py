"""The Einstein seat where the game refuses every move outside the valid set (``random_guess = false``):
it offers only the valid moves, each one choice, listed for the person, so that no choice on offer is
one the game refuses; with guesses the table may refuse a move, which the check catches."""

from __future__ import annotations

import pytest

from engine.policies.seat import ChosenAction, SeatTurn
from puzzles import TurnContext, get_game
from puzzles.einstein.actions import Move
from puzzles.einstein.params import EinsteinParams
from puzzles.seat_check import check_offers_taken
from puzzles.testing import check_seat

GAME = get_game("einstein")
SEAT = GAME.faces.seat


@pytest.mark.parametrize("actions", ["share_ask", "ask", "share", "none"])
def test_without_guesses_no_choice_on_offer_is_refused(actions):
    params = EinsteinParams(random_guess=False, actions=actions)
    check_offers_taken(GAME, params, seeds=range(3))
    check_seat(GAME, params, seeds=range(2))


def test_with_guesses_the_table_refuses_some_moves_on_offer():
    with pytest.raises(AssertionError, match="offered but refused"):
        check_offers_taken(GAME, EinsteinParams(), seeds=range(3))


def test_the_valid_moves_are_listed_and_one_is_played_through_the_form():
    params = EinsteinParams(random_guess=False, actions="share")
    roles = GAME.rules.rosters[0]
    for seed in range(10):  # a seed where the first player can already tell where some block goes
        state = GAME.rules.new(params, seed, roles, 10)
        context = TurnContext(game_id=0, role=roles[0], turn=1, max_turns=10, view=state.view(roles[0]),
                              feedback="", conversation=(), partners=roles[1:])
        move = next((f for f in SEAT.forms(context) if f.kind == "move"), None)
        if move is not None:
            break
    assert move is not None and [f.name for f in move.fields] == ["move"]
    turn = SeatTurn(context, SEAT, 10)
    listed = next(s for s in turn.prompt.sections if s.title == "Your moves").lines
    assert list(move.fields[0].choices) == list(listed)
    assert "your moves are listed" in SEAT.rules(context)
    action = SEAT.action(context, "move", {"move": listed[0]})
    assert isinstance(action, Move) and action in state.valid(roles[0])
    assert not state.step(roles[0], (action,)).rejected
    turn.action(ChosenAction("move", {"move": listed[0]}))  # the page's answer reads the same way
