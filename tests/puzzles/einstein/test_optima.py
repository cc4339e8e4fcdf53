"""The on-disk cache of optimal steps: a miss plans and appends one line, a hit reads it back, a
damaged line is skipped, and processes appending at once leave only whole lines."""

import json
import multiprocessing
import os
from pathlib import Path

import msgspec

from puzzles.einstein import optima
from puzzles.einstein.board import instance_from_id
from puzzles.einstein.generate import generate
from puzzles.einstein.planner import plan

ID = "4_0202_3120_0002_210"


def _lines(cache):
    return (cache / optima.FILE_NAME).read_text().splitlines()


def test_a_miss_plans_and_stores_a_hit_reads_back(private_cache, monkeypatch):
    inst = instance_from_id(ID)
    record = optima.optimum(inst, ("ask", "ask"), 1000)
    assert record.steps == 10 and record.id == ID and record.modes == "ask/ask" and record.budget == 1000
    lines = _lines(private_cache)
    assert len(lines) == 1 and json.loads(lines[0])["steps"] == 10
    optima.forget()
    calls = []
    monkeypatch.setattr(optima, "plan", lambda *a, **k: calls.append(a) or plan(*a, **k))
    assert optima.optimum(inst, ("ask", "ask"), 1000) == record  # from disk
    assert calls == [] and len(_lines(private_cache)) == 1
    optima.optimum(inst, ("ask", "ask"), 2000)  # another budget is another key
    assert len(calls) == 1 and len(_lines(private_cache)) == 2


def test_the_cache_follows_the_environment_variable(tmp_path, monkeypatch):
    inst = instance_from_id(ID)
    for name in ("a", "b"):
        monkeypatch.setenv("ASYMGAMES_CACHE", str(tmp_path / name))
        optima.optimum(inst, ("none", "none"), 100)
        assert len((tmp_path / name / optima.FILE_NAME).read_text().splitlines()) == 1


def test_damaged_lines_are_skipped_and_a_cut_line_is_ended(private_cache):
    private_cache.mkdir(parents=True)
    path = private_cache / optima.FILE_NAME
    good = msgspec.json.encode(optima.Record(ID, "share/share", 50, 7, 1, "player1")).decode()  # a wrong value, on purpose
    path.write_text("not json\n{\"id\": 3}\n" + good + "\n" + '{"id": "4_0202')
    inst = instance_from_id(ID)
    assert optima.optimum(inst, ("share", "share"), 50).steps == 7  # read, not planned
    assert optima.optimum(inst, ("share", "share"), 60).steps == 8  # planned, appended after the cut line
    lines = path.read_text().splitlines()
    assert lines[-2] == '{"id": "4_0202' and json.loads(lines[-1])["budget"] == 60


def test_records_of_older_planning_rules_are_ignored(private_cache):
    # 4_2020_3120_0011_210: 8 steps with player 2 first (rules 1, the reference's start), 7 as played
    game_id = "4_2020_3120_0011_210"
    private_cache.mkdir(parents=True)
    path = private_cache / optima.FILE_NAME
    old = optima.Record(game_id, "share_ask/share_ask", 1000, 8, 10, "player2", rules=1)
    path.write_bytes(msgspec.json.encode(old) + b"\n")
    record = optima.optimum(instance_from_id(game_id), ("share_ask", "share_ask"), 1000)
    assert (record.steps, record.first, record.rules) == (7, "player1", optima.RULES)
    assert len(_lines(private_cache)) == 2  # planned again and appended


def _worker(args):
    directory, seeds = args
    os.environ["ASYMGAMES_CACHE"] = directory
    optima.forget()
    for seed in seeds:
        optima.optimum(generate(5, seed), ("share_ask", "share_ask"), 100_000)


def test_processes_appending_at_once_leave_whole_lines(private_cache):
    jobs = [(str(private_cache), range(k, 160, 4)) for k in range(4)] + [(str(private_cache), range(0, 160, 8))]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_worker, jobs)
    lines = _lines(private_cache)
    records = [msgspec.json.decode(line.encode(), type=optima.Record) for line in lines]  # every line decodes
    assert {r.id for r in records} == {generate(5, s).id for s in range(160)}
    for record in records[:20]:
        assert record.steps == plan(instance_from_id(record.id)).steps


async def test_a_game_in_the_engine_plans_in_a_worker_thread_never_on_the_event_loop(private_cache, monkeypatch):
    import threading

    from engine import Grid, PolicyFactory, play_game

    where = []

    def watched(*args, **kwargs):
        where.append(threading.current_thread() is threading.main_thread())
        return plan(*args, **kwargs)

    monkeypatch.setattr(optima, "plan", watched)
    optima.forget()
    config = Grid(game="einstein", seeds=3, agents=[["optimal", "optimal"]], params={"blocks": [5]})
    records = [await play_game(config.spec(i), PolicyFactory()) for i in range(3)]
    assert where == [False, False, False]  # one plan per instance, none on the loop's thread
    assert all(r.metrics["optimal_steps"] and r.scores["step_ratio"] >= 1 for r in records)


def _appender(args):
    path, k = args
    for i in range(1500):  # lines of up to ~3.5 kB, so many cross a page boundary while being copied
        optima._append(Path(path), optima.Record("x" * (k * 37 % 3000 + i % 500), "a/b", i, 1, 1, "p"))


def test_appends_that_race_a_half_copied_write_add_no_empty_lines(tmp_path):
    path = tmp_path / optima.FILE_NAME
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_appender, [(str(path), k) for k in range(4)])
    lines = path.read_bytes().split(b"\n")
    assert lines.pop() == b"" and len(lines) == 4 * 1500
    assert all(_is_record(line) for line in lines)


def _is_record(line: bytes) -> bool:
    try:
        msgspec.json.decode(line, type=optima.Record)
    except msgspec.DecodeError:
        return False
    return True
