"""Transcripts in gzip blocks (``engine.records.blocks``) and the one reading API over them
(``engine.records.transcripts``): what is written reads back line for line, one game is read by its
id, older runs' plain lines still read, a run killed mid-write and resumed loses at most the block it
was gathering, and a damaged block is skipped with its games, never stopping a reader."""

from __future__ import annotations

import gzip
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from engine import RunDir
from engine.analysis.played import run_analyses
from engine.records import blocks
from engine.records.blocks import Block, BlockWriter, member, parse_ranges, ranges, walk
from engine.records.transcripts import (
    PLAIN_TRANSCRIPTS_FILE, TRANSCRIPTS_FILE, Transcript, TranscriptIndex, copy_transcripts, iter_transcripts, read_transcript,
)
from runners.concurrent import main as run_main
from runners.merge import main as merge_main
from runners.view.index import RunIndex
from tests.helpers import transcript_lines

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few games each, so that a short run writes many."""
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(blocks, "BLOCK_SECONDS", 3600.0)


def run(out: Path, *flags: str, games: int = 30) -> Path:
    assert run_main(["--games", str(games), "--alice", "noisy", "--bob", "one_piece", *flags, "--out", str(out), "--no-dashboard"]) == 0
    return out


def members(path: Path) -> list[Block]:
    with path.open("rb") as f:
        return list(walk(f, 0, path.stat().st_size))


def test_ids_are_written_as_ranges_and_read_back():
    for ids in ([], [7], [0, 1, 2, 3], [5, 3, 4, 10, 12, 11, 20], list(range(0, 300, 2))):
        assert parse_ranges(ranges(ids)) == sorted(ids)
    assert ranges([9, 1, 2, 3, 5]) == b"1-3,5,9"
    for bad in (b"1-", b"a", b"1,,2", b"-3"):
        with pytest.raises(ValueError):
            parse_ranges(bad)


def test_a_run_reads_back_line_for_line_and_the_file_is_plain_gzip(tmp_path, small_blocks):
    out = run(tmp_path / "run")
    path = out / TRANSCRIPTS_FILE
    assert not (out / PLAIN_TRANSCRIPTS_FILE).exists()
    assert len(members(path)) > 3  # many blocks, each naming its games
    lines = gzip.decompress(path.read_bytes()).splitlines()  # as zcat reads it
    written = {msgspec.json.decode(line)["game_id"]: line for line in lines}
    assert sorted(written) == list(range(30))
    read = dict(iter_transcripts(out))
    assert sorted(read) == list(range(30))
    for game_id, transcript in read.items():
        assert transcript == msgspec.json.decode(written[game_id], type=Transcript)
    assert dict(iter_transcripts(out, {3, 17})).keys() == {3, 17}


def test_one_game_is_read_by_its_id(tmp_path, small_blocks):
    out = run(tmp_path / "run")
    records = {r.game_id: r for r in RunDir.open(out).records()}
    index = TranscriptIndex(out)
    index.refresh()
    assert len(index) == 30
    for game_id in (29, 0, 14, 15, 1):  # out of order: each from its own block
        transcript = read_transcript(out, game_id)
        assert transcript.game_id == game_id and transcript.outcome == records[game_id].outcome
        assert [(t.turn, t.role) for t in transcript.turns] == [(log.turn, log.role) for log in records[game_id].turn_log]
        assert index.get(game_id) == transcript
    assert read_transcript(out, 30) is None and index.get(-1) is None


def test_an_older_run_with_plain_lines_still_reads_and_a_resumed_one_reads_both(tmp_path):
    out = run(tmp_path / "run", games=6)
    lines = gzip.decompress((out / TRANSCRIPTS_FILE).read_bytes())
    (out / TRANSCRIPTS_FILE).unlink()
    (out / PLAIN_TRANSCRIPTS_FILE).write_bytes(lines)  # as runs kept them before
    assert sorted(game_id for game_id, _ in iter_transcripts(out)) == list(range(6))
    assert read_transcript(out, 4).game_id == 4
    index = RunIndex(out)
    index.refresh()
    assert index.data()["transcripts"] and "steps" in index.detail(2)
    records = RunDir.open(out).records()
    assert run_analyses(records, out).games[0].without_transcript == 0

    kept = (out / "results.jsonl").read_bytes().splitlines(keepends=True)
    (out / "results.jsonl").write_bytes(b"".join(kept[:4]))  # games 4 and 5 to play again
    assert run_main(["--resume", str(out), "--no-dashboard"]) == 0
    assert len(transcript_lines(out)) == 2  # the new copies, in blocks beside the old lines
    assert sorted(game_id for game_id, _ in iter_transcripts(out)) == list(range(6))
    index = TranscriptIndex(out)
    index.refresh()
    assert index.where.get(5) % 2 == 1 and index.where.get(3) % 2 == 0  # the last copy: a block, a line


KILLED_RUN = """
import sys
from engine.records import blocks
blocks.BLOCK_BYTES = 4096
sys.argv[0] = "runners.concurrent"
from runners.concurrent import main
main(sys.argv[1:])
"""


def test_a_run_killed_mid_write_and_resumed_loses_at_most_the_block_it_was_gathering(tmp_path):
    out = tmp_path / "run"
    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, "--games", "20000", "--concurrency", "8", "--no-dashboard",
                              "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = out / TRANSCRIPTS_FILE
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (path.exists() and len(members(path)) >= 5):
            time.sleep(0.02)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    whole = members(path)
    cut = member(b'{"game_id":99999}\n' * 50, [99999])
    with path.open("ab") as f:
        f.write(cut[: len(cut) // 2])  # a block the kill cut short
    recorded = {r.game_id for r in RunDir.open(out).records()}
    read = dict(iter_transcripts(out))  # the cut block is passed over
    assert recorded <= read.keys() and 99999 not in read  # a record is written once its transcript is
    shortest = min(len(msgspec.json.encode(t)) for t in read.values())
    assert len(read.keys() - recorded) <= 4096 // shortest + 1  # at most the games of the last block written

    results = out / "results.jsonl"
    kept = results.read_bytes().splitlines(keepends=True)
    again = {msgspec.json.decode(line)["game_id"] for line in kept[-3:]}
    results.write_bytes(b"".join(kept[:-3]))  # three games to play again
    assert run_main(["--resume", str(out), "--no-dashboard", "--limit", "50"]) == 0
    assert members(path)[: len(whole)] == whole  # the cut block cut off, what was whole kept
    now = {r.game_id for r in RunDir.open(out).records()}
    assert {game_id for game_id, _ in iter_transcripts(out)} == read.keys() | (now - recorded) | again
    copies = [t["game_id"] for t in transcript_lines(out)]
    assert all(copies.count(game_id) == 1 + (game_id in read) for game_id in again)  # written again; the last copy is read


def _without_transcript(out: Path) -> set[int]:
    """The games recorded whose transcript is not in the run."""
    recorded = {r.game_id for r in RunDir.open(out).records()}
    return recorded - {game_id for game_id, _ in iter_transcripts(out)}


@pytest.mark.parametrize("kept", ["--transcripts", None])
def test_a_run_killed_with_sigkill_leaves_no_record_without_its_transcript(tmp_path, kept):
    """A real run with scripted agents, killed with SIGKILL while games end by the thousand: every game
    recorded has its transcript (a game whose transcript was lost with the kill has no record either,
    so ``--resume`` plays it again), before the resume and after it."""
    out = tmp_path / "run"
    flags = [*([kept] if kept else []), "--no-dashboard"]
    child = subprocess.Popen([sys.executable, "-m", "runners.concurrent", "--games", "100000", "--concurrency", "64", *flags,
                              "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results, path = out / "results.jsonl", out / TRANSCRIPTS_FILE
    try:
        deadline = time.monotonic() + 120  # a safety limit: fails a hang only
        while time.monotonic() < deadline and not (path.exists() and len(members(path)) >= 3 and results.stat().st_size > 0):
            time.sleep(0.02)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    played = RunDir.open(out).records()
    assert 0 < len(played) < 100000
    assert _without_transcript(out) == set()
    assert run_main(["--resume", str(out), *flags, "--limit", "300"]) == 0
    assert len(RunDir.open(out).records()) == len(played) + 300
    assert _without_transcript(out) == set()


@pytest.mark.slow
def test_a_full_disk_leaves_no_record_without_its_transcript(tmp_path):
    """Caused for real: the resumed run may write files of 300 kB at most, and its transcripts file,
    grown by bytes that are no block (which readers pass over), reaches that first, as on a full disk.
    The games recorded have their transcripts; the next resume plays the others."""
    import resource

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    out = tmp_path / "run"
    assert run_main(["--games", "1000", "--transcripts", "--no-dashboard", "--limit", "50", "--out", str(out)]) == 0
    path = out / TRANSCRIPTS_FILE
    with path.open("ab") as f:
        f.write(bytes(290_000 - path.stat().st_size))
    stopped = subprocess.run([sys.executable, "-m", "runners.concurrent", "--resume", str(out), "--transcripts", "--no-dashboard"],
                             cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=small_files)
    assert stopped.returncode == 4, stopped.stdout[-2000:] + stopped.stderr[-2000:]
    assert "File too large" in stopped.stdout and "Traceback" not in stopped.stdout + stopped.stderr
    assert (out / "results.jsonl").stat().st_size < 300_000  # the transcripts filled up, not the results
    assert 50 < len(RunDir.open(out).records()) < 1000
    assert _without_transcript(out) == set()
    assert run_main(["--resume", str(out), "--transcripts", "--no-dashboard"]) == 0
    assert len(RunDir.open(out).records()) == 1000 and _without_transcript(out) == set()


def damage(path: Path, block: Block, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[block.offset + at] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_block_is_skipped_with_its_games_and_stops_no_reader(tmp_path, small_blocks):
    out = run(tmp_path / "run")
    path = out / TRANSCRIPTS_FILE
    found = members(path)
    body, head = found[1], found[3]
    damage(path, body, body.size // 2)  # the compressed lines: the CRC fails
    damage(path, head, 0)  # the header: the walk finds the next block
    gone = set(body.ids) | set(head.ids)
    assert {g for g, _ in iter_transcripts(out)} == set(range(30)) - gone
    assert all(read_transcript(out, g) is None for g in gone)
    records = RunDir.open(out).records()
    analysis = run_analyses(records, out).games[0]
    scored = sum(r.outcome != "error" for r in records)
    assert analysis.without_transcript == sum(1 for r in records if r.outcome != "error" and r.game_id in gone)
    assert analysis.games == scored - analysis.without_transcript
    index = RunIndex(out)
    index.refresh()
    some = min(gone)
    assert "steps" not in index.detail(some) and "log" in index.detail(some)  # shown from the turn log
    assert "steps" in index.detail(min(set(range(30)) - gone))
    damage(path, found[5], 12)  # a length that runs past the file: the walk finds the next block
    assert {g for g, _ in iter_transcripts(out)} == set(range(30)) - gone - set(found[5].ids)


def test_merged_runs_copy_each_games_transcript(tmp_path):
    out = run(tmp_path / "run", games=5)
    (tmp_path / "copy").mkdir()
    assert copy_transcripts(tmp_path / "copy", [(out, {1, 3}), (tmp_path / "missing", {2})]) == 2
    assert sorted(g for g, _ in iter_transcripts(tmp_path / "copy")) == [1, 3]
    assert read_transcript(tmp_path / "copy", 3) == read_transcript(out, 3)
    (tmp_path / "none").mkdir()
    assert copy_transcripts(tmp_path / "none", [(out, set())]) == 0 and not (tmp_path / "none" / TRANSCRIPTS_FILE).exists()


def test_a_block_writer_writes_by_size_and_by_time(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    writer = BlockWriter(path, block_bytes=100, block_seconds=3600)
    for game_id in range(5):
        writer.buffer += b'{"game_id":%d,"text":"%s"}\n' % (game_id, b"x" * 40)
        writer.added(game_id)
    assert [b.ids for b in members(path)] == [[0], [1, 2], [3, 4]]  # the first at once, then by size
    writer.close()
    writer = BlockWriter(path, block_bytes=10**6, block_seconds=0)
    writer.buffer += b'{"game_id":9}\n'
    writer.added(9)
    assert members(path)[-1].ids == [9]  # a second since the last write: written at once
    writer.close()


def test_merged_halves_keep_one_transcript_per_game(tmp_path):
    whole = run(tmp_path / "whole", "--seed", "3", games=8)
    lines = (whole / "results.jsonl").read_bytes().splitlines(keepends=True)
    halves = []
    for name, kept in (("first", lines[:5]), ("second", lines[3:])):  # games 3 and 4 in both
        part = tmp_path / name
        part.mkdir()
        for file in ("config.json", TRANSCRIPTS_FILE):
            (part / file).write_bytes((whole / file).read_bytes())
        (part / "results.jsonl").write_bytes(b"".join(kept))
        halves.append(str(part))
    assert merge_main([str(tmp_path / "merged"), *halves]) == 0
    merged = tmp_path / "merged"
    assert sorted(t["game_id"] for t in transcript_lines(merged)) == list(range(8))  # each copied once
    assert dict(iter_transcripts(merged)) == dict(iter_transcripts(whole))


def test_a_transcript_that_cannot_be_encoded_is_kept_as_a_stub_and_the_block_reads(tmp_path):
    from bus import YourTurn
    from engine.records.record import GameRecord
    from engine.records.transcribe import TranscriptWriter
    from tests.helpers import spec

    writer = TranscriptWriter(tmp_path, full=False)
    for game_id, feedback in ((0, object()), (1, {"fine": True})):  # the first cannot be written as JSON
        played = spec(game_id)
        tap, _ = writer.game_started(played)  # a TapOn: the tap and the kinds it is shown
        tap("alice", YourTurn(game_id=game_id, turn=1, max_turns=10, role="alice", view=None, feedback=feedback))
        writer.game_finished(played, GameRecord(game_id=game_id, spec=played, outcome="failure", turns=1))
    writer.close()
    stub, fine = read_transcript(tmp_path, 0), read_transcript(tmp_path, 1)
    assert stub.turns == [] and "turns not storable: TypeError" in stub.outcome
    assert fine.turns[0].feedback == {"fine": True}


def test_a_writer_cuts_off_only_a_block_cut_short(tmp_path):
    path = tmp_path / TRANSCRIPTS_FILE
    foreign = gzip.compress(b'{"game_id":5}\n')  # a gzip member of another kind: left alone
    path.write_bytes(foreign)
    writer = BlockWriter(path)
    writer.buffer += b'{"game_id":6}\n'
    writer.added(6)
    writer.close()
    assert path.read_bytes().startswith(foreign) and [b.ids for b in members(path)] == [[6]]
    whole = path.read_bytes()
    path.write_bytes(whole + member(b'{"game_id":7}\n', [7])[:20])
    BlockWriter(path).close()
    assert path.read_bytes() == whole


def _lose_transcripts(out: Path, lost: set[int], plain: bool) -> None:
    """Make ``out`` what runs made before a record waited for its transcript left after a kill: records
    of games (``lost``) whose transcripts are not in the run; their transcripts kept in blocks, or in
    the plain file of older runs still."""
    kept = {game_id for game_id, _ in iter_transcripts(out)} - lost
    aside = out.parent / "aside"
    aside.mkdir()
    assert copy_transcripts(aside, [(out, kept)]) == len(kept)
    (out / TRANSCRIPTS_FILE).unlink()
    if plain:
        (out / PLAIN_TRANSCRIPTS_FILE).write_bytes(gzip.decompress((aside / TRANSCRIPTS_FILE).read_bytes()))
    else:
        (aside / TRANSCRIPTS_FILE).rename(out / TRANSCRIPTS_FILE)


@pytest.mark.parametrize("plain", [False, True])
def test_an_old_run_whose_records_lack_transcripts_plays_those_games_again_on_resume(tmp_path, capsys, plain):
    """An old run directory whose kills lost transcripts of recorded games: --resume plays those games
    again (their records set aside), so that every game recorded has its transcript; the scripted games
    play as they did, so the results are byte for byte those of the run before."""
    out = run(tmp_path / "old", "--transcripts", games=120)
    before = (out / "results.jsonl").read_bytes()
    lost = set(range(0, 120, 7))
    _lose_transcripts(out, lost, plain)
    assert _without_transcript(out) == lost
    capsys.readouterr()
    assert run_main(["--resume", str(out), "--transcripts", "--no-dashboard"]) == 0
    said = capsys.readouterr().out
    assert f"Playing again {len(lost)} games recorded without a transcript" in said
    assert _without_transcript(out) == set()
    assert (out / "results.jsonl").read_bytes() == before
    aside = (out / "results.replayed.jsonl").read_bytes().splitlines()
    assert {msgspec.json.decode(line)["game_id"] for line in aside} == lost
    assert run_main(["--resume", str(out), "--transcripts", "--no-dashboard"]) == 0  # nothing left to play
    assert "Playing again" not in capsys.readouterr().out


def test_a_resume_without_transcripts_or_of_a_run_that_kept_none_plays_nothing_again(tmp_path, capsys):
    """Games without a transcript by choice (a resume, or a process of the run, with --no-messages) are
    not played again."""
    out = run(tmp_path / "old", games=40)
    _lose_transcripts(out, {3, 5}, plain=False)
    assert run_main(["--resume", str(out), "--no-messages", "--no-dashboard"]) == 0  # the resume keeps none
    none_kept = run(tmp_path / "none", "--no-messages", games=40)
    assert run_main(["--resume", str(none_kept), "--no-dashboard"]) == 0  # the run kept none
    part = run(tmp_path / "part", "--no-messages", "--limit", "20", games=40)  # part kept none, by choice
    assert run_main(["--resume", str(part), "--no-dashboard", "--limit", "10"]) == 0  # then some
    assert run_main(["--resume", str(part), "--no-dashboard"]) == 0
    assert "Playing again" not in capsys.readouterr().out
    assert _without_transcript(out) == {3, 5} and len(RunDir.open(none_kept).records()) == 40
    assert len(_without_transcript(part)) == 20 and len(RunDir.open(part).records()) == 40
    assert not any((run_dir / "results.replayed.jsonl").exists() for run_dir in (out, none_kept, part))


def test_games_people_played_without_a_transcript_are_kept_and_said_so(tmp_path):
    """A person's game cannot be played again the same way: a resume keeps its record, and says so
    in a line; the other games without a transcript are set aside to be played again."""
    from engine.session.replaying import set_aside_replays

    out = run(tmp_path / "old", games=30)
    _lose_transcripts(out, {2, 4, 9}, plain=False)
    results = out / "results.jsonl"
    lines = []
    for line in results.read_bytes().splitlines(keepends=True):
        record = msgspec.json.decode(line)
        if record["game_id"] in (2, 9):  # a person played bob's seat in these two
            record["spec"]["agents"]["bob"] = "human"
            line = msgspec.json.encode(record) + b"\n"
        lines.append(line)
    results.write_bytes(b"".join(lines))
    plan = msgspec.structs.replace(RunDir.open(out).config(), agents=[["noisy", "one_piece"], ["noisy", "human"]])
    replays = set_aside_replays(RunDir.open(out), plan, errors=False, transcripts=True)
    assert (replays.untranscribed, replays.people) == (1, 2)
    assert replays.lines()[1] == "2 games played by people have no transcript and are kept as recorded: a person's game cannot be played again the same way."
    assert {r.game_id for r in RunDir.open(out).records()} == set(range(30)) - {4}


def _people_run(out: Path) -> Path:
    """A run of 12 games, bob's seat played by a person in the last 6 (who never answers: the
    games end as the person left), its transcripts kept."""
    import anyio

    from engine import Grid, PolicyFactory
    from engine.session.opening import open_session
    from engine.session.playing import play_plan
    from tests.engine.test_human import Front, Seats

    factory = PolicyFactory()
    factory.seats = Seats(Front(lambda turn: None))
    factory.turn_seconds, factory.absent_after = 0.05, 1
    grid = Grid(seeds=6, params={"size": [3]}, agents=[["share_everything", "one_piece"], ["share_everything", "human"]])
    with open_session(factory, plan=lambda: grid, out=out) as session:
        anyio.run(lambda: play_plan(session.run, session.plan, factory, recorded=session.recorded, concurrency=1,
                                    transcripts="messages"))
    return out


def test_games_people_played_without_a_transcript_are_said_once(tmp_path, capsys):
    """The line saying that games people played have no transcript and are kept is said by the resume
    that finds them, not again by every resume after it; a game of a person's found later is said."""
    out = _people_run(tmp_path / "old")
    people = {r.game_id for r in RunDir.open(out).records() if "human" in r.spec.agents.values()}
    assert people == set(range(6, 12))
    _lose_transcripts(out, {2, 7, 9}, plain=False)
    said = []
    for _ in range(3):
        assert run_main(["--resume", str(out), "--no-dashboard"]) == 0
        said.append([line for line in capsys.readouterr().out.splitlines() if "played by people" in line])
    assert said == [["2 games played by people have no transcript and are kept as recorded: a person's game cannot "
                     "be played again the same way."], [], []]
    assert _without_transcript(out) == {7, 9} and (out / "transcripts.missing").read_bytes() == b"7,9\n"
    kept = {game_id for game_id, _ in iter_transcripts(out)} - {11}
    (tmp_path / "aside").rename(tmp_path / "aside.1")
    _lose_transcripts(out, {11}, plain=False)  # one more, found by the next resume
    assert _without_transcript(out) == {7, 9, 11} and {game_id for game_id, _ in iter_transcripts(out)} == kept
    assert run_main(["--resume", str(out), "--no-dashboard"]) == 0
    assert "1 game played by people has no transcript" in capsys.readouterr().out


def test_games_of_a_damaged_block_are_played_again_on_resume(tmp_path, capsys, small_blocks):
    """A game whose transcript cannot be read (its block damaged on disk, or cut short by a kill with
    blocks written after it) has none: a resume keeping transcripts plays it again, and the scripted
    games play as they did."""
    out = run(tmp_path / "run", games=60)
    before = (out / "results.jsonl").read_bytes()
    path = out / TRANSCRIPTS_FILE
    found = members(path)
    damaged, cut = found[1], found[4]
    damage(path, damaged, damaged.size // 2)  # the compressed lines: the CRC fails
    data = path.read_bytes()
    path.write_bytes(data[: cut.offset + cut.size // 2] + data[cut.offset + cut.size:])  # cut short, blocks after it
    index = TranscriptIndex(out)
    index.refresh()
    assert all(index.where.get(game_id) >= 0 for game_id in damaged.ids + cut.ids)  # named by headers that read
    lost = _without_transcript(out)
    assert set(damaged.ids) | set(cut.ids) <= lost
    capsys.readouterr()
    assert run_main(["--resume", str(out), "--no-dashboard"]) == 0
    assert f"Playing again {len(lost)} games recorded without a transcript" in capsys.readouterr().out
    assert _without_transcript(out) == set()
    assert (out / "results.jsonl").read_bytes() == before
