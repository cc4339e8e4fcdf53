"""Extensions never change the default two-agent game: the same seeds give the same records, byte
for byte, as the reference written by tests/e2e/make_golden.py. The reference written by results
format 1 (before games were folders) upgrades to the same bytes but for what format 1 did not
record: it counted every write as an action, so its figures read as writes and the modifications
(the paper's actions per position) are missing; and its games were played before the prompt was a
parameter, with the prompt now called guided."""

import anyio
import msgspec

from engine.records.record import encode_record
from engine.records.rundir import decode_any_record
from tests.e2e.make_golden import GOLDEN, GOLDEN_V1, records


def test_default_game_records_are_unchanged():
    assert anyio.run(records) == GOLDEN.read_bytes()


def as_format_1_recorded(line: bytes, **played_with) -> bytes:
    """A record written now, less the modifications format 1 did not count, with ``played_with``
    as its parameters."""
    record = decode_any_record(line)
    scores = {k: v for k, v in record.scores.items() if not k.startswith("actions_per_position.")}
    metrics = {k: v for k, v in record.metrics.items() if k != "position_actions"}
    spec = msgspec.structs.replace(record.spec, params=msgspec.structs.replace(record.spec.params, **played_with))
    return encode_record(msgspec.structs.replace(record, spec=spec, scores=scores, metrics=metrics)) + b"\n"


def test_format_1_records_upgrade_to_the_records_written_now_less_what_format_1_did_not_count():
    old = GOLDEN_V1.read_bytes().splitlines(keepends=True)
    upgraded = b"".join(encode_record(decode_any_record(line)) + b"\n" for line in old)
    assert b'"actions_per_position":{' in old[0] and b'"scores":{' not in old[0]
    now = GOLDEN.read_bytes().splitlines(keepends=True)
    assert upgraded == b"".join(as_format_1_recorded(line, prompt="guided") for line in now)
    assert b'"actions_per_position.alice"' in now[0] and b'"prompt":"paper"' in now[0]


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
    now = anyio.run(played).splitlines(keepends=True)
    assert b"".join(as_format_1_recorded(line) for line in now) == upgraded
