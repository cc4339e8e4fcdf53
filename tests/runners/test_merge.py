"""Merging runs of one plan: halves make the whole, byte for byte; runs that do not go together are refused."""

import json

import pytest

from runners.concurrent import main as run_main
from runners.merge import main as merge_main


def _halves(tmp_path):
    whole, first, second = tmp_path / "whole", tmp_path / "first", tmp_path / "second"
    run_main(["--games", "8", "--seed", "3", "--out", str(whole), "--no-dashboard"])
    lines = (whole / "results.jsonl").read_bytes().splitlines(keepends=True)
    for part, kept in ((first, lines[:5]), (second, lines[3:])):  # games 3 and 4 in both
        part.mkdir()
        (part / "config.json").write_bytes((whole / "config.json").read_bytes())
        (part / "results.jsonl").write_bytes(b"".join(kept))
    return whole, first, second


def test_halves_of_a_run_merge_into_the_whole_run(tmp_path, capsys):
    whole, first, second = _halves(tmp_path)
    out = tmp_path / "merged"
    assert merge_main([str(out), str(first), str(second)]) == 0
    assert "8 of 8 games recorded." in capsys.readouterr().out
    assert (out / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()
    assert run_main(["--resume", str(out), "--no-dashboard"]) == 0  # nothing left to play, and it says so cleanly


def test_runs_that_do_not_go_together_are_refused(tmp_path, capsys):
    whole, first, second = _halves(tmp_path)
    other = tmp_path / "other"
    run_main(["--games", "8", "--seed", "4", "--out", str(other), "--no-dashboard"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        merge_main([str(tmp_path / "m1"), str(first), str(other)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "another plan" in err and err.count("\n") == 1
    lines = (second / "results.jsonl").read_text().splitlines(keepends=True)
    changed = json.loads(lines[0])
    changed["turns"] += 1  # game 3 recorded differently in the two runs
    (second / "results.jsonl").write_text(json.dumps(changed, separators=(",", ":")) + "\n" + "".join(lines[1:]))
    with pytest.raises(SystemExit):
        merge_main([str(tmp_path / "m2"), str(first), str(second)])
    assert "game 3 has different records" in capsys.readouterr().err
    assert not (tmp_path / "m2").exists()


def test_a_game_lost_to_the_infrastructure_in_one_run_is_taken_from_the_other(tmp_path, capsys):
    whole, first, second = _halves(tmp_path)
    lines = (second / "results.jsonl").read_text().splitlines(keepends=True)
    lost = json.loads(lines[0])  # game 3, also recorded in the first run
    lost.update(outcome="error", error={"kind": "infra_error", "type": "InfraError", "message": "HTTP 503", "actor": "alice", "where": None})
    (second / "results.jsonl").write_text(json.dumps(lost, separators=(",", ":")) + "\n" + "".join(lines[1:]))
    out = tmp_path / "merged"
    assert merge_main([str(out), str(second), str(first)]) == 0
    assert (out / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()
