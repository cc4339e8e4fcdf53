"""Reading replies: a well-formed reply against ``msgspec.json.decode`` of the same text (the
anchor; target <= 2x), then the time to find the reply's JSON object after brace-heavy text, by
length. Prints figures; asserts nothing. Reading is linear when the time per kilobyte stays flat as
the text grows.

    .venv/bin/python benchmarks/bench_replies.py
"""

from __future__ import annotations

import sys
import time
import timeit

import msgspec
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles.turn import ReplyFormatError  # noqa: E402
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


WELL_FORMED = {
    "bare object": '{"message": "I hold a red square at 2.", "actions": [{"replace": 2, "by": {"shape": "square", "color": "red"}}]}',
    "prose, then object": 'I will share what I see.\n{"message": "I hold a red square at 2.", "actions": []}',
    "fenced object": '```json\n{"message": "I hold a red square at 2.", "actions": []}\n```',
    # the length of a model's turn: a paragraph of reasoning, then a message and five actions
    "a model's turn": "My partner said position 1 is a star and the colors are red, blue, green, black and white. "
    "I see the shapes, so I can match them and fill in every position now.\n"
    + '{"message": "I placed all five; please check yours against my list: star red, circle blue, square green, '
    'triangle black, heart white.", "actions": ['
    + ", ".join(f'{{"replace": {i}, "by": {{"shape": "{s}", "color": "{c}"}}}}' for i, s, c in
                [(1, "star", "red"), (2, "circle", "blue"), (3, "square", "green"), (4, "triangle", "black"), (5, "heart", "white")])
    + "]}",
}


def well_formed_times(rounds: int = 5) -> dict[str, tuple[float, float]]:
    """Per reply, interleaved rounds, best of each: seconds of the reader and of the bare decode of its object."""
    found = {}
    for name, text in WELL_FORMED.items():
        body = text[text.index("{"): text.rindex("}") + 1].encode()
        reader, anchor = [], []
        for _ in range(rounds):
            reader.append(min(timeit.repeat(lambda: last_json_object(text), number=2000, repeat=3)) / 2000)
            anchor.append(min(timeit.repeat(lambda: msgspec.json.decode(body), number=2000, repeat=3)) / 2000)
        found[name] = (min(reader), min(anchor))
    return found


def well_formed() -> None:
    for name, (r, a) in well_formed_times().items():
        print(f"{name:>20}: reader {r * 1e6:6.2f} us, msgspec.json.decode {a * 1e6:6.2f} us, {r / a:5.1f}x (target <= 2x)")


def main() -> None:
    well_formed()
    sizes = [32_000, 128_000, 1_000_000]
    print(f"{'flood':>8} " + " ".join(f"{s // 1000:>7} KB" for s in sizes) + "   ms per 100 KB (32 KB -> 1 MB)")
    for name, unit in FLOODS.items():
        seconds = [best_of(unit * (size // len(unit)) + REPLY) for size in sizes]
        per = [1e5 * t / s * 1000 for t, s in zip(seconds, sizes)]
        print(f"{name:>8} " + " ".join(f"{t:8.3f} s" for t in seconds) + f"   {per[0]:.1f} -> {per[-1]:.1f}")


if __name__ == "__main__":
    main()
