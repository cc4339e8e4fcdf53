"""The cyclic garbage collector, set for a run of many games at once.

A game allocates its objects (tasks, coroutines, state, messages) and, when it ends, reference
counting frees nearly all of them: the cyclic collector finds little. With Python's thresholds
(700, 10, 10) it still runs every 700 allocations and, with thousands of games in flight, walks
their live objects again and again, promoted from one generation to the next. For the run:

- ``gc.freeze()`` after start-up: what is loaded by then (modules, classes, functions, the plan) is
  never walked again;
- thresholds (50,000, 20, 10): a young collection every 50,000 allocations, by when most of a
  finished game's objects are already gone, and an older one every 20 of those.

Messages on the bus are frozen msgspec structs the collector does not track (``gc=False``).
Measured with ``benchmarks/bench_engine.py --collector`` (scripted games, 256 and 5000 in flight):
with Python's settings a game costs about 1.4 times the CPU at 5000 in flight as at 256, with these
about 1.1 times, and about 20% less CPU at 256, at the same peak memory. The process's settings
are put back when the run ends (a caller that runs the runner in process keeps its own); a Ray
worker sets them for its life.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (50_000, 20, 10)


def tune_collector(thresholds: tuple[int, int, int] = THRESHOLDS) -> None:
    """Set the collector for the rest of the process (a worker that only plays games)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)


@contextmanager
def tuned_collector(thresholds: tuple[int, int, int] = THRESHOLDS) -> Iterator[None]:
    saved = gc.get_threshold()
    tune_collector(thresholds)
    try:
        yield
    finally:
        gc.set_threshold(*saved)
        gc.unfreeze()
