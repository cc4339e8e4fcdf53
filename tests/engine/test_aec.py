"""The PettingZoo AEC environment: PettingZoo's own API test for every registered game, and games
played through it as the turn machine plays them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

import asymgames
from engine.play.aec import GameEnv, ScriptedPlayers, env
from puzzles import GAMES
from puzzles.testing import play_scripted


@pytest.mark.parametrize("name", list(GAMES))
def test_every_game_passes_pettingzoos_api_test(name, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its advice on numeric spaces, which a text game does not take
        api_test(env(name), num_cycles=200)
    assert "Passed API test" in capsys.readouterr().out


def _play(e: GameEnv, seed: int, players: ScriptedPlayers) -> tuple[str, int, dict]:
    e.reset(seed=seed)
    rewards = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        observation, reward, terminated, truncated, info = e.last()
        rewards[agent] += reward
        assert e.text(observation) == "\n\n".join(e.prompt(agent))
        if terminated or truncated:
            e.step(None)
            continue
        e.step(players.reply(agent))
    return info["outcome"], e.referee.turn, rewards


@pytest.mark.parametrize("name", list(GAMES))
def test_scripted_players_through_the_env_play_the_game_as_the_turn_machine_does(name):
    game = GAMES[name]
    e = env(name)
    for strategy in game.rules.scripted:
        players = ScriptedPlayers(e, dict.fromkeys(e.possible_agents, strategy))
        for seed in range(3):
            outcome, turns, rewards = _play(e, seed, players)
            expected = play_scripted(game, game.rules.Params(), seed, e.roles, dict.fromkeys(e.roles, strategy))
            assert (outcome, turns) == (expected.outcome, expected.turns), (strategy, seed)
            assert set(rewards.values()) == {1.0 if outcome == "success" else 0.0}


def test_a_reply_that_cannot_be_read_uses_the_turn_and_is_told_next_time():
    e = env(seed=5)
    e.reset()
    first = e.agent_selection
    e.step("no reply in the game's format")
    assert e.referee.log[-1].format_error and e.referee.log[-1].applied == 0
    while e.agent_selection != first:
        e.step(ScriptedPlayers(e).reply(e.agent_selection))
    assert "could not be read" in e.prompt(first)[1]
    assert e.infos[first]["turn"] == 2


def test_the_game_ends_truncated_at_the_turn_limit_and_the_spaces_hold_what_passes():
    e = env(max_turns=2, max_prompt_bytes=64)
    e.reset(seed=1)
    for agent in e.agent_iter():
        observation, reward, terminated, truncated, info = e.last()
        assert e.observation_space(agent).contains(observation) and info["cut"]
        e.step(None if terminated or truncated else "")
    assert e.agents == [] and info["outcome"] == "failure"
    assert truncated and not terminated and reward == 0.0
    with pytest.raises(ValueError, match="is played by"):
        env(roles=("nobody", "else"))


def test_a_simultaneous_round_shows_everyone_the_state_at_its_start():
    e = env(turn_order="simultaneous")
    e.reset(seed=2)
    players = ScriptedPlayers(e)
    first, second = e.possible_agents[:2]
    before = e.prompt(second)
    e.step(players.reply(first))
    assert e.agent_selection == second and e.prompt(second) == before  # the first's message waits for the round's end
    e.step(players.reply(second))
    assert e.referee.turn == 2 and e.agent_selection == first and e.prompt(second) != before


def test_the_package_offers_the_environment():
    assert asymgames.GameEnv is GameEnv and asymgames.env is env
    e = env()
    assert e.observation_space("x") is e.observation_space("y") and e.observation_space("x").dtype == np.uint8
