"""Reading a results file in game-id order (``engine.records.ordered``): each game once with all its
lines, whatever the order of the lines; a sorted file streamed and left as it is by the final sort;
runs merged from parts whose lines are out of order."""

from __future__ import annotations

import random

import pytest

from engine import RunDir
from engine.records import ordered
from tests.runners.test_merge import _halves


def line(game_id: int, text: str = "x") -> bytes:
    return b'{"game_id":%d,"text":"%s"}\n' % (game_id, text.encode())


def line_id(number: int, line: bytes) -> int | None:
    import json

    try:
        return json.loads(line)["game_id"]
    except ValueError:
        return None


@pytest.mark.parametrize("window", [2, ordered.WINDOW])
def test_games_come_in_id_order_each_with_its_lines(tmp_path, monkeypatch, window):
    monkeypatch.setattr(ordered, "WINDOW", window)
    path = tmp_path / "results.jsonl"
    ids = [5, 3, -1, 10**12, 3, 7, 0, 6, 1]
    body = b"".join(line(i, f"copy {n}") for n, i in enumerate(ids))
    path.write_bytes(body[: len(line(5, "copy 0"))] + b"\n  \nbroken\n" + body[len(line(5, "copy 0")):] + b'{"game_id":8')
    survey, games = ordered.read_in_order(path, line_id)
    assert (survey.lines, survey.blank, survey.truncated, survey.ascending) == (10, 2, True, False)
    assert (survey.without_id.count, survey.without_id.first) == (1, [4])
    got = [(game_id, [text for _, text in lines]) for game_id, lines in games]
    assert [g for g, _ in got] == [-1, 0, 1, 3, 5, 6, 7, 10**12]
    assert dict(got)[3] == [line(3, "copy 1"), line(3, "copy 4")]  # both copies, in file order
    numbers = {game_id: [n for n, _ in lines] for game_id, lines in ordered.read_in_order(path, line_id)[1]}
    assert numbers[5] == [1] and numbers[3] == [5, 8]


def test_a_sorted_file_is_streamed_and_the_final_sort_leaves_it_alone(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"".join(line(i) for i in range(4)))
    survey, games = ordered.read_in_order(path, line_id)
    assert survey.ascending and (survey.first, survey.last) == (0, 3)
    assert [g for g, _ in games] == [0, 1, 2, 3]
    before = path.stat()
    assert ordered.sort_results(path, 4, line_id)
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not ordered.sort_results(path, 5, line_id)  # a game missing


def test_the_final_sort_of_lines_out_of_order_keeps_the_last_of_each_and_the_strays_last(tmp_path, monkeypatch):
    monkeypatch.setattr(ordered, "WINDOW", 2)
    path = tmp_path / "results.jsonl"
    path.write_bytes(line(2) + line(-4) + line(0) + line(1, "old") + line(9) + line(1, "new"))
    assert ordered.sort_results(path, 3, line_id)
    assert path.read_bytes() == line(0) + line(1, "new") + line(2) + line(-4) + line(9)


def test_parts_whose_lines_are_out_of_order_merge_into_the_whole_run(tmp_path, monkeypatch, capsys):
    from runners.merge import main as merge_main

    monkeypatch.setattr(ordered, "WINDOW", 2)
    whole, first, second = _halves(tmp_path)
    for part in (first, second):
        lines = (part / "results.jsonl").read_bytes().splitlines(keepends=True)
        random.Random(1).shuffle(lines)
        (part / "results.jsonl").write_bytes(b"".join(lines))
    out = tmp_path / "merged"
    assert merge_main([str(out), str(second), str(first)]) == 0
    assert (out / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()
    assert len(RunDir.open(out).records()) == 8
