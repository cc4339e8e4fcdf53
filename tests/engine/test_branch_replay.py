"""Branch runs of models that sample: the turns before a branch point replayed from the first run's
full transcripts (engine.play.recorded, runners.branch), and a first run that cannot be replayed
refused. The local model server stands in for a model that samples: with ``--bad-reply control=0.5``
it spoils about half its replies, drawn from one random stream for the server's life, so a call made
again gets another reply."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from runners.branch import main as branch_main
from runners.concurrent import main as run_main
from tests.e2e.test_model_runs import server_process
from tests.helpers import transcript_lines

SETUPS = {
    "asympuzl": ["--game", "asympuzl", "--model", "openai:one_piece"],
    "tsp, chat memory and agent modules": ["--game", "tsp", "--variant", "problem_solving", "--model", "openai:full_share"],
    "chain, 3 agents, simultaneous, token budget": [
        "--game", "chain", "--agent", "alice=openai:share_everything", "--agent", "bob=openai:one_piece",
        "--agent", "carol=openai:share_everything", "--turn-order", "simultaneous", "--max-message-tokens", "6",
    ],
    "einstein, best of 3": ["--game", "einstein", "--blocks", "4", "--verifier", "reasoning", "--candidates", "3", "--max-turns", "5",
                            "--model", "openai:random_mover"],
}
SAMPLING = ["--temperature", "0.7", "--no-dashboard"]


@pytest.fixture(scope="module")
def server():
    with server_process("--latency", "0", "--bad-reply", "control=0.5") as url:
        yield url


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-replay-0000")


def _requests(url: str) -> int:
    with urllib.request.urlopen(url + "/fake/stats") as response:
        return json.loads(response.read())["requests"]


def _played(turn: dict) -> dict:
    """A transcript's turn without what is measured, not played: its latency and usage (a replayed
    call costs nothing, as a cache hit)."""
    return {k: v for k, v in turn.items() if k not in ("latency", "usage")}


def _origin(tmp_path: Path, url: str, setup: list[str], *flags: str) -> Path:
    origin = tmp_path / "origin"
    assert run_main([*setup, "--games", "2", "--out", str(origin), "--openai-url", url + "/v1", *SAMPLING, *flags]) == 0
    return origin


def _check_replayed(origin: Path, branches: Path) -> int:
    """Every branch game's turns before its point are the first run's, field for field: the reply as
    the model sent it, the prompt (with the chat's earlier turns and the agent modules' calls), the
    message, actions and deliveries; a branch with the original message is the recorded game whole.
    Returns how many turns were compared."""
    recorded = {t["spec"]["seed"]: t for t in transcript_lines(origin)}
    compared = 0
    for transcript in transcript_lines(branches):
        point = transcript["spec"]["options"]["branch"]
        theirs = recorded[transcript["spec"]["seed"]]["turns"]
        mine = transcript["turns"]
        at = next((i for i, t in enumerate(theirs) if (t["turn"], t["role"]) == (point["turn"], point["role"])), len(theirs))
        assert [_played(t) for t in mine[:at]] == [_played(t) for t in theirs[:at]]
        assert all(t["usage"]["cache_hits"] >= 1 and t["usage"]["attempts"] == 0 for t in mine[:at])  # no call made
        compared += at
        if point["alternative"] == "original":
            assert [_played(t) for t in mine] == [_played(t) for t in theirs]
        elif point["alternative"] == "drop" and at < len(theirs):  # the recorded reply, its message dropped
            assert mine[at].get("message", "") == "" and mine[at]["actions"] == theirs[at]["actions"]
            assert mine[at]["reply"] != theirs[at]["reply"] or theirs[at].get("message", "") == ""
    return compared


@pytest.mark.parametrize("name", SETUPS)
def test_model_seats_that_sample_replay_the_turns_before_the_point_from_the_transcripts(name, tmp_path, server):
    origin = _origin(tmp_path, server, SETUPS[name], "--transcripts")
    replies = [t["reply"] for game in transcript_lines(origin) for t in game["turns"]]
    assert any(r.startswith("\x00") for r in replies) and not all(r.startswith("\x00") for r in replies)  # it samples
    branches = tmp_path / "branches"
    before = _requests(server)
    assert branch_main([str(origin), "--alternative", "original", "--alternative", "drop", "--turns", "2",
                        "--out", str(branches), "--openai-url", server + "/v1", "--transcripts", "--no-dashboard"]) == 0
    assert _check_replayed(origin, branches) > 0
    played = sum(len(t["turns"]) for t in transcript_lines(branches))
    assert _requests(server) - before < played  # the recorded turns made no call


def test_a_resumed_branch_run_replays_as_one_never_stopped(tmp_path, server):
    origin = _origin(tmp_path, server, SETUPS["asympuzl"], "--transcripts")
    branches = tmp_path / "branches"
    flags = ["--openai-url", server + "/v1", "--transcripts", "--no-dashboard"]
    assert branch_main([str(origin), "--alternative", "drop", "--turns", "2-3", "--out", str(branches), "--limit", "3", *flags]) == 0
    assert len((branches / "results.jsonl").read_text().splitlines()) == 3
    assert branch_main(["--resume", str(branches), *flags]) == 0
    assert len(transcript_lines(branches)) == 2 * 2 * 2
    assert _check_replayed(origin, branches) > 0


def test_a_resample_at_the_point_asks_the_model_after_the_recorded_turns(tmp_path, server):
    origin = _origin(tmp_path, server, SETUPS["asympuzl"], "--transcripts")
    branches = tmp_path / "branches"
    assert branch_main([str(origin), "--alternative", "resample", "--turns", "3", "--role", "bob", "--out", str(branches),
                        "--openai-url", server + "/v1", "--transcripts", "--no-dashboard"]) == 0
    assert _check_replayed(origin, branches) == 2 * 5  # alice and bob's first two turns, alice's third
    for transcript in transcript_lines(branches):
        point = next(t for t in transcript["turns"] if (t["turn"], t["role"]) == (3, "bob"))
        assert point["usage"].get("attempts", 1) >= 1 and "cache_hits" not in point["usage"]


def test_a_first_run_whose_sampled_replies_were_not_kept_is_refused_in_one_line(tmp_path, server, capsys):
    origin = _origin(tmp_path, server, SETUPS["asympuzl"])  # messages-only transcripts, no cache
    out = tmp_path / "branches"
    with pytest.raises(SystemExit) as exit:
        branch_main([str(origin), "--turns", "2", "--out", str(out), "--openai-url", server + "/v1", "--no-dashboard"])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and err.count("\n") == 1
    assert "kept no full transcript of 2 of its 2 finished games" in err and "--transcripts" in err
    assert not out.exists()


def test_a_branch_run_resumed_after_its_first_run_is_gone_is_refused_in_one_line(tmp_path, server, capsys):
    """Resuming reads the first run again for the turns before each point; where it was moved away and
    the models sample, nothing could play those turns as they were."""
    origin = _origin(tmp_path, server, SETUPS["asympuzl"], "--transcripts")
    branches = tmp_path / "branches"
    flags = ["--openai-url", server + "/v1", "--transcripts", "--no-dashboard"]
    assert branch_main([str(origin), "--turns", "2", "--out", str(branches), "--limit", "1", *flags]) == 0
    origin.rename(tmp_path / "moved")
    with pytest.raises(SystemExit) as exit:
        branch_main(["--resume", str(branches), *flags])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and err.count("\n") == 1
    assert f"the run branched, {origin.resolve()}, cannot be read" in err and "sampled (temperature 0.7" in err
    assert len((branches / "results.jsonl").read_text().splitlines()) == 1  # nothing more played


def test_a_first_run_is_branched_without_its_transcripts_where_the_replies_are_fixed_or_cached(tmp_path, server):
    """At temperature 0 the request fixes the reply (the response cache's rule); a sampled run that
    kept its replies in the response cache (--cache on --cache-sampled) replays them from there."""
    url = ["--openai-url", server + "/v1", "--no-dashboard"]
    fixed = tmp_path / "fixed"
    assert run_main([*SETUPS["asympuzl"], "--games", "2", "--out", str(fixed), *url]) == 0
    assert branch_main([str(fixed), "--turns", "1", "--role", "alice", "--out", str(tmp_path / "b1"), *url]) == 0
    cached = _origin(tmp_path, server, SETUPS["asympuzl"], "--cache", "on", "--cache-sampled", "--cache-dir", str(tmp_path / "cache"))
    made = _requests(server)
    assert branch_main([str(cached), "--alternative", "original", "--turns", "1", "--role", "alice",
                        "--out", str(tmp_path / "b2"), *url]) == 0
    assert _requests(server) == made  # every call from the cache
