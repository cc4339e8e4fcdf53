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


CHAIN_V1 = GOLDEN.parent / "golden_chain_v1.jsonl"
# The conditions of golden_chain_v1.jsonl, written by the engine before games were folders.
CHAIN_CONDITIONS = [
    dict(games=6, run_seed=1, carol="share_everything", topology="chain"),
    dict(games=6, run_seed=2, alice="noisy", bob="noisy", carol="noisy", feedback="both_detailed"),
    dict(games=4, run_seed=3, carol="one_piece", dave="share_everything", size=4, turn_order="simultaneous"),
    dict(games=4, run_seed=4, alice="one_piece", bob="ignore", topology="directed", max_actions=2),
]


def test_chain_games_are_played_exactly_as_before():
    from engine import PolicyFactory, play_game
    from tests.helpers import grid

    async def played() -> bytes:
        out = []
        for condition in CHAIN_CONDITIONS:
            fields = dict(condition)
            plan = grid(fields.pop("games"), fields.pop("run_seed"), game="chain", **fields)
            for spec in plan.specs_for(range(plan.seeds)):
                out.append(encode_record(await play_game(spec, PolicyFactory())) + b"\n")
        return b"".join(out)

    upgraded = b"".join(encode_record(decode_any_record(line)) + b"\n" for line in CHAIN_V1.read_bytes().splitlines())
    assert anyio.run(played) == upgraded
