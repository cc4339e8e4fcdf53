"""Branch runs: a run's games played again with one message changed (engine.plan.branching,
engine.policies.branch, runners.branch), and what each message was worth (engine.analysis.branches)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from msgspec import UNSET

from engine import GameRecord, RunDir
from engine.analysis.branches import advantages, value_of_information
from engine.plan import BranchPoint, read_alternative
from engine.plan.branching import Drop, Noise, OtherPolicy, Truncate
from runners.branch import main as branch_main
from runners.concurrent import main as run_main
from tests.helpers import transcript_lines

SETUPS = {
    "asympuzl, noisy channel": ["--game", "asympuzl", "--agent", "alice=noisy", "--noise", "0.05"],
    "chain, 3 agents": ["--game", "chain", "--agents", "3"],
    "chain, 4 agents, simultaneous, budget": [
        "--game", "chain", "--agents", "4", "--turn-order", "simultaneous", "--max-message-tokens", "12",
    ],
    "tsp": ["--game", "tsp"],
    "einstein": ["--game", "einstein"],
}


def _without_branch(record: dict) -> dict:
    """A record or transcript without what tells a branch from its original: the game id, the
    branch point, and the time each turn took (measured, not played)."""
    record = dict(record)
    if "turns" in record and isinstance(record["turns"], list):
        record["turns"] = [{k: v for k, v in turn.items() if k != "latency"} for turn in record["turns"]]
    record["game_id"] = 0
    spec = dict(record["spec"])
    spec["game_id"] = 0
    spec["options"] = {k: v for k, v in spec["options"].items() if k != "branch"}
    record["spec"] = spec
    return record


def _records(run: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def _play(tmp_path: Path, setup: list[str], alternatives: list[str], turns: str = "1-2") -> tuple[Path, Path]:
    origin, branches = tmp_path / "origin", tmp_path / "branches"
    assert run_main([*setup, "--games", "3", "--out", str(origin), "--no-dashboard", "--transcripts"]) == 0
    argv = [str(origin), "--turns", turns, "--out", str(branches), "--no-dashboard", "--transcripts"]
    for alternative in alternatives:
        argv += ["--alternative", alternative]
    assert branch_main(argv) == 0
    return origin, branches


def _agents_flag_ok(setup: list[str]) -> list[str]:
    """``--agents N`` as the run command spells it: a policy per seat."""
    if "--agents" not in setup:
        return setup
    at = setup.index("--agents")
    roles = ("alice", "bob", "carol", "dave")[: int(setup[at + 1])]
    flags = [x for role in roles for x in ("--agent", f"{role}=share_everything")]
    return [*setup[:at], *flags, *setup[at + 2:]]


@pytest.mark.slow
@pytest.mark.parametrize("name", SETUPS)
def test_a_branch_with_the_original_message_is_the_recorded_game_byte_for_byte(name, tmp_path):
    origin, branches = _play(tmp_path, _agents_flag_ok(SETUPS[name]), ["original", "drop"])
    originals = {(r["spec"]["seed"]): r for r in _records(origin)}
    transcripts = {t["spec"]["seed"]: t for t in transcript_lines(origin)}
    branch_transcripts = {t["game_id"]: t for t in transcript_lines(branches)}
    same = changed = 0
    for record in _records(branches):
        point = record["spec"]["options"]["branch"]
        seed = record["spec"]["seed"]
        mine, theirs = _without_branch(branch_transcripts[record["game_id"]]), _without_branch(transcripts[seed])
        if point["alternative"] == "original":
            assert _without_branch(record) == _without_branch(originals[seed])
            assert mine == theirs
            same += 1
            continue
        # drop: the turns before the point are the recorded ones; at the point the seat says nothing
        before = [t for t in theirs["turns"] if t["turn"] < point["turn"]]
        assert mine["turns"][: len(before)] == before
        at_point = [t for t in mine["turns"] if t["turn"] == point["turn"] and t["role"] == point["role"]]
        if at_point:  # the original game reached the point
            assert at_point[0].get("message", "") == ""
            changed += 1
    assert same == len(originals) * 2 * len(originals[next(iter(originals))]["spec"]["agents"])
    assert changed > 0


def test_alternatives_are_read_and_bad_ones_refused():
    assert read_alternative("drop") == Drop()
    assert read_alternative("truncate:4") == Truncate(4)
    assert read_alternative("noise:0.25") == Noise(0.25)
    assert read_alternative("policy:ignore") == OtherPolicy("ignore")
    for bad in ("truncate", "truncate:x", "noise:0", "noise:2", "policy:", "shout", "drop:3"):
        with pytest.raises(ValueError):
            read_alternative(bad)
    with pytest.raises(ValueError, match="not a seat"):
        BranchPoint(turn=1, role="zed", alternative="drop").check(("alice", "bob"))


def test_the_branch_command_refuses_bad_input_in_one_line(tmp_path, capsys):
    origin = tmp_path / "origin"
    assert run_main(["--games", "2", "--out", str(origin), "--no-dashboard"]) == 0
    cases = [
        (["--alternative", "shout"], "unknown alternative"),
        (["--turns", "3-1"], "FIRST <= LAST"),
        (["--role", "zed"], "not a seat"),
        (["--alternative", "resample"], "needs a model"),
    ]
    for flags, fragment in cases:
        with pytest.raises(SystemExit) as exit:
            branch_main([str(origin), *flags, "--out", str(tmp_path / "b"), "--no-dashboard"])
        assert exit.value.code == 2
        assert fragment in capsys.readouterr().err
    with pytest.raises(SystemExit):
        branch_main([str(tmp_path / "nowhere"), "--out", str(tmp_path / "c")])
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_branches_are_deterministic_and_change_only_the_message(tmp_path):
    origin, first = _play(tmp_path, ["--agent", "alice=share_everything"], ["truncate:2", "noise:0.5", "policy:ignore"], "1")
    again = tmp_path / "again"
    assert branch_main([str(origin), "--turns", "1", "--out", str(again), "--no-dashboard", "--transcripts",
                        "--alternative", "truncate:2", "--alternative", "noise:0.5", "--alternative", "policy:ignore"]) == 0
    assert _records(first) == _records(again)
    originals = {t["spec"]["seed"]: t for t in transcript_lines(origin)}
    for transcript in transcript_lines(first):
        point = transcript["spec"]["options"]["branch"]
        turn = next(t for t in transcript["turns"] if t["turn"] == 1 and t["role"] == point["role"])
        recorded = next(t for t in originals[transcript["spec"]["seed"]]["turns"] if t["turn"] == 1 and t["role"] == point["role"])
        assert turn["actions"] == recorded["actions"]  # the actions stay
        if point["alternative"] == "truncate:2":
            assert turn["message"] == " ".join(recorded["message"].split()[:2])
        elif point["alternative"] == "noise:0.5":
            assert turn["message"] != recorded["message"]


def test_a_branch_run_resumes_like_any_run(tmp_path):
    origin = tmp_path / "origin"
    assert run_main(["--games", "3", "--out", str(origin), "--no-dashboard"]) == 0
    branches = tmp_path / "branches"
    assert branch_main([str(origin), "--turns", "1", "--out", str(branches), "--no-dashboard", "--limit", "2"]) == 0
    assert len(_records(branches)) == 2
    assert branch_main(["--resume", str(branches), "--no-dashboard"]) == 0
    complete = tmp_path / "complete"
    assert branch_main([str(origin), "--turns", "1", "--out", str(complete), "--no-dashboard"]) == 0
    assert {r["game_id"]: r["outcome"] for r in _records(branches)} == {r["game_id"]: r["outcome"] for r in _records(complete)}
    assert RunDir.open(branches).config().branch_from == str(origin)


def _record(game_id: int, seed: int, outcome: str, turns: int, *, point: BranchPoint | None = None, score: float = 0.0) -> GameRecord:
    from tests.helpers import spec

    base = spec(0)
    options = msgspec.structs.replace(base.options, branch=point if point is not None else UNSET)
    game_spec = msgspec.structs.replace(base, game_id=game_id, seed=seed, options=options)
    from puzzles.referee import TurnLog

    log = [TurnLog(turn=t, role=r, message_chars=0, reply_chars=0, applied=0) for t in range(1, turns + 1) for r in ("alice", "bob")]
    return GameRecord(game_id=game_id, spec=game_spec, outcome=outcome, turns=turns, scores={"score": score}, turn_log=log)


def test_value_of_information_pairs_by_seed_and_leaves_out_unreached_points():
    originals = [_record(i, seed=100 + i, outcome="success", turns=2, score=1.0) for i in range(4)]
    drop = BranchPoint(turn=1, role="bob", alternative="drop")
    late = BranchPoint(turn=5, role="bob", alternative="drop")
    branches = [
        _record(10, 100, "failure", 2, point=drop, score=0.5),
        _record(11, 101, "failure", 3, point=drop, score=0.0),
        _record(12, 102, "success", 2, point=drop, score=1.0),
        _record(13, 103, "success", 2, point=drop, score=1.0),
        _record(14, 100, "success", 2, point=late, score=1.0),  # the original ended at turn 2
        _record(15, 999, "success", 2, point=drop, score=1.0),  # no original
    ]
    report = value_of_information(branches, originals)
    assert report.unreached == 1 and report.unpaired == 1
    (row,) = report.by_turn
    assert row.at == "turn 1" and row.branches == 4 and row.outcome_changed == 2
    change, low, high = row.success
    assert change == pytest.approx(-0.5) and low < -0.5 < high
    assert row.scores["score"][0] == pytest.approx(-0.375)
    assert row.scores["turns"][0] == pytest.approx(0.25)
    assert [m.branch_game for m in report.mattered] == [11, 10]  # success lost, then the larger score change


def test_leave_one_out_advantages_of_a_point_sum_to_zero():
    point = [BranchPoint(turn=1, role="alice", alternative="resample", sample=k) for k in range(4)]
    outcomes = ["success", "failure", "failure", "failure"]
    records = [_record(k, 7, outcomes[k], 2, point=point[k]) for k in range(4)]
    found = {a.branch_game: a.advantage for a in advantages(records)}
    assert found[0] == pytest.approx(1.0)
    assert found[1] == pytest.approx(-1 / 3)
    assert sum(found.values()) == pytest.approx(0.0)


@pytest.mark.slow
def test_model_seats_replay_from_the_cache_and_resample_other_samples(tmp_path, monkeypatch):
    """With the response cache, a branch of a model's game replays the recorded turns without a call;
    a resample asks the server for other samples of the point's turn."""
    import json
    import urllib.request

    from tests.e2e.test_model_runs import server_process

    def requests(url: str) -> int:
        with urllib.request.urlopen(url + "/fake/stats") as response:
            return json.loads(response.read())["requests"]

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-branch-0000")
    origin, same, resampled = tmp_path / "origin", tmp_path / "same", tmp_path / "resampled"
    flags = ["--no-dashboard", "--cache", "on", "--cache-dir", str(tmp_path / "cache"), "--price", "share_everything=1,0.5,2"]
    with server_process("--latency", "0") as url:
        served = ["--openai-url", url + "/v1", *flags]
        assert run_main(["--games", "3", "--model", "openai:share_everything", "--out", str(origin), *served]) == 0
        made = requests(url)
        assert branch_main([str(origin), "--alternative", "original", "--turns", "1-2", "--out", str(same), *served]) == 0
        assert requests(url) == made  # every turn from the cache: the shared prefix costs nothing again
        originals = {r["spec"]["seed"]: r for r in _records(origin)}
        for record in _records(same):
            mine, theirs = _without_branch(record), _without_branch(originals[record["spec"]["seed"]])
            for game in (mine, theirs):
                game.pop("usage", None)
                game["turn_log"] = [{k: v for k, v in t.items() if k != "usage"} for t in game["turn_log"]]
            assert mine == theirs
        assert branch_main([str(origin), "--alternative", "resample", "--k", "2", "--turns", "1", "--role", "alice",
                            "--out", str(resampled), *served]) == 0
        assert requests(url) > made  # the other samples were asked for
    points = [r["spec"]["options"]["branch"] for r in _records(resampled)]
    assert sorted(p["sample"] for p in points) == [0, 0, 0, 1, 1, 1]


def test_a_run_stopped_early_is_branched_only_on_the_games_it_finished(tmp_path):
    """A run stopped before its end (a cap, Ctrl-C: games in flight are not recorded) is branched on
    the seeds it finished, each branch paired with its original; the branch run resumes as planned."""
    from engine.analysis.branches import value_of_information

    origin = tmp_path / "origin"
    assert run_main(["--games", "6", "--limit", "4", "--out", str(origin), "--no-dashboard"]) == 0
    lines = (origin / "results.jsonl").read_text().splitlines(keepends=True)
    (origin / "results.jsonl").write_text("".join(line for line in lines if '"game_id":1,' not in line))
    finished = {r["spec"]["seed"] for r in _records(origin)}
    assert len(finished) == 3  # games 0, 2 and 3; 1 was in flight, 4 and 5 never started
    branches = tmp_path / "branches"
    assert branch_main([str(origin), "--turns", "1", "--out", str(branches), "--no-dashboard", "--limit", "3"]) == 0
    assert branch_main(["--resume", str(branches), "--no-dashboard"]) == 0
    played = _records(branches)
    assert {r["spec"]["seed"] for r in played} == finished
    assert len(played) == len(finished) * 2  # turn 1 of each of the two seats
    assert RunDir.open(branches).config().seed_indices == [0, 2, 3]
    report = value_of_information(RunDir.open(branches).records(), RunDir.open(origin).records())
    assert report.unpaired == 0 and sum(row.branches for row in report.by_turn) + report.unreached == len(played)


def test_a_run_that_finished_no_game_is_not_branched(tmp_path, capsys):
    origin = tmp_path / "origin"
    assert run_main(["--games", "2", "--out", str(origin), "--no-dashboard"]) == 0
    (origin / "results.jsonl").write_text("")
    with pytest.raises(SystemExit) as exit:
        branch_main([str(origin), "--out", str(tmp_path / "b"), "--no-dashboard"])
    assert exit.value.code == 2 and "no finished games" in capsys.readouterr().err


def test_the_value_of_a_message_is_grouped_by_its_kind_as_the_game_reads_it(tmp_path):
    """AsymPuzl reads each message by what it says of its sender's facts: one_piece's Alice names a
    new shape on each of her first five turns and none after; ignore's Bob names all his pairs."""
    from engine.analysis.branches import message_kinds
    from runners.report.branches import branch_tables

    origin, branches = _play(tmp_path, ["--agent", "alice=one_piece", "--agent", "bob=ignore"], ["drop"], "5-6")
    originals = RunDir.open(origin).records()
    kinds = message_kinds(originals, origin)
    assert len(kinds) == 3
    for found in kinds.values():
        assert [found[(t, "alice")] for t in (1, 5, 6)] == ["new facts", "new facts", "no facts"]
        assert {found[(t, "bob")] for t in range(1, 7)} == {"all its facts"}
    report = value_of_information(RunDir.open(branches).records(), originals, kinds=kinds)
    by_kind = {row.at: row.branches for row in report.by_kind}
    assert by_kind == {"new facts": 3, "no facts": 3, "all its facts": 6}
    assert sum(by_kind.values()) == sum(row.branches for row in report.by_turn)
    tables, _ = branch_tables(branches)
    assert [t.name for t in tables] == ["value_by_turn", "value_by_seat", "value_by_kind", "mattered"]
    assert message_kinds(originals, tmp_path / "nowhere") == {}  # a run without transcripts: no kinds


@pytest.mark.parametrize("game", ["asympuzl", "chain"])
def test_each_kind_of_message_is_read(tmp_path, game):
    """A message that names a fact again is a repeat, an empty one silent (the messages of a played
    game changed by hand; the chain game reads them as AsymPuzl does)."""
    from engine.analysis.played import played_game
    from engine.records.transcripts import TranscriptIndex
    from puzzles import get_game

    origin = tmp_path / "origin"
    assert run_main(["--game", game, "--agent", "alice=one_piece", "--games", "1", "--out", str(origin), "--no-dashboard", "--transcripts"]) == 0
    (record,) = RunDir.open(origin).records()
    index = TranscriptIndex(origin)
    index.refresh()
    played = played_game(record, index.get(record.game_id), "")
    first = next(t for t in played.turns if t.role == "alice")
    said = [msgspec.structs.replace(t, message=first.message if i else "") if t.role == "alice" and t.turn <= 2 else t
            for i, t in enumerate(played.turns)]
    kinds = get_game(game).records.message_kinds(msgspec.structs.replace(played, turns=tuple(said)))
    assert kinds[(1, "alice")] == "silent" and kinds[(2, "alice")] == "new facts"
    assert kinds[(3, "alice")] == "new facts"  # her next shape
    again = [msgspec.structs.replace(t, message=first.message) if t.role == "alice" and t.turn == 2 else t for t in played.turns]
    kinds = get_game(game).records.message_kinds(msgspec.structs.replace(played, turns=tuple(again)))
    assert kinds[(1, "alice")] == "new facts" and kinds[(2, "alice")] == "repeats"


CHAIN_CHANNELS = ["--game", "chain", "--agent", "alice=share_everything", "--agent", "bob=one_piece", "--agent", "carol=noisy",
                  "--topology", "chain", "--noise", "0.05", "--drop", "0.2", "--max-message-tokens", "10"]


@pytest.mark.slow
def test_branches_of_three_agents_on_noisy_lossy_channels_change_only_what_follows_the_point(tmp_path):
    """Chain game, three agents talking to their neighbours over channels that noise, drop and cut
    messages: the original alternative is the recorded game byte for byte; a truncated message
    leaves every turn before the point as recorded and is the first words of the recorded one."""
    origin, branches = _play(tmp_path, CHAIN_CHANNELS, ["original", "truncate:3", "policy:ignore"], "1-3")
    recorded = {t["spec"]["seed"]: t for t in transcript_lines(origin)}
    originals = {r["spec"]["seed"]: r for r in _records(origin)}
    by_id = {t["game_id"]: t for t in transcript_lines(branches)}
    truncated = 0
    for record in _records(branches):
        point, seed = record["spec"]["options"]["branch"], record["spec"]["seed"]
        mine, theirs = _without_branch(by_id[record["game_id"]]), _without_branch(recorded[seed])
        if point["alternative"] == "original":
            assert mine == theirs and _without_branch(record) == _without_branch(originals[seed])
            continue
        before = [t for t in theirs["turns"] if (t["turn"], ROLES.index(t["role"])) < (point["turn"], ROLES.index(point["role"]))]
        assert mine["turns"][: len(before)] == before
        at = [t for t in mine["turns"] if t["turn"] == point["turn"] and t["role"] == point["role"]]
        was = [t for t in theirs["turns"] if t["turn"] == point["turn"] and t["role"] == point["role"]]
        if at and point["alternative"] == "truncate:3":
            assert at[0].get("message", "") == " ".join(was[0].get("message", "").split()[:3])
            assert at[0]["actions"] == was[0]["actions"]
            truncated += 1
    assert truncated >= 3 * 3  # every game reached each seat's first turn


ROLES = ("alice", "bob", "carol", "dave")


@pytest.mark.slow
def test_a_message_changed_on_a_simultaneous_turn_is_heard_from_the_next_round_on(tmp_path):
    """Four agents acting at once over a noisy channel: the others' replies of the point's round are
    those recorded (they had not heard the changed message yet); it is heard from the next round."""
    setup = ["--game", "chain", *[x for r in ROLES for x in ("--agent", f"{r}=share_everything")],
             "--turn-order", "simultaneous", "--noise", "0.05"]
    origin, branches = _play(tmp_path, setup, ["drop"], "1-2")
    recorded = {t["spec"]["seed"]: t for t in transcript_lines(origin)}
    compared = 0
    for transcript in transcript_lines(branches):
        point = transcript["spec"]["options"]["branch"]
        theirs = {(t["turn"], t["role"]): t for t in recorded[transcript["spec"]["seed"]]["turns"]}
        for turn in transcript["turns"]:
            if turn["turn"] < point["turn"] or (turn["turn"] == point["turn"] and turn["role"] != point["role"]):
                was = theirs[(turn["turn"], turn["role"])]
                assert (turn.get("message", ""), turn["actions"]) == (was.get("message", ""), was["actions"])
                compared += turn["turn"] == point["turn"]
            elif turn["turn"] == point["turn"]:
                assert turn.get("message", "") == ""
    assert compared == 3 * len(ROLES) * 2 * 3  # each point's round: the three other seats, in every game


@pytest.mark.slow
def test_a_branch_run_killed_with_sigkill_and_resumed_ends_byte_for_byte_as_one_never_killed(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    origin = tmp_path / "origin"
    assert run_main(["--games", "40", "--agent", "alice=noisy", "--agent", "bob=noisy", "--noise", "0.05",
                     "--out", str(origin), "--no-dashboard"]) == 0
    flags = ["--alternative", "drop", "--alternative", "noise:0.3", "--k", "2", "--concurrency", "8", "--no-dashboard"]
    whole = tmp_path / "whole"
    assert branch_main([str(origin), *flags, "--out", str(whole)]) == 0
    killed = tmp_path / "killed"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-m", "asymgames", "branch", str(origin), *flags, "--out", str(killed)], cwd=root,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = killed / "results.jsonl"
    deadline = time.monotonic() + 120
    while not (results.exists() and results.read_bytes().count(b"\n") >= 50):
        assert proc.poll() is None and time.monotonic() < deadline, "the branch run ended before it could be killed"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert results.read_bytes().count(b"\n") < len(_records(whole))
    assert branch_main(["--resume", str(killed), "--no-dashboard"]) == 0
    assert results.read_bytes() == (whole / "results.jsonl").read_bytes()


class Garbled:
    """share_everything, except that its first reply cannot be read."""

    def __init__(self, role, rng):
        from puzzles import get_game

        self.inner = get_game("asympuzl").rules.scripted["share_everything"](role, rng)

    async def reply(self, context):
        from puzzles import Answer

        return Answer("no reply at all") if context.turn == 1 else await self.inner.reply(context)


def test_a_point_whose_reply_cannot_be_read_is_played_as_recorded(tmp_path):
    """The unreadable reply sends no message: each alternative leaves the turn a format error, as recorded."""
    origin, branches = _play(tmp_path, ["--agent", "alice=tests.engine.test_branch:Garbled"], ["drop", "truncate:2", "policy:ignore"], "1")
    recorded = {t["spec"]["seed"]: t for t in transcript_lines(origin)}
    for transcript in transcript_lines(branches):
        point = transcript["spec"]["options"]["branch"]
        assert transcript["outcome"] != "error"
        if point["role"] == "alice":
            assert transcript["turns"][0]["format_error"] == recorded[transcript["spec"]["seed"]]["turns"][0]["format_error"]
