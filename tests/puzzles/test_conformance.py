"""Every registered game passes the contract's conformance check, and the check catches games that
break it."""

import dataclasses

import msgspec
import pytest

from puzzles import GAMES, Step
from puzzles.testing import check_game


@pytest.mark.parametrize("name", list(GAMES))
def test_every_registered_game_passes_the_conformance_check(name):
    check_game(GAMES[name])


def test_the_check_catches_a_view_that_shows_a_partners_private_information():
    game = GAMES["asympuzl"]

    def new(params, seed, roles, max_turns):
        state = game.rules.new(params, seed, roles, max_turns)
        state.view = lambda role: [state.private(r) for r in state.roles]  # everyone sees everything
        return state

    with pytest.raises(AssertionError, match="private"):
        check_game(dataclasses.replace(game, rules=dataclasses.replace(game.rules, new=new)))


def test_the_check_catches_a_rejected_action_that_changes_the_state():
    game = GAMES["chain"]

    def new(params, seed, roles, max_turns):
        state = game.rules.new(params, seed, roles, max_turns)
        step = state.step

        def sloppy(role, actions):
            result = step(role, actions)
            state._counts[role][0] += 1  # counts even what it rejects
            return result

        state.step = sloppy
        return state

    with pytest.raises(AssertionError, match="changed the state"):
        check_game(dataclasses.replace(game, rules=dataclasses.replace(game.rules, new=new)))


def test_the_check_catches_a_game_that_differs_from_seed_to_seed_run():
    game = GAMES["asympuzl"]
    calls = []

    def new(params, seed, roles, max_turns):
        calls.append(seed)
        return game.rules.new(params, seed + len(calls), roles, max_turns)  # not a function of the seed

    with pytest.raises(AssertionError, match="seed"):
        check_game(dataclasses.replace(game, rules=dataclasses.replace(game.rules, new=new)))


def test_the_check_catches_a_reply_format_that_does_not_read_back():
    game = GAMES["asympuzl"]

    class Lossy(type(game.faces.prompter)):
        def format(self, reply, prose=""):
            return super().format(msgspec.structs.replace(reply, message=reply.message[:-1]), prose)

    with pytest.raises(AssertionError, match="reads back differently"):
        check_game(dataclasses.replace(game, faces=dataclasses.replace(game.faces, prompter=Lossy())))


def test_step_of_a_game_is_a_struct_with_reasons():
    assert Step().applied == 0 and Step().say == ()
