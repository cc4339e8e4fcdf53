"""The cyclic garbage collector, set for a run of many games at once.

A game allocates its objects (tasks, coroutines, state, messages) and, when it ends, reference
counting frees nearly all of them: the cyclic collector finds little. With Python's thresholds
(700, 10, 10) it still runs every 700 allocations and, with thousands of games in flight, walks
their live objects again and again, promoted from one generation to the next. For the run:

- ``gc.freeze()`` after start-up: what is loaded by then (modules, classes, functions, the plan) is
  never walked again;
- thresholds (1,000,000, 20, 10): a young collection every million allocations (net of what was
  freed), and an older one every 20 of those. The young generation holds every object allocated since
  the last collection that is still alive; with thousands of games in flight most are the objects of
  games still playing, walked at every young collection and again, promoted, at the older ones. At
  50,000, with 5000 games in flight, the collector took 1.5 s of a 7.7 s run of 20,000 games (43 young
  collections of up to 0.24 s each; three older ones of up to 0.38 s) against 0.01 s at 256 in flight.

Messages on the bus are frozen msgspec structs the collector does not track (``gc=False``).
Measured with ``benchmarks/bench_engine.py --collector`` (scripted games, 256 and 5000 in flight):
with Python's settings a game costs about 1.6 times the CPU at 5000 in flight as at 256, with a young
collection every 50,000 allocations 1.4 times, with these 1.05 to 1.16 times, at the same CPU
at 256 and the same peak memory (default and noisy games). Games make little cyclic garbage (some 650
objects in 20,000 games); what they make waits longer for the collector. The process's settings
are put back when the run ends (a caller that runs the runner in process keeps its own); a Ray
worker sets them for its life.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (1_000_000, 20, 10)


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
