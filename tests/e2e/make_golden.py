"""Writes tests/data/golden_records.jsonl: records of two-agent games under several conditions.

The records are the reference for 'extensions never change the default game': run this only when a
change to the default game's records is intended, and say so in the commit.

    .venv/bin/python tests/e2e/make_golden.py
"""

import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine import PolicyFactory, play_game  # noqa: E402
from engine.records.record import encode_record  # noqa: E402
from tests.helpers import grid  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
GOLDEN = DATA / "golden_records.jsonl"
GOLDEN_V1 = DATA / "golden_records_v1.jsonl"  # the same games, written by results format 1
CONDITIONS = [
    grid(8, 1),
    grid(8, 2, alice="noisy", bob="noisy", feedback="joint"),
    grid(6, 3, alice="one_piece", bob="one_piece", distractors=3, feedback="both_detailed"),
    grid(6, 4, alice="noisy", bob="one_piece", distractors=2, distractors_in="bob", history=None, feedback="own"),
    grid(4, 5, size=12, alice="share_everything", bob="ignore", feedback="none", max_turns=5),
]


async def records() -> bytes:
    out = []
    for plan in CONDITIONS:
        for spec in plan.specs_for(range(plan.seeds)):
            out.append(encode_record(await play_game(spec, PolicyFactory())) + b"\n")
    return b"".join(out)


if __name__ == "__main__":
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_bytes(anyio.run(records))
    print(f"wrote {GOLDEN}")
