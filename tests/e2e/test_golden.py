"""Extensions never change the default two-agent game: the same seeds give the same records, byte
for byte, as the reference written by tests/e2e/make_golden.py. The reference written by results
format 1 (before games were folders) upgrades to exactly the same bytes: the format changed its
layout, not a single game."""

import anyio

from engine.records import encode_record
from engine.results import decode_any_record
from tests.e2e.make_golden import GOLDEN, GOLDEN_V1, records


def test_default_game_records_are_unchanged():
    assert anyio.run(records) == GOLDEN.read_bytes()


def test_format_1_records_upgrade_to_exactly_the_records_written_now():
    old = GOLDEN_V1.read_bytes().splitlines(keepends=True)
    upgraded = b"".join(encode_record(decode_any_record(line)) + b"\n" for line in old)
    assert b'"actions_per_position":{' in old[0] and b'"scores":{' not in old[0]
    assert upgraded == GOLDEN.read_bytes()
