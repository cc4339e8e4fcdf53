"""Instances from a seed: ``random.Random(seed)`` draws the start bins, the goal bins, the anchor list
and the knowledge split, in that order, each uniformly over its domain (the reference's lists of
distinct sequences, here enumerated in lexicographic order).

Domains for N blocks (N = 4 to 8; the paper plays 4, 5 and 6):
- start: player1_bin or player2_bin per block, N/2 in player2_bin (N even) or (N +- 1)/2 (N odd);
- goal: a destination bin per block, every bin used, none more than N // 4 + 1 times (at most 2 for
  N <= 7), since the reference permutes each bin repeated N // 4 + 1 times;
- anchors: anchors[0] = 0 and anchors[i] one of 0..i-1 (a random recursive tree);
- split: 0, 1 or 2 per relation, each value present, none more than N // 3 + 1 times.
"""

from __future__ import annotations

import itertools
import random
from functools import lru_cache

from .board import DESTINATIONS, MAX_BLOCKS, MIN_BLOCKS, P1_BIN, P2_BIN, Instance, make_instance
from .knowledge import closure, known_mask


@lru_cache(maxsize=None)
def domains(n: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """The four domains for ``n`` blocks: (starts, goals, anchor lists, splits)."""
    if not MIN_BLOCKS <= n <= MAX_BLOCKS:
        raise ValueError(f"an instance has {MIN_BLOCKS} to {MAX_BLOCKS} blocks, got {n}")
    in_p2 = {n // 2} if n % 2 == 0 else {(n - 1) // 2, (n + 1) // 2}
    starts = tuple(s for s in itertools.product((P1_BIN, P2_BIN), repeat=n) if s.count(P2_BIN) in in_p2)
    most = n // 4 + 1
    goals = tuple(
        g for g in itertools.product(DESTINATIONS, repeat=n)
        if all(0 < g.count(b) <= most for b in DESTINATIONS)
    )
    anchors = tuple((0,) + rest for rest in itertools.product(*(range(i) for i in range(1, n))))
    most = n // 3 + 1
    splits = tuple(
        d for d in itertools.product((0, 1, 2), repeat=n - 1) if all(0 < d.count(v) <= most for v in (0, 1, 2))
    )
    return starts, goals, anchors, splits


def generate(n: int, seed: int) -> Instance:
    """The instance of ``seed`` with ``n`` blocks (the same arguments always give the same one)."""
    rng = random.Random(seed)
    starts, goals, anchors, splits = domains(n)
    instance = make_instance(rng.choice(starts), rng.choice(goals), rng.choice(anchors), rng.choice(splits))
    check_split(instance)
    return instance


def check_split(instance: Instance) -> None:
    """Neither player alone can infer every block's goal; both together can."""
    everyone = (1 << instance.n) - 1
    for role, items in instance.knowledge.items():
        mine = known_mask(closure(instance.n, (instance.items[i] for i in items)))
        assert mine != everyone, f"{instance.id}: {role} alone can place every block"
    together = known_mask(closure(instance.n, instance.items))
    assert together == everyone, f"{instance.id}: the players together cannot place every block"


__all__ = ["P1_BIN", "P2_BIN", "check_split", "domains", "generate"]
