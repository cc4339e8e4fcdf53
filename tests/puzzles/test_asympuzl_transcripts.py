"""A transcript says what the game was (the truth and each agent's clues, once per game), so a third
party can check a game from the transcript alone: here with plain JSON and the rules as the papers
state them, and no code of the engine."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from runners.concurrent import main as run_main
from runners.replay import main as replay_main
from tests.helpers import transcript_lines


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    flags = ["--games", "6", "--alice", "noisy", "--bob", "one_piece", "--feedback", "own", "--distractors", "2"]
    assert run_main([*flags, "--transcripts", "--out", str(run), "--no-dashboard"]) == 0
    return run


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_game_is_checked_from_its_transcript_alone(tmp_path):
    run = _run(tmp_path)
    records = {r["game_id"]: r for r in _lines(run / "results.jsonl")}
    transcripts = transcript_lines(run)
    assert len(transcripts) == 6
    for transcript in transcripts:
        truth = [tuple(piece) for piece in transcript["instance"]["truth"]]
        clues = {role: [tuple(p) for p in pieces] for role, pieces in transcript["instance"]["private"].items()}
        size = len(truth)
        assert size == 5 and len(clues["alice"]) == 7 and len(clues["bob"]) == 5  # 2 distractors in Alice's clues
        assert sorted(clues["bob"]) == sorted(truth) and [s for s, _ in truth] == [s for s, _ in clues["alice"] if s in dict(truth)]
        hypotheses = {role: pieces[:size] for role, pieces in clues.items()}  # each starts as its first N clues
        modified = {role: 0 for role in clues}
        for turn in transcript["turns"]:
            role, view = turn["role"], turn["view"]
            assert [tuple(p) for p in view["clues"]] == clues[role] and [tuple(p) for p in view["hypothesis"]] == hypotheses[role]
            solved = hypotheses[role] == truth
            assert turn["feedback"]["own"]["solved"] == solved  # own feedback: is its own part solved
            for action in turn["actions"]:
                piece = (action["shape"], action["color"])
                if 1 <= action["position"] <= size and hypotheses[role][action["position"] - 1] != piece:
                    hypotheses[role][action["position"] - 1] = piece
                    modified[role] += 1
        record = records[transcript["game_id"]]
        assert record["outcome"] == transcript["outcome"] == ("success" if all(h == truth for h in hypotheses.values()) else "failure")
        for role, count in modified.items():
            assert record["scores"][f"actions_per_position.{role}"] == count / size


def test_a_transcript_without_an_instance_still_replays_and_a_wrong_one_is_pointed_out(tmp_path):
    run = _run(tmp_path)
    lines = transcript_lines(run)
    (run / "transcripts.jsonl.gz").unlink()
    path = run / "transcripts.jsonl"  # as older runs kept them

    def replay(transcript: dict) -> str:
        path.write_text(json.dumps(transcript, separators=(",", ":")) + "\n")
        out = io.StringIO()
        assert replay_main([str(run), str(transcript["game_id"])], Console(file=out, width=200)) == 0
        text = out.getvalue()
        assert "╭─ turn 1 · Alice" in text  # the transcript's turns, replayed
        return text

    assert "not the one the transcript recorded" not in replay(lines[0])
    older = {k: v for k, v in lines[0].items() if k != "instance"}  # as written before transcripts had one
    assert "not the one the transcript recorded" not in replay(older)
    other = dict(lines[0], instance=lines[1]["instance"])
    assert "not the one the transcript recorded" in replay(other)
