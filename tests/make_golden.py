"""Writes tests/data/golden_records.jsonl: records of two-agent games under several conditions.

The records are the reference for 'extensions never change the default game': run this only when a
change to the default game's records is intended, and say so in the commit.

    .venv/bin/python tests/make_golden.py
"""

import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import PolicyFactory, RunConfig, play_game  # noqa: E402
from engine.records import encode_record  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "data" / "golden_records.jsonl"
CONDITIONS = [
    RunConfig(games=8, seed=1),
    RunConfig(games=8, seed=2, alice="noisy", bob="noisy", feedback="joint"),
    RunConfig(games=6, seed=3, alice="one_piece", bob="one_piece", distractors=3, feedback="both_detailed"),
    RunConfig(games=6, seed=4, alice="noisy", bob="one_piece", distractors=2, distractors_in="bob", history=None, feedback="own"),
    RunConfig(games=4, seed=5, size=12, alice="share_everything", bob="ignore", feedback="none", max_turns=5),
]


async def records() -> bytes:
    out = []
    for config in CONDITIONS:
        for i in range(config.games):
            out.append(encode_record(await play_game(config.spec(i), PolicyFactory())) + b"\n")
    return b"".join(out)


if __name__ == "__main__":
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_bytes(anyio.run(records))
    print(f"wrote {GOLDEN}")
