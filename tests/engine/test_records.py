"""A record that cannot be stored becomes an error record saying why; it never stops the writer."""

import msgspec

from engine.records.record import decode_record, encode_storable
from engine.records.rundir import RunDir
from tests.helpers import grid, play


def test_a_record_with_unstorable_text_is_written_as_an_error_record(tmp_path):
    plan = grid(2)
    record = play(plan.spec(0))
    record.metrics["note"] = "half a pair: \ud800"  # a game that put raw model text into its metrics
    line = encode_storable(record)
    stored = decode_record(line)
    assert (stored.game_id, stored.outcome, stored.error.kind, stored.error.type) == (0, "error", "unrecordable", "UnicodeEncodeError")
    assert stored.spec == record.spec and stored.turns == record.turns
    run = RunDir.create(tmp_path / "run", plan)
    with run.writer() as writer:
        writer.write(record)
        writer.write(play(plan.spec(1)))
    assert [(r.game_id, r.outcome) for r in run.records()] == [(0, "error"), (1, "success")]
    assert msgspec.json.decode(encode_storable(play(plan.spec(1)))) == msgspec.json.decode(msgspec.json.encode(play(plan.spec(1))))
