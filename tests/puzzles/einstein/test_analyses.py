"""The share-and-ask analysis: counts on games made by hand, and on games the scripted players play
through the engine, where it must agree with the game's own tally of each player's actions."""

from __future__ import annotations

import statistics

import pytest
from engine import RunDir
from engine.analysis.conditions import condition_fields
from engine.analysis.played import condition_label, run_analyses
from puzzles import PlayedGame, PlayedTurn, get_game
from puzzles.einstein.analyses import COLUMNS, EinsteinActionUse
from runners.report import main as report_main
from runners.sweep import main as sweep_main

SHARE = {"action": "share", "item": {"item": "grounding", "block": 0, "bin": "top_left_bin"}}
ASK = {"action": "ask", "block": 2}
MOVE = {"action": "move", "block": 1, "source": "player1_bin", "target": "commonbin"}
PASS = {"action": "pass"}


def turn(n, role, *actions, format_error=None):
    return PlayedTurn(turn=n, role=role, actions=actions, format_error=format_error)


def game(condition, outcome, *turns):
    return PlayedGame(condition=condition, agents={}, params={}, seed=0, outcome=outcome, scores={}, metrics={}, turns=turns)


def rows_by_key(analysis):
    (table,) = analysis.tables()
    assert table.columns == COLUMNS and table.labels == 3
    return {tuple(row[:3]): row[3:] for row in table.rows}


def test_an_empty_analysis_has_no_tables():
    assert EinsteinActionUse().tables() == []
    assert get_game("einstein").records.analyses().tables() == []


def test_counts_of_games_made_by_hand():
    analysis = EinsteinActionUse()
    analysis.add(game(
        "actions=share", "success",
        turn(1, "player1", SHARE), turn(1, "player2", ASK), turn(2, "player1", SHARE), turn(2, "player2", MOVE),
        turn(3, "player1", MOVE, SHARE),  # only the first action of a turn is taken
        turn(3, "player2", format_error="no <ACTION>"),
    ))
    analysis.add(game("actions=share", "success", turn(1, "player1", ASK), turn(1, "player2", PASS)))
    analysis.add(game(
        "actions=share", "failure", turn(1, "player1", MOVE), turn(1, "player2", ASK), turn(2, "player1", ASK),
    ))
    analysis.add(game("actions=ask", "failure", turn(1, "player1", PASS)))
    rows = rows_by_key(analysis)
    # games, shares per game, asks per game, % games with a share, % games with an ask
    assert rows[("actions=share", "success", "player1")] == [2, 1.0, 0.5, 50.0, 50.0]
    assert rows[("actions=share", "success", "player2")] == [2, 0.0, 0.5, 0.0, 50.0]
    assert rows[("actions=share", "failure", "player1")] == [1, 0.0, 1.0, 0.0, 100.0]
    assert rows[("actions=share", "failure", "player2")] == [1, 0.0, 1.0, 0.0, 100.0]
    assert rows[("actions=share", "all", "player1")] == pytest.approx([3, 2 / 3, 2 / 3, 100 / 3, 200 / 3])
    assert rows[("actions=share", "all", "player2")] == pytest.approx([3, 0.0, 2 / 3, 0.0, 200 / 3])
    assert rows[("actions=ask", "failure", "player2")] == [1, 0.0, 0.0, 0.0, 0.0]
    assert ("actions=ask", "success", "player1") not in rows  # no solved game there: no row
    (table,) = analysis.tables()
    assert [row[:3] for row in table.rows[:4]] == [
        ["actions=ask", "failure", "player1"], ["actions=ask", "failure", "player2"],
        ["actions=ask", "all", "player1"], ["actions=ask", "all", "player2"],
    ]


GRID = """
name = "use"
game = "einstein"
seeds = 12
agents = [["seek_only", "random_mover"], ["share_everything", "share_everything"]]
blocks = [4]
actions = ["share_ask"]
"""


def test_games_the_scripted_players_play_agree_with_the_games_own_tally(tmp_path, capsys):
    (tmp_path / "use.toml").write_text(GRID)
    run = tmp_path / "run"
    assert sweep_main([str(tmp_path / "use.toml"), "--out", str(run), "--no-dashboard"]) == 0
    records = RunDir.open(run).records()
    (found,) = run_analyses(records, run).games
    assert found.games == len(records) == 24
    table, pooled = found.tables
    assert table.name == "action_use" and pooled.name == "paper_table1"
    rows = {tuple(row[:3]): row[3:] for row in table.rows}
    fields = condition_fields(records)
    labels = {r.spec.game_id: condition_label(r, fields) for r in records}
    outcomes = {r.outcome for r in records}
    assert outcomes == {"success", "failure"}  # both kinds of row are tested
    expected = {}
    for condition in set(labels.values()):
        for outcome in ("success", "failure", "all"):
            chosen = [r for r in records if labels[r.spec.game_id] == condition and outcome in (r.outcome, "all")]
            if not chosen:
                continue
            for role in ("player1", "player2"):
                shares = [r.metrics["actions"][role]["shares"] for r in chosen]
                asks = [r.metrics["actions"][role]["asks"] for r in chosen]
                expected[(condition, outcome, role)] = [
                    len(chosen), statistics.mean(shares), statistics.mean(asks),
                    100 * sum(s > 0 for s in shares) / len(chosen), 100 * sum(a > 0 for a in asks) / len(chosen),
                ]
    assert rows.keys() == expected.keys()
    for key, row in rows.items():
        assert row == pytest.approx(expected[key]), key
    seeking = rows[("agents=seek_only / random_mover", "all", "player1")]
    sharing = rows[("agents=share_everything", "all", "player1")]
    assert seeking[1] == 0 and seeking[2] > 0  # seek_only asks and never shares
    assert sharing[1] > 0 and sharing[2] == 0  # share_everything shares and never asks
    assert report_main([str(run), "--analyses", "--no-plots"]) == 0
    assert "Share and ask use by outcome" in capsys.readouterr().out
    assert (run / "report" / "analysis_einstein_action_use.csv").is_file()
