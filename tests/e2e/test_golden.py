"""Extensions never change the default two-agent game: the same seeds give the same records, byte
for byte, as the reference written by tests/make_golden.py."""

import anyio

from tests.make_golden import GOLDEN, records


def test_default_game_records_are_unchanged():
    assert anyio.run(records) == GOLDEN.read_bytes()
