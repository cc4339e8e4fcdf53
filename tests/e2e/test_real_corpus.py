"""What a real language model wrote (``tests/data/real_model``, recorded by
``tests/e2e/make_real_corpus.py`` from SmolLM2-135M-Instruct through llama.cpp's server), read again
with no server: every reply is read by its game as it was read when the model wrote it, what is
read can be stored, and the recorded run replays and shows in the viewer."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from puzzles import GAMES, ReplyFormatError

DATA = Path(__file__).resolve().parents[1] / "data" / "real_model"
LINES = (DATA / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
META = json.loads(LINES[0])
ENTRIES = [json.loads(line) for line in LINES[1:]]


def test_the_corpus_names_its_model_and_server_and_covers_every_game_both_ways():
    assert META["model"].endswith(".gguf") and META["server_version"] and META["recorded"]
    counts = Counter((e["game"], e["structured"]) for e in ENTRIES)
    assert {(g, s) for g in GAMES for s in (True, False)} <= set(counts), counts
    assert len(ENTRIES) >= 200


@pytest.mark.parametrize("game", list(GAMES))
def test_every_reply_is_read_now_as_it_was_read_then(game):
    prompter = GAMES[game].faces.prompter
    entries = [e for e in ENTRIES if e["game"] == game]
    for entry in entries:
        found = prompter.read(entry["system"], entry["user"])
        assert found is not None, "the game no longer reads the prompt it wrote"
        context, _ = found
        try:
            reply = prompter.parse(entry["reply"], context)
        except ReplyFormatError as exc:
            assert entry["format_error"] is not None, exc
            assert str(exc) == entry["format_error"]
        else:
            assert entry["format_error"] is None, entry["format_error"]
            msgspec.json.encode(reply)  # whatever was read can be stored


def test_with_a_reply_schema_the_grammar_left_no_format_error_and_without_one_the_rate_is_counted():
    by = Counter((e["game"], e["structured"], e["format_error"] is not None) for e in ENTRIES)
    for game in ("asympuzl", "chain"):  # the games whose replies have a JSON schema
        assert by[(game, True, True)] == 0 and by[(game, True, False)] > 0
    assert sum(by[(g, False, True)] for g in GAMES) > 0  # prose instead of the format: counted, not fatal


def test_the_recorded_run_replays_and_shows_in_the_viewer(tmp_path, capsys):
    import shutil

    from engine import RunDir
    from runners.replay import main as replay_main
    from runners.view.__main__ import main as view_main

    run = tmp_path / "run"
    shutil.copytree(DATA / "run", run)
    records = RunDir.open(run).records()
    assert records
    for record in records:
        assert replay_main([str(run), str(record.game_id), "--full"]) == 0
        shown = capsys.readouterr().out
        for note in ("differs from the recorded", "is not the one the transcript recorded", "another candidate"):
            assert note not in shown  # the rebuilt game is the one recorded
    assert view_main([str(run)]) == 0
    html = (run / "view.html").read_text(encoding="utf-8")
    assert f'"recorded":{len(records)}' in html


@pytest.mark.parametrize("game", ["tsp", "einstein"])
def test_what_the_real_model_did_goes_through_its_game_s_analyses(game):
    """Each recorded game of the corpus as the analyses read it (its replies read by the game; the
    corpus keeps replies, not outcomes, so every game counts as a failure): every table is well
    formed, and the actions it counts are the actions the replies hold."""
    from puzzles import PlayedGame, PlayedTurn

    prompter = GAMES[game].faces.prompter
    by_game: dict[tuple, list] = {}
    for entry in ENTRIES:
        if entry["game"] == game:
            by_game.setdefault((entry["structured"], entry["game_id"]), []).append(entry)
    analysis = GAMES[game].records.analyses()
    actions = Counter()
    for (structured, game_id), entries in by_game.items():
        turns = []
        for entry in entries:
            context, _ = prompter.read(entry["system"], entry["user"])
            try:
                reply = prompter.parse(entry["reply"], context)
            except ReplyFormatError as exc:
                turns.append(PlayedTurn(turn=entry["turn"], role=entry["role"], format_error=str(exc)))
                continue
            done = msgspec.to_builtins(reply.actions)
            actions.update(a.get("name") or a.get("action") for a in done if isinstance(a, dict))
            turns.append(PlayedTurn(turn=entry["turn"], role=entry["role"], message=reply.message, actions=tuple(done)))
        analysis.add(PlayedGame(condition=f"structured={structured}", agents={t.role: "llamacpp:smollm2" for t in turns},
                                params={"game": game}, seed=game_id, outcome="failure", scores={}, metrics={},
                                turns=tuple(turns), max_turns=len(turns)))
    tables = analysis.tables()
    assert tables, "no table from the real model's games"
    for table in tables:
        assert all(len(row) == len(table.columns) for row in table.rows) and table.rows
    if game == "tsp":
        (counts,) = [t for t in tables if t.name == "suggest_lengths"]
        assert sum(row[-1] for row in counts.rows if isinstance(row[-1], int)) == actions["suggest"]
