"""The results file: the last record of a game wins, read one record at a time; the final sort."""

import msgspec

from engine import RunDir
from engine.records.ids import IdCounts as _IdCounts
from tests.helpers import grid, play


def test_the_last_record_of_each_game_wins_and_the_sort_keeps_one_per_game(tmp_path):
    plan = grid(5)
    run = RunDir.create(tmp_path / "run", plan)
    records = {i: play(plan.spec(i)) for i in range(5)}
    again = {i: msgspec.structs.replace(records[i], turns=100 + i) for i in (1, 3)}
    with run.writer() as writer:
        for record in (records[3], records[1], records[4], again[1], records[0], records[2], again[3]):
            writer.write(record)
    assert [r.game_id for r in run.iter_records()] == [4, 1, 0, 2, 3]  # file order of each last copy
    assert {r.game_id: r.turns for r in run.records()}[1] == 101
    assert not run.finalize(6)  # a game missing: nothing rewritten
    assert run.finalize(5)
    lines = run.results_path.read_bytes().splitlines()
    assert [r.game_id for r in run.records()] == [0, 1, 2, 3, 4] and len(lines) == 5
    assert [r.turns for r in run.records()][1] == 101 and [r.turns for r in run.records()][3] == 103


def test_id_counts_go_past_a_byte():
    counts = _IdCounts()
    for _ in range(300):
        counts.add(7, 1)
    assert counts.add(7, -1) == 299 and counts.add(10**9, 1) == 1 and counts.add(3, 1) == 1


def test_an_id_set_holds_ids_as_bits():
    from engine.records.ids import IdSet

    ids = IdSet([5, 0, 5, 1000, 63])
    assert len(ids) == 4 and list(ids) == [0, 5, 63, 1000]
    assert 1000 in ids and 999 not in ids and -1 not in ids and "5" not in ids and 10**9 not in ids
