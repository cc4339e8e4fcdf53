"""The replay viewer on a recorded Einstein run: the goal, each player's knowledge, every step and the
table after it, rebuilt from the transcript's actions."""

import io
import re

import msgspec
from rich.console import Console

from engine import RunDir
from engine.records.transcripts import read_transcript
from puzzles.einstein.game import GAME
from puzzles.einstein.board import BIN_NAMES
from runners.concurrent import main as run_main
from runners.replay import main as replay_main


def test_a_replay_shows_the_goal_and_rebuilds_the_table_after_every_step(tmp_path):
    run = tmp_path / "run"
    flags = ["--game", "einstein", "--games", "3", "--blocks", "5", "--player1", "optimal", "--player2", "random_mover"]
    assert run_main([*flags, "--transcripts", "--out", str(run), "--no-dashboard"]) == 0
    for record in RunDir.open(run).records():
        console = Console(file=io.StringIO(), width=220)
        assert replay_main([str(run), str(record.game_id)], console=console) == 0
        text = console.file.getvalue()
        spec = record.spec
        state = GAME.rules.new(spec.params, spec.seed, tuple(spec.agents), spec.max_turns)
        goal = re.search(r"^goal: (.*)$", text, re.M).group(1)
        for block, bin_ in enumerate(state.instance.goal):
            assert re.search(rf"{BIN_NAMES[bin_]}: [^:]*\bblock{block}\b", goal)
        assert f"game ID: {state.instance.id}" in text
        assert "Player1 knows: (block0, in, " in text and "Player2 knows: (block0, in, " in text
        transcript = read_transcript(run, record.game_id)
        for turn in transcript.turns:  # apply the recorded actions to our own copy, as the viewer does
            state.step(turn.role, _decode(turn.actions))
        assert state.placed() == record.scores["partial"] * 5
        assert "the replayed game differs" not in text
        assert text.count("step ") >= len(transcript.turns)
        assert "commonbin: " in text and "player1_bin: " in text
        final = [line for line in text.splitlines() if "placed" in line]
        assert final and f"{state.placed()}/5 placed" in final[-1]


def _decode(actions):
    return msgspec.convert(actions, tuple[GAME.rules.Action, ...])


def test_a_verified_run_replays_every_candidate_and_the_same_choices(tmp_path):
    run = tmp_path / "run"
    flags = ["--game", "einstein", "--games", "2", "--blocks", "4", "--verifier", "reasoning", "--candidates", "3",
             "--player1", "random_mover", "--player2", "random_mover"]
    assert run_main([*flags, "--transcripts", "--out", str(run), "--no-dashboard"]) == 0
    for record in RunDir.open(run).records():
        console = Console(file=io.StringIO(), width=220)
        assert replay_main([str(run), str(record.game_id)], console=console) == 0
        text = console.file.getvalue()
        transcript = read_transcript(run, record.game_id)
        assert all(len(turn.candidates) == 3 for turn in transcript.turns)
        assert text.count("candidate 1: ") == text.count("candidate 3: ") == len(transcript.turns)
        assert text.count("\u25b6 candidate") == len(transcript.turns)
        assert "chooses another candidate" not in text and "the replayed game differs" not in text
        assert record.metrics["verifier"]["player1"]["chosen"] == [t.chosen for t in transcript.turns if t.role == "player1"]
