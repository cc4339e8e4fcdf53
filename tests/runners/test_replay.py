"""The replay viewer on real runs of each game, with and without transcripts: the truth it shows is the
game's, each turn's state is rebuilt from the actions and matches the record."""

import dataclasses
import gzip
import io
import re
from pathlib import Path

import anyio
import msgspec
import pytest
from rich.console import Console

from engine import Grid, PolicyFactory, RunDir, play_game
from engine.records.transcribe import TranscriptMaker
from engine.records.transcripts import Transcript, TranscriptTurn, read_transcript
from puzzles import GAMES
from puzzles.common.replay import BoardReplay
from puzzles.contract import check_contract
from runners.concurrent import main as run_main
from runners.printable import printable_all
from runners.replay import main as replay_main, render_detail
from runners.view.detail import game_detail
from tests.runners.toy_game import TALLY

NAMES = {"alice": "Alice", "bob": "Bob", "carol": "Carol", "dave": "Dave", "solo": "Solo"}


def replay_text(run: Path, game_id: int) -> str:
    console = Console(file=io.StringIO(), width=200)
    assert replay_main([str(run), str(game_id)], console=console) == 0
    return console.file.getvalue()


def render_replay(record, transcript, game=None, full=False):
    """The whole replay of a game, as ``main`` draws it."""
    return render_detail(printable_all(game_detail(record, transcript, game)), full)


def records(run: Path) -> dict:
    return {record.game_id: record for record in RunDir.open(run).records()}


def truth_of(record) -> tuple:
    """The truth of a recorded game, from the game itself (not from the replay)."""
    spec = record.spec
    return GAMES[spec.game].rules.new(spec.params, spec.seed, tuple(spec.agents), spec.max_turns).truth


def panels(text: str) -> list[tuple[int, str, str]]:
    """(turn, role name, panel text) of every turn panel, in order."""
    found = []
    for block in text.split("╭─ turn ")[1:]:
        head = re.match(r"(\d+) · (\w+)", block)
        found.append((int(head.group(1)), head.group(2), block.split("╯")[0]))
    return found


def last_hypothesis_marks(text: str, role: str) -> tuple[int, int]:
    """(✓, ✗) in the hypothesis shown after ``role``'s last turn."""
    last = [body for _, name, body in panels(text) if name == NAMES[role]][-1]
    hypothesis = last[last.index("hypothesis:"):]
    return hypothesis.count("✓"), hypothesis.count("✗")


@pytest.mark.parametrize("game, flags", [
    ("asympuzl", ["--alice", "noisy", "--bob", "one_piece", "--feedback", "own_detailed"]),
    ("chain", ["--agent", "alice=noisy", "--agent", "bob=share_everything", "--agent", "carol=one_piece", "--size", "4"]),
])
def test_a_replay_with_transcripts_rebuilds_every_turn(tmp_path, game, flags):
    run = tmp_path / "run"
    assert run_main(["--game", game, "--games", "4", *flags, "--transcripts", "--out", str(run), "--no-dashboard"]) == 0
    for game_id, record in records(run).items():
        text = replay_text(run, game_id)
        transcript = read_transcript(run, game_id)
        assert f"Game {game_id}:" in text and f"seed={record.spec.seed}" in text
        if record.outcome == "success":
            assert f"solved at turn {record.solved_turn}" in text
        else:
            assert f"not solved in {record.spec.max_turns} turns" in text
        truth = truth_of(record)
        shown = re.search(r"^truth: (.*)$", text, re.M).group(1)
        assert [part.split(":", 1)[1] for part in shown.split("  ")] == [
            " ".join(value or "?" for value in (item if game == "chain" else (item.color, item.shape))) for item in truth
        ]
        for role in record.spec.agents:
            assert f"{NAMES[role]}'s clues: " in text
        shown_panels = panels(text)
        assert [(turn, name) for turn, name, _ in shown_panels] == [(t.turn, NAMES[t.role]) for t in transcript.turns]
        for (_, _, body), turn, log in zip(shown_panels, transcript.turns, record.turn_log):
            assert f"{log.progress}/{len(truth)} right" in body
            if turn.message:
                assert turn.message[:40] in " ".join(body.split())
        for role, right in record.metrics["correct_positions"].items():
            assert last_hypothesis_marks(text, role) == (right, len(truth) - right)
        assert "differs from the recorded one" not in text


@pytest.mark.parametrize("game, flags", [
    ("asympuzl", ["--alice", "noisy", "--bob", "noisy", "--max-actions", "2", "--turn-order", "simultaneous"]),
    ("chain", ["--agent", "alice=noisy", "--agent", "bob=noisy", "--max-actions", "1", "--feedback", "own"]),
])
def test_rejected_and_capped_actions_replay_as_the_referee_applied_them(tmp_path, game, flags):
    run = tmp_path / "run"
    assert run_main(["--game", game, "--games", "3", *flags, "--transcripts", "--out", str(run), "--no-dashboard"]) == 0
    texts = [replay_text(run, game_id) for game_id in range(3)]
    assert any("over the limit of" in text for text in texts)  # the referee's rejections are shown
    for game_id, record in records(run).items():
        assert "differs from the recorded one" not in texts[game_id]
        for role, right in record.metrics["correct_positions"].items():
            assert last_hypothesis_marks(texts[game_id], role)[0] == right


@pytest.mark.parametrize("game, flags", [
    ("asympuzl", ["--alice", "share_everything", "--bob", "one_piece"]),
    ("chain", ["--agent", "alice=one_piece", "--agent", "bob=one_piece", "--agent", "carol=one_piece", "--agent", "dave=one_piece"]),
])
def test_a_replay_without_transcripts_shows_the_turn_log(tmp_path, game, flags):
    run = tmp_path / "run"
    assert run_main(["--game", game, "--games", "2", *flags, "--no-messages", "--out", str(run), "--no-dashboard"]) == 0
    record = records(run)[1]
    text = replay_text(run, 1)
    assert "kept no transcripts" in text and "╭─ turn" not in text
    size = record.spec.params.size
    log = text[text.index("turn log"):]
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in log.splitlines() if line.startswith("│")]
    assert [(row[0], row[1], row[-2]) for row in rows] == [
        (str(log.turn), NAMES[log.role], f"{log.progress}/{size} right") for log in record.turn_log
    ]
    assert re.search(r"^truth: ", text, re.M)


def test_a_game_without_its_own_replay_shows_the_generic_parts(tmp_path):
    run = tmp_path / "run"
    assert run_main(["--games", "1", "--transcripts", "--out", str(run), "--no-dashboard"]) == 0
    record = RunDir.open(run).records()[0]
    game = GAMES["asympuzl"]
    bare = dataclasses.replace(game, faces=dataclasses.replace(game.faces, replay=None))
    console = Console(file=io.StringIO(), width=200)
    console.print(render_replay(record, read_transcript(run, 0), bare))
    text = console.file.getvalue()
    assert "truth:" not in text and "hypothesis:" not in text
    assert '{"position":' in text  # the actions as JSON
    assert f"progress {record.turn_log[-1].progress}" in text


ROSTERS = [(name, roster) for name, game in GAMES.items() for roster in game.rules.rosters]


@pytest.mark.parametrize("name, roster", ROSTERS, ids=[f"{n}-{len(r)}" for n, r in ROSTERS])
def test_every_game_and_roster_replays_from_the_messages_kept_by_default(tmp_path, name, roster):
    run = tmp_path / "run"
    agents = [f"--agent={role}={GAMES[name].default_policy}" for role in roster]
    assert run_main(["--game", name, "--games", "2", *agents, "--out", str(run), "--no-dashboard"]) == 0
    for game_id, record in records(run).items():
        transcript = read_transcript(run, game_id)
        assert transcript.detail == "messages" and transcript.turns[0].view is None and transcript.turns[0].prompt is None
        check_replay(record, GAMES[name], replay_text(run, game_id), replay_text_full(run, game_id))


def draws_a_board(game) -> bool:
    """Whether the game's replay draws its board: ``board(state)`` is optional in the contract
    (``puzzles.common.replay.BoardReplay``), so a game need not have one."""
    return isinstance(game.faces.replay, BoardReplay)


def check_replay(record, game, text: str, full: str) -> None:
    """What the replay of any game from a messages-only transcript shows (``text``, and ``full`` with
    ``--full``): a panel for each turn of the turn log, every turn rebuilt as recorded, each agent's
    view rebuilt from the seed, and the board at the start and at the end if and only if the game's
    replay draws one."""
    assert [(turn, role) for turn, role, _ in panels(text)] == [(log.turn, NAMES.get(log.role, log.role.capitalize())) for log in record.turn_log]
    assert "differs from the recorded one" not in text
    boards = ("the game at the start" in text, "the game at the end" in text)
    assert boards == ((True, True) if draws_a_board(game) else (False, False)), boards
    assert full.count("view: {") == len(record.turn_log)  # each agent's view, rebuilt from the seed


def rendered(group) -> str:
    console = Console(file=io.StringIO(), width=200)
    console.print(group)
    return console.file.getvalue()


def transcript_of(line: bytes, spec) -> Transcript:
    """A transcript line read back as ``read_transcript`` reads it, but with its ``spec`` as played: a
    game registered by a test cannot be decoded from a file, since the registry's union of parameter
    types (``puzzles.registry.AnyParams``) is fixed at import."""
    data = msgspec.json.decode(line)
    turns = msgspec.convert(data.pop("turns"), list[TranscriptTurn])
    return Transcript(game_id=data["game_id"], spec=spec, outcome=data["outcome"], detail=data["detail"], turns=turns)


def test_a_game_whose_replay_draws_no_board_replays_with_no_board_section(monkeypatch):
    """A toy game registered here (as the registry registers one: checked against the contract),
    whose replay has no ``board``: played and replayed through the same code as the registered
    games, it passes the same checks, and neither the terminal replay nor the viewer's data has a board."""
    monkeypatch.setitem(GAMES, TALLY.name, check_contract(TALLY))
    assert not draws_a_board(TALLY) and all(draws_a_board(game) for name, game in GAMES.items() if name != TALLY.name)
    spec = Grid(game=TALLY.name, seeds=1, agents=[[TALLY.default_policy] * 2]).spec(0)
    maker = TranscriptMaker(full=False)  # messages only, as runs keep them by default
    record = anyio.run(lambda: play_game(spec, PolicyFactory(), [maker.game_started(spec)]))
    assert (record.outcome, record.error, len(record.turn_log)) == ("success", None, 3)
    transcript = transcript_of(maker.line(spec, record), spec)
    assert transcript.detail == "messages" and transcript.turns[0].view is None
    text, full = rendered(render_replay(record, transcript)), rendered(render_replay(record, transcript, full=True))
    check_replay(record, TALLY, text, full)
    assert "goal: 6" in text and "total: 6" in text and "add 2" in text  # the toy's replay was asked the rest
    detail = game_detail(record, transcript)  # what the HTML viewer (runners.view) draws from
    assert detail["board"] is None and detail["final_board"] is None and len(detail["steps"]) == 3


def replay_text_full(run: Path, game_id: int) -> str:
    console = Console(file=io.StringIO(), width=200)
    assert replay_main([str(run), str(game_id), "--full"], console=console) == 0
    return console.file.getvalue()


def test_messages_only_transcripts_replay_as_the_full_ones_do(tmp_path):
    flags = ["--game", "chain", "--games", "3", "--agent", "alice=noisy", "--agent", "bob=share_everything",
             "--agent", "carol=one_piece", "--topology", "directed", "--no-dashboard"]
    assert run_main([*flags, "--out", str(tmp_path / "messages")]) == 0
    assert run_main([*flags, "--transcripts", "--out", str(tmp_path / "full")]) == 0
    small, big = (len(gzip.decompress((tmp_path / kept / "transcripts.jsonl.gz").read_bytes())) for kept in ("messages", "full"))
    assert small < big / 2
    for game_id in range(3):
        assert replay_text(tmp_path / "messages", game_id) == replay_text(tmp_path / "full", game_id)
        assert re.search(r"” \(to (Alice|Bob|Carol)\)", replay_text(tmp_path / "full", game_id))  # one partner at a time
