"""AsymPuzl's analyses on played games, read as the report reads them (``engine.analysis.played``):
the scripted strategies are the ground truth of the classes (``share_everything`` all at once,
``one_piece`` piece by piece, ``ignore`` ignores), for two agents and for the chain puzzle's three,
with distractors, a message budget and an action limit; and every AsymPuzl and chain game a real
model played (``tests/data/real_model``) goes through without error into well-formed tables."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import msgspec
import pytest

from engine import RunDir
from engine.analysis.played import run_analyses
from engine.plan.spec import game_seed
from puzzles import GAMES, AnalysisTable, PlayedGame, PlayedTurn, ReplyFormatError
from runners.concurrent import main as run_main

DATA = Path(__file__).resolve().parents[1] / "data" / "real_model"
CLASSES = ["all at once", "piece by piece", "ignores", "other"]


def analysed(tmp_path: Path, *flags: str, games: int = 6) -> dict[str, AnalysisTable]:
    """Play one condition with scripted agents and return its analysis tables by name."""
    run = tmp_path / "run"
    assert run_main([*flags, "--games", str(games), "--transcripts", "--out", str(run), "--no-dashboard"]) == 0
    (found,) = run_analyses(RunDir.open(run).records(), run).games
    assert found.games == games and found.without_transcript == 0
    return {t.name: t for t in found.tables}


def classes(tables: dict[str, AnalysisTable]) -> dict[str, str]:
    """Each role's class, where every game of the run gave it the same one."""
    found = {}
    for row in tables["strategies"].rows:
        if row[2] == "all":
            shares = dict(zip(CLASSES, row[4:]))
            found[row[1]] = next((c for c, share in shares.items() if share == 100.0), f"mixed {shares}")
    return found


def signatures(tables: dict[str, AnalysisTable]) -> dict[str, list]:
    return {row[1]: row[2:] for row in tables["failure_signatures"].rows}


def check_well_formed(tables: list[AnalysisTable]) -> int:
    """The rows add up: outcomes to all, classes to 100 %, failed games within games, percentages
    as their counts say. Returns the games the strategies table counts over its conditions and roles."""
    games = 0
    for table in tables:
        assert all(len(row) == len(table.columns) for row in table.rows)
        if table.name == "strategies":
            counts: dict[tuple, dict[str, int]] = defaultdict(dict)
            for condition, role, outcome, n, *shares in table.rows:
                counts[(condition, role)][outcome] = n
                assert sum(shares) == pytest.approx(100.0) and all(0.0 <= s <= 100.0 for s in shares)
                assert all(s * n / 100 == pytest.approx(round(s * n / 100)) for s in shares)
            for by in counts.values():
                assert by["all"] == by.get("success", 0) + by.get("failure", 0)
                games += by["all"]
        elif table.name == "failure_signatures":
            for condition, role, n, failed, *shares in table.rows:
                assert 0 <= failed <= n
                for in_failed, in_all in (shares[0:2], shares[2:4]):
                    assert (in_failed is None) == (failed == 0)
                    of_all, of_failed = in_all * n / 100, (in_failed or 0.0) * failed / 100
                    assert of_all == pytest.approx(round(of_all)) and of_failed == pytest.approx(round(of_failed))
                    assert round(of_failed) <= round(of_all) <= round(of_failed) + n - failed
    return games


@pytest.mark.parametrize("policy, expected, failed", [
    ("share_everything", "all at once", False), ("one_piece", "piece by piece", False), ("ignore", "ignores", True),
])
@pytest.mark.parametrize("puzzle", [
    (), ("--distractors", "3"), ("--distractors", "3", "--distractors-in", "bob"), ("--size", "2"),
])
def test_each_scripted_strategy_reads_as_its_class(tmp_path, policy, expected, failed, puzzle):
    tables = analysed(tmp_path, "--alice", policy, "--bob", policy, *puzzle, games=4)
    assert classes(tables) == {"alice": expected, "bob": expected}
    idle = 100.0 if failed else 0.0  # ignoring is idle in every game; the others never are
    for role, row in signatures(tables).items():
        assert row[1] == (4 if failed else 0) and row[3] == idle and row[5] == 0.0, (role, row)


def test_mixed_strategies_read_per_role(tmp_path):
    tables = analysed(tmp_path, "--alice", "share_everything", "--bob", "ignore")
    assert classes(tables) == {"alice": "all at once", "bob": "ignores"}
    assert signatures(tables)["alice"][3] == 0.0 and signatures(tables)["bob"][2:4] == [100.0, 100.0]


def test_over_correction_is_what_the_records_count(tmp_path):
    """noisy with a bare solved/unsolved signal rewrites everything: some positions are modified 4
    times or more, in exactly the games whose records say so."""
    tables = analysed(tmp_path, "--alice", "noisy", "--bob", "noisy", "--feedback", "own", games=8)
    records = RunDir.open(tmp_path / "run").records()
    over = sum(any(max(c) >= 4 for c in r.metrics["position_actions"].values()) for r in records)
    assert over > 0 and signatures(tables)["any"][5] == pytest.approx(100.0 * over / len(records))


@pytest.mark.parametrize("policy, expected", [
    ("share_everything", "all at once"), ("one_piece", "piece by piece"), ("ignore", "ignores"),
])
def test_three_agents_of_the_chain_puzzle_read_as_two_do(tmp_path, policy, expected):
    tables = analysed(tmp_path, "--game", "chain", *(f"--agent={r}={policy}" for r in ("alice", "bob", "carol")), games=4)
    assert classes(tables) == {"alice": expected, "bob": expected, "carol": expected}
    assert set(signatures(tables)) == {"alice", "bob", "carol", "any"}
    if policy != "ignore":
        assert all(row[3] == 0.0 for row in signatures(tables).values())  # waiting for a third link is not idle


def test_a_message_budget_is_read_from_the_messages_as_written(tmp_path):
    """A budget cuts what the partner gets, not what the transcript holds: Alice still wrote all her
    shapes in her first message. Bob's turns count what was sent to him (see the module's note)."""
    tables = analysed(tmp_path, "--alice", "share_everything", "--bob", "one_piece", "--max-message-chars", "60")
    assert classes(tables)["alice"] == "all at once"
    assert "Left out" not in tables["strategies"].note
    check_well_formed(list(tables.values()))


def test_an_action_limit_is_replayed_as_the_referee_applied_it(tmp_path):
    tables = analysed(tmp_path, "--alice", "share_everything", "--bob", "share_everything", "--max-actions", "2")
    assert "Left out" not in tables["strategies"].note
    assert classes(tables) == {"alice": "all at once", "bob": "all at once"}


def test_the_single_agent_check_has_failure_signatures_only(tmp_path):
    tables = analysed(tmp_path, "--solo", "share_everything")
    assert set(tables) == {"failure_signatures"} and signatures(tables) == {"solo": [6, 0, None, 0.0, None, 0.0]}


# ---- A real model's games ----


def corpus_games() -> list[tuple[str, PlayedGame]]:
    """Every AsymPuzl and chain game of the corpus, rebuilt from its prompts and replies: each reply
    read by its game, the seed as the recording run drew it (its prompts show the clues of that seed)."""
    lines = (DATA / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    by_game = defaultdict(list)
    for entry in map(json.loads, lines):
        if entry["game"] in ("asympuzl", "chain"):
            by_game[(entry["game"], entry["structured"], entry["game_id"])].append(entry)
    played = []
    for (name, structured, game_id), entries in by_game.items():
        game, seed = GAMES[name], game_seed(0, game_id)
        prompter, roles = game.faces.prompter, tuple(dict.fromkeys(e["role"] for e in entries))
        contexts = [prompter.read(e["system"], e["user"])[0] for e in entries]
        params = game.rules.Params(size=contexts[0].view.size)
        state = game.rules.new(params, seed, roles, 3)
        assert all(state.view(c.role).clues == c.view.clues for c in contexts)  # the seed is the one played
        turns = []
        for entry, context in zip(entries, contexts):
            try:
                reply = prompter.parse(entry["reply"], context)
            except ReplyFormatError as exc:
                turns.append(PlayedTurn(turn=entry["turn"], role=entry["role"], format_error=str(exc)))
                continue
            state.step(context.role, tuple(reply.actions))
            turns.append(PlayedTurn(turn=entry["turn"], role=entry["role"], message=reply.message,
                                    actions=tuple(msgspec.to_builtins(reply.actions)),
                                    rejected=tuple(msgspec.to_builtins(reply.rejected))))
        played.append((name, PlayedGame(
            condition=f"structured={structured}", agents={r: "llamacpp:smollm2" for r in roles},
            params=msgspec.to_builtins(params), seed=seed, outcome=state.outcome(), scores={},
            metrics=state.metrics(), turns=tuple(turns), max_turns=3,
        )))
    return played


def test_every_position_game_a_real_model_played_goes_through_the_analysis():
    played = corpus_games()
    for name in ("asympuzl", "chain"):
        analysis = GAMES[name].records.analyses()
        games = [g for n, g in played if n == name]
        for game in games:
            analysis.add(game)
        tables = analysis.tables()
        assert [t.name for t in tables] == ["strategies", "failure_signatures"] and "Left out" not in tables[0].note
        assert check_well_formed(tables) == 2 * len(games) == 24  # two roles a game, 6 games each way


def test_the_recorded_real_model_run_goes_through_the_report_path():
    (found,) = run_analyses(RunDir.open(DATA / "run").records(), DATA / "run").games
    assert found.game == "asympuzl" and found.games == 6 and found.without_transcript == 0
    assert check_well_formed(found.tables) == 12 and "Left out" not in found.tables[0].note
