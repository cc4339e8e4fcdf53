"""Traveling Adventurers' analysis of suggest arguments (the paper's Tables 2, 5 and 6): counted by
hand on made-up games, hostile arguments included, and read from the transcripts of scripted games."""

from __future__ import annotations

import json

import msgspec
import pytest

from engine import Grid
from engine.analysis.played import played_game
from engine.records.transcribe import TranscriptMaker
from engine.records.transcripts import Transcript
from puzzles import PlayedGame, PlayedTurn
from puzzles.tsp.analyses import SuggestLengths
from puzzles.tsp.game import GAME

from tests.helpers import play


def suggest(argument) -> dict:
    return {"name": "suggest", "argument": argument if isinstance(argument, str) else json.dumps(argument)}


TOUR = ["L", "B", "A", "E", "K", "C", "L"]


def made_up(outcome: str, light: list, ghost: list, rooms: int = 6, condition: str = "c") -> PlayedGame:
    """A game in which light and ghost take these actions, one turn each."""
    return PlayedGame(
        condition=condition, agents={"light": "a", "ghost": "b"}, params={"game": "tsp", "rooms": rooms}, seed=0,
        outcome=outcome, scores={}, metrics={},
        turns=(PlayedTurn(turn=1, role="light", actions=tuple(light)), PlayedTurn(turn=1, role="ghost", actions=tuple(ghost))),
    )


def tables(*games: PlayedGame) -> dict:
    analysis = SuggestLengths()
    for g in games:
        analysis.add(g)
    return {t.name: t for t in analysis.tables()}


def test_no_games_give_no_tables():
    assert SuggestLengths().tables() == []
    assert GAME.records.analyses().tables() == []


def test_suggestions_are_counted_by_length_with_unreadable_and_overlong_ones_apart():
    light = [suggest(["L", "B"]), suggest(["L", "B"]), suggest(TOUR), suggest(["L", "E", "K", "B", "C", "A", "E", "L"]),
             suggest("[" * 1000 + "]" * 1000),  # nested past what the parser takes
             {"name": "agree-inner", "argument": '["L", "B"]'}, {"name": "end", "argument": json.dumps(TOUR)}]
    ghost = [
        suggest("['L', 'B', 'A']"),  # a Python list, as the game reads it
        suggest('["L", "B"'),  # cut short
        suggest("__import__('os').system('echo hi')"),
        suggest(7),  # not text at all
        suggest(["L"] * 12),
        "suggest([\"L\", \"B\"])",  # not an action as the transcript holds one: left out
        {"argument": '["L", "B"]'},
    ]
    found = tables(made_up("success", light, ghost))
    lengths = found["suggest_lengths"]
    assert lengths.columns == ["condition", "agent", "role", "2 (node-by-node)", "3", "4", "5", "6", "7 (full path)", "8",
                               "over 8", "unreadable", "suggests"]
    assert lengths.labels == 3
    assert lengths.rows == [
        ["c", "a", "light", 40.0, 0.0, 0.0, 0.0, 0.0, 20.0, 20.0, 0.0, 20.0, 5],
        ["c", "b", "ghost", 0.0, 20.0, 0.0, 0.0, 0.0, 0.0, 0.0, 20.0, 60.0, 5],
    ]
    strategies = found["suggest_strategies"]
    assert strategies.columns == ["condition", "agent", "role", "games", "node-by-node", "full path", "suggests"]
    assert strategies.rows == [["c", "a", "light", 1, 40.0, 20.0, 5], ["c", "b", "ghost", 1, 0.0, 0.0, 5]]


def test_the_strategies_split_by_outcome_and_a_silent_role_shows_no_percentages():
    won = made_up("success", [suggest(["L", "B"]), suggest(TOUR)], [suggest(["L", "K"])])
    lost = made_up("failure", [suggest(["L", "K"])], [])
    found = tables(won, lost)
    assert found["suggest_strategies"].rows == [["c", "a", "light", 2, pytest.approx(200 / 3), pytest.approx(100 / 3), 3],
                                                ["c", "b", "ghost", 2, 100.0, 0.0, 1]]
    by_outcome = found["suggest_strategies_by_outcome"]
    assert by_outcome.labels == 4
    assert by_outcome.rows == [
        ["c", "a", "light", "success", 1, 50.0, 50.0, 2],
        ["c", "a", "light", "failure", 1, 100.0, 0.0, 1],
        ["c", "b", "ghost", "success", 1, 100.0, 0.0, 1],
        ["c", "b", "ghost", "failure", 1, None, None, 0],
    ]


def test_a_full_path_is_a_round_trip_of_the_games_own_board():
    small = made_up("success", [suggest(["L", "E", "K", "B", "L"])], [suggest(["L", "E", "K", "B"])], rooms=4, condition="4 rooms")
    large = made_up("success", [suggest(TOUR)], [suggest(["L", "B"])], condition="6 rooms")
    found = tables(large, small)
    assert [row[:6] for row in found["suggest_strategies"].rows] == [
        ["4 rooms", "a", "light", 1, 0.0, 100.0], ["4 rooms", "b", "ghost", 1, 0.0, 0.0],
        ["6 rooms", "a", "light", 1, 0.0, 100.0], ["6 rooms", "b", "ghost", 1, 100.0, 0.0],
    ]
    lengths = found["suggest_lengths"]
    assert lengths.columns[3:-1] == ["2 (node-by-node)", "3", "4", "5", "6", "7"]  # no one full path for both sizes
    assert lengths.rows[0] == ["4 rooms", "a", "light", 0.0, 0.0, 0.0, 100.0, 0.0, 0.0, 1]


def scripted_tables(light: str, ghost: str, games: int, **params) -> dict:
    """The tables over scripted games, read from their transcripts as a report reads them."""
    plan = Grid(game="tsp", seeds=games, agents=[[light, ghost]], params={k: [v] for k, v in params.items()})
    analysis = SuggestLengths()
    for index in range(games):
        spec = plan.spec(index)
        maker = TranscriptMaker(full=False)
        record = play(spec, taps=[maker.game_started(spec)])
        transcript = msgspec.json.decode(maker.line(spec, record), type=Transcript)
        analysis.add(played_game(record, transcript, "all"))
    return {t.name: t for t in analysis.tables()}


def test_node_by_node_players_suggest_one_hop_at_a_time():
    for rows in (scripted_tables("joint_greedy", "joint_greedy", 3)["suggest_strategies"].rows,
                 scripted_tables("ibp_node", "ibp_node", 3, rooms=5)["suggest_strategies"].rows):
        assert [row[4:6] for row in rows] == [[100.0, 0.0], [100.0, 0.0]]
        assert all(row[6] > 0 for row in rows)


def test_full_share_players_suggest_the_whole_round_trip():
    found = scripted_tables("full_share", "full_share", 3, rooms=4)
    assert found["suggest_strategies"].rows == [["all", "full_share", "light", 3, 0.0, 100.0, 3],
                                                ["all", "full_share", "ghost", 3, 0.0, 100.0, 3]]
    assert found["suggest_lengths"].columns[3:] == ["2 (node-by-node)", "3", "4", "5 (full path)", "suggests"]


def test_parameters_that_name_no_board_are_read_as_the_papers_six_rooms():
    for rooms in (10**9, "six", None, True):
        game = made_up("success", [suggest(TOUR)], [], rooms=rooms)
        assert tables(game)["suggest_strategies"].rows[0][4:] == [0.0, 100.0, 1]
