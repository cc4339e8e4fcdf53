"""Reading replies: time to find the reply's JSON object after brace-heavy text, by length. Prints
figures; asserts nothing. Reading is linear when the time per kilobyte stays flat as the text grows.

    .venv/bin/python benchmarks/bench_replies.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles.base import ReplyFormatError  # noqa: E402
from puzzles.positions.replies import last_json_object  # noqa: E402

REPLY = '{"message": "hi", "actions": []}'
FLOODS = {"{": "{", '{"': '{"', '{"a":': '{"a":', "[{": "[{"}


def best_of(text: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        try:
            last_json_object(text)
        except ReplyFormatError:
            pass
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    sizes = [32_000, 128_000, 1_000_000]
    print(f"{'flood':>8} " + " ".join(f"{s // 1000:>7} KB" for s in sizes) + "   ms per 100 KB (32 KB -> 1 MB)")
    for name, unit in FLOODS.items():
        seconds = [best_of(unit * (size // len(unit)) + REPLY) for size in sizes]
        per = [1e5 * t / s * 1000 for t, s in zip(seconds, sizes)]
        print(f"{name:>8} " + " ".join(f"{t:8.3f} s" for t in seconds) + f"   {per[0]:.1f} -> {per[-1]:.1f}")


if __name__ == "__main__":
    main()
