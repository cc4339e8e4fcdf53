"""What a player knows: its explicit knowledge (the constraints it was given or told), its inferred
knowledge (their closure plus what it saw placed on the board), and the items marked shared.

Inference (the reference's ``Player.infer``) composes known edges of the graph {blocks} + {4
destination bins}: two relations compose by XOR of their deltas (``board.DELTA``), a grounding and a
relation give a grounding, two groundings in one bin give a "same bin" relation. Since every relation
type is a group element (XOR on the bin number), the closure is exactly: blocks joined by known
relations form components whose relative bins are known, and a component containing a grounded
block is grounded whole. ``Know`` stores that canonically, one small int per block:

- ``0..3``: the block's bin is known;
- ``4 + 4 * root + delta`` otherwise: ``root`` is the lowest block of its component and the block's
  bin is the root's XOR ``delta``.

So two knowledge states infer the same iff their ``Know`` tuples are equal (the planner hashes them).
Items are compact tuples: ``(block, bin)`` grounds a block, ``(a, b, delta)`` relates two blocks.
Knowledge inconsistent with what is already known (which true constraints never are) is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from .actions import Grounding, Item, Relation
from .board import BIN_OF, DELTA

Know = tuple[int, ...]
Compact = tuple[int, ...]


def empty(n: int) -> Know:
    return tuple(4 + 4 * b for b in range(n))


def goal_of(know: Know, block: int) -> int | None:
    """The bin ``block`` is known to belong in, or None."""
    code = know[block]
    return code if code < 4 else None


def known_mask(know: Know) -> int:
    """Bit b set when block b's bin is known."""
    mask = 0
    for b, code in enumerate(know):
        if code < 4:
            mask |= 1 << b
    return mask


def _ground(know: Know, block: int, bin_: int) -> Know:
    code = know[block] - 4
    root, root_bin = code >> 2, bin_ ^ (code & 3)
    return tuple(
        root_bin ^ ((c - 4) & 3) if c >= 4 and (c - 4) >> 2 == root else c for c in know
    )


def add_grounding(know: Know, block: int, bin_: int) -> Know:
    if know[block] < 4 or not 0 <= bin_ < 4:
        return know
    return _ground(know, block, bin_)


def add_relation(know: Know, a: int, b: int, delta: int) -> Know:
    ca, cb = know[a], know[b]
    if ca < 4:
        return know if cb < 4 else _ground(know, b, ca ^ delta)
    if cb < 4:
        return _ground(know, a, cb ^ delta)
    ra, da = (ca - 4) >> 2, (ca - 4) & 3
    rb, db = (cb - 4) >> 2, (cb - 4) & 3
    if ra == rb:
        return know
    offset = da ^ delta ^ db  # bin(rb) = bin(ra) ^ offset
    if ra < rb:
        keep, moved = ra, rb
    else:
        keep, moved = rb, ra
    base = 4 + 4 * keep
    return tuple(
        base + (offset ^ ((c - 4) & 3)) if c >= 4 and (c - 4) >> 2 == moved else c for c in know
    )


def add(know: Know, item: Compact) -> Know:
    """``know`` with one compact item learned."""
    n = len(know)
    if len(item) == 2:
        block, bin_ = item
        return add_grounding(know, block, bin_) if 0 <= block < n else know
    a, b, delta = item
    if not (0 <= a < n and 0 <= b < n):
        return know
    return add_relation(know, a, b, delta)


def closure(n: int, items: Iterable[Compact], seen: Iterable[tuple[int, int]] = ()) -> Know:
    """What ``items`` and the board groundings ``seen`` ((block, bin) pairs) let a player infer."""
    know = empty(n)
    for item in items:
        know = add(know, item)
    for block, bin_ in seen:
        know = add_grounding(know, block, bin_)
    return know


def compact(item: Item) -> Compact | None:
    """An item struct as a compact tuple, or None if it says nothing about destination bins."""
    if isinstance(item, Grounding):
        bin_ = BIN_OF.get(item.bin, 9)
        return (item.block, bin_) if bin_ < 4 else None
    if isinstance(item, Relation):
        return (item.a, item.b, DELTA[item.kind])
    return None


def infer(n: int, items: Iterable[Item], seen: Iterable[tuple[int, int]] = ()) -> Know:
    """The closure of item structs (a player reading its prompt infers so)."""
    return closure(n, (c for c in map(compact, items) if c is not None), seen)


class Mind(msgspec.Struct, frozen=True, gc=False):
    """One player's knowledge in a game: ``explicit`` (indices of the instance's items, in the order
    the prompt lists them), ``know`` (the inferred closure) and ``marks`` (bit i: item i is marked
    shared for this player, so it may not be shared by it)."""

    explicit: tuple[int, ...]
    know: Know
    marks: int = 0

    def hears(self, i: int, item: Compact) -> Mind:
        """Told item ``i`` by the partner: explicit (appended once) and inferred."""
        explicit = self.explicit if i in self.explicit else self.explicit + (i,)
        return Mind(explicit, add(self.know, item), self.marks)

    def sees(self, block: int, bin_: int) -> Mind:
        """Saw ``block`` placed into ``bin_``: inferred only."""
        return Mind(self.explicit, add_grounding(self.know, block, bin_), self.marks)

    def marked(self, mask: int) -> Mind:
        return self if mask & ~self.marks == 0 else Mind(self.explicit, self.know, self.marks | mask)


def start_mind(n: int, items: tuple[Compact, ...], explicit: tuple[int, ...]) -> Mind:
    return Mind(explicit, closure(n, (items[i] for i in explicit)))


__all__ = [
    "Compact", "Know", "Mind", "add", "add_grounding", "add_relation", "closure", "compact", "empty",
    "goal_of", "infer", "known_mask", "start_mind",
]
