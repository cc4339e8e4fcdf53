"""The local model server keeps games apart: a player's state and randomness belong to one agent of
one game (named by the engine's X-Game-Id header), so games through a server that has already
served others, on the same puzzles, are the games played in process."""

from __future__ import annotations

import pytest

from engine import Grid
from engine.backends import CALL_GAME
from puzzles.asympuzl.game import GAME
from puzzles.asympuzl.rules import ALICE, BOB

from tests.engine.backends.helpers import fake_server, play, settings_for, without_models

PAIRS = [["noisy", "noisy"], ["noisy", "one_piece"], ["one_piece", "noisy"], ["one_piece", "one_piece"]]


def _plan(model: str | None) -> Grid:
    """Every pair on the same 4 puzzles under three feedback modes and both prompts."""
    agents = [[f"{model}:{a}" if model else a for a in pair] for pair in PAIRS]
    return Grid(
        game="asympuzl", seeds=4, seed=5, agents=agents, feedback=["none", "own", "both_detailed"],
        params={"prompt": ["paper", "guided"], "distractors": [2]},
    )


@pytest.mark.slow
async def test_games_through_a_server_that_served_the_same_puzzles_are_the_games_in_process():
    in_process, _ = await play(_plan(None), settings_for(_NoServer()))
    assert len({r.spec.seed for r in in_process}) == 4  # 48 conditions on the same 4 puzzles
    async with fake_server(latency=0.0) as server:
        first, _ = await play(_plan("openai"), settings_for(server))
        again, _ = await play(_plan("anthropic"), settings_for(server))  # the same games, to the same server
    expected = [without_models(r) for r in in_process]
    assert [without_models(r) for r in first] == expected
    assert [without_models(r) for r in again] == expected
    # The random policy's draws mattered: noisy games on one puzzle differ by feedback mode.
    noisy = {(r.spec.seed, r.spec.options.feedback): r.scores["writes_per_position.alice"] for r in in_process if r.spec.agents[ALICE] == "noisy"}
    assert len(set(noisy.values())) > 4


async def test_the_same_one_game_run_twice_against_one_server_plays_the_same_game():
    plan = Grid(game="asympuzl", seeds=1, agents=[["openai:one_piece", "openai:one_piece"]])
    async with fake_server(latency=0.0) as server:
        first, _ = await play(plan, settings_for(server))
        second, _ = await play(plan, settings_for(server))
    assert first[0].solved_turn is not None and first[0].solved_turn > 2
    assert without_models(second[0]) == without_models(first[0])


async def test_each_game_and_role_has_its_own_player_and_a_call_naming_no_game_keeps_none():
    state = GAME.rules.new(GAME.rules.Params(), 3, (ALICE, BOB), 10)
    context = _first_turn(state, BOB)
    system, user = GAME.faces.prompter.render(context)
    async with fake_server(latency=0.0) as server:
        players = server.players
        plain = [await players.reply("one_piece", system, [user]) for _ in range(2)]
        assert plain[0] == plain[1] and len(players.agents) == 0  # nothing kept without a game
        for game_id in ("run-1;seed=3", "run-2;seed=3"):
            await players.reply("one_piece", system, [user], game_id)
        assert sorted(key[0] for key in players.agents) == ["run-1;seed=3", "run-2;seed=3"]
        # one_piece's Bob offers his next pair when his own game goes on, not when another game does
        again = await players.reply("one_piece", system, [user], "run-1;seed=3")
        fresh = await players.reply("one_piece", system, [user], "run-3;seed=3")
        assert again != fresh == plain[0]


async def test_the_engine_names_the_game_and_its_seed_in_every_call():
    seen: list[str | None] = []
    calls: list[str | None] = []
    async with fake_server(latency=0.0) as server:
        reply = server.players.reply

        async def spy(model, system, users, game_id=None, call_id=None):
            seen.append(game_id)
            calls.append(call_id)
            return await reply(model, system, users, game_id, call_id)

        server.players.reply = spy
        records, _ = await play(Grid(game="asympuzl", seeds=2, seed=1, agents=[["openai:share_everything"] * 2]), settings_for(server))
    assert CALL_GAME.get() is None  # set per game, inside the run only
    names = {game_id.split(";")[0] for game_id in seen}
    assert len(names) == 2 and len(seen) == sum(r.usage[ALICE].calls + r.usage[BOB].calls for r in records)
    assert {game_id.split(";seed=")[1] for game_id in seen} == {str(r.spec.seed) for r in records}
    assert None not in calls and len(set(zip(seen, calls))) == len(seen)  # each call named once


async def test_a_call_asked_again_gets_the_reply_its_first_attempt_got_and_the_player_does_not_play_on():
    state = GAME.rules.new(GAME.rules.Params(), 3, (ALICE, BOB), 10)
    system, user = GAME.faces.prompter.render(_first_turn(state, BOB))
    async with fake_server(latency=0.0) as server:
        players = server.players
        first = await players.reply("one_piece", system, [user], "run-1;seed=3", "0")
        retried = await players.reply("one_piece", system, [user], "run-1;seed=3", "0")
        following = await players.reply("one_piece", system, [user], "run-1;seed=3", "1")
        # the same two calls, with no retry in between, in another game on the same puzzle
        alone = [await players.reply("one_piece", system, [user], "run-2;seed=3", str(i)) for i in range(2)]
    assert retried == first and [first, following] == alone and following != first


def _first_turn(state, role):
    from puzzles.turn import TurnContext

    return TurnContext(
        game_id=0, role=role, turn=1, max_turns=10, view=state.view(role),
        feedback=GAME.rules.feedback["own_detailed"](state, role), conversation=(), partners=(ALICE,),
    )


class _NoServer:
    url = "http://127.0.0.1:9"
