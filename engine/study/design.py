"""A study's design as cells to fill, and the rule that gives each participant's next game a cell.

A block's *cells* are its conditions crossed with the seats a person takes (a condition with a
person partner is one cell: every seat is a person). Each cell wants its share of the condition's
games. A block's games are recorded in a run directory of their own whose plan (``block_grid``, a
``Grid``) holds every cell's condition, so game ``c * seeds + i`` is grid condition ``c`` on seed
``i``: the same instance in every condition, as in any sweep, and reports and the viewer read it as
any run.

The next game of a participant (``choose``) goes to the open cell (not yet full, counting the games
in play) that, in this order: the participant has had least (their conditions spread over their
rounds), was given least often at this place in a participant's sequence (the order of conditions
is balanced across people, as a Latin square balances it), is least filled for its target, and
gives the participant the seat they have had least; ties go by a hash of the study's seed and the
cell, so the same history always gives the same cell. The slot (``slot``) is the first seed of the
cell's grid condition not yet used and not yet played by any of the game's participants in this
block, so nobody meets the same instance twice.

With ``block_order = "balanced"`` each participant plays the blocks in an order of a balanced Latin
square (Williams': every block comes at every place, and after every other block, equally often; an
odd number of blocks takes the square and its mirror), the order given least so far (``block_order``)
with ties by a hash of the study's seed and the order.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import msgspec

from engine.plan.grid import Grid
from engine.policies.seat import HUMAN

from engine.study.spec import BALANCED, MODEL, PERSON, Study

SLOT_ROOM = 4  # seeds per grid condition, as a multiple of the largest cell: room for games not counted


class Cell(NamedTuple):
    block: int
    condition: str
    seat: str | None  # the role the person takes; None where every seat is a person

    @property
    def label(self) -> str:
        return f"{self.condition}@{self.seat}" if self.seat else self.condition


class Had(NamedTuple):
    """What a participant (or the people of a pair) has had in a block."""

    conditions: Counter[str]
    seats: Counter[str]
    slots: frozenset[int]


NOTHING = Had(Counter(), Counter(), frozenset())


def cells(study: Study, block: int) -> list[Cell]:
    out = []
    for condition in study.blocks[block].conditions:
        if condition.partner == PERSON:
            out.append(Cell(block, condition.name, None))
        else:
            out += [Cell(block, condition.name, seat) for seat in study.seats(block)]
    return out


def target(study: Study, cell: Cell) -> int:
    """The games a cell wants: its condition's games, shared out over the seats (rounded up)."""
    games = study.condition(cell.block, cell.condition).games
    return games if cell.seat is None else math.ceil(games / len(study.seats(cell.block)))


def partner_policy(study: Study, block: int, condition: str) -> str:
    partner = study.condition(block, condition).partner
    return HUMAN if partner == PERSON else study.model if partner == MODEL else partner


def agents(study: Study, cell: Cell) -> dict[str, str]:
    """Role -> policy of a cell's games, in turn order."""
    other = partner_policy(study, cell.block, cell.condition)
    return {role: HUMAN if cell.seat in (None, role) else other for role in study.roles(cell.block)}


def _params(study: Study, block: int, condition: str) -> Any:
    b = study.blocks[block]
    merged = {**b.params, **study.condition(block, condition).params}
    return msgspec.convert(merged, study.game(block).rules.Params).normal()


def _feedback(study: Study, block: int, condition: str) -> str:
    return study.condition(block, condition).feedback or study.blocks[block].feedback or study.game(block).rules.default_feedback


def _max_turns(study: Study, block: int, condition: str) -> int:
    given = study.condition(block, condition).max_turns or study.blocks[block].max_turns
    return given or study.game(block).rules.default_max_turns(_params(study, block, condition), study.roles(block))


def block_grid(study: Study, block: int) -> Grid:
    """The plan of a block's run directory: every cell's condition (and the combinations of their
    axes, which simply get no games), seeds enough for every cell."""
    b = study.blocks[block]
    game = study.game(block)
    names = [c.name for c in b.conditions]
    rosters = _distinct(list(agents(study, cell).values()) for cell in cells(study, block))
    sets = [msgspec.to_builtins(_params(study, block, n)) for n in names]
    keys = [k for k in game.rules.Params.__struct_fields__ if any(k in s for s in sets) and len({repr(s.get(k)) for s in sets}) > 1]
    axes = {k: _distinct(s[k] for s in sets) for k in keys}
    fixed = {k: v for k, v in sets[0].items() if k not in keys and k != "game"}
    return Grid(
        name=f"{study.name}-{block}", game=b.game, seed=study.seed, agents=rosters,
        seeds=SLOT_ROOM * max(target(study, c) for c in cells(study, block)),
        params={**{k: [v] for k, v in fixed.items()}, **axes},
        feedback=_distinct(_feedback(study, block, n) for n in names),
        max_turns=_distinct(_max_turns(study, block, n) for n in names),
        history=[b.history if b.history is not None else 1],
    )


def _distinct(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def grid_condition(study: Study, grid: Grid, cell: Cell, *, conditions: list | None = None) -> int:
    """The index of a cell's condition in its block's grid."""
    params = _params(study, cell.block, cell.condition)
    wanted = (params, agents(study, cell), _feedback(study, cell.block, cell.condition), _max_turns(study, cell.block, cell.condition))
    for index, (p, a, options) in enumerate(conditions if conditions is not None else grid.conditions()):
        if (p, a, options.feedback, options.max_turns) == wanted:
            return index
    raise ValueError(f"the plan of block {cell.block} has no condition for {cell.label}")


def condition_names(study: Study, block: int) -> dict[str, str]:
    """The study's name of each of the block's grid conditions that a cell plays, by the condition's
    label (``GameSpec.condition()``), as a report names it."""
    grid = block_grid(study, block)
    conditions = grid.conditions()
    specs = grid.condition_specs()
    return {specs[grid_condition(study, grid, cell, conditions=conditions)].condition(): cell.condition for cell in cells(study, block)}


def open_cells(study: Study, block: int, counts: Mapping[Cell, int]) -> list[Cell]:
    """The block's cells that want more games (``counts``: games counted or in play)."""
    return [c for c in cells(study, block) if counts.get(c, 0) < target(study, c)]


def choose(
    study: Study, block: int, counts: Mapping[Cell, int], at_place: Mapping[tuple[int, str], int], had: Had, place: int,
) -> Cell | None:
    """The cell of a participant's next game in ``block`` (the rule in the module's docstring), or
    None when the block is full. ``at_place[(place, condition)]``: games given at that place of a
    participant's sequence in that condition."""
    def key(cell: Cell) -> tuple:
        fill = counts.get(cell, 0) / target(study, cell)
        seat = had.seats[cell.seat] if cell.seat is not None else min(had.seats[s] for s in study.seats(block))
        tie = int.from_bytes(hashlib.blake2b(f"{study.seed}:{cell.block}:{cell.label}".encode(), digest_size=8).digest(), "big")
        return (had.conditions[cell.condition], at_place.get((place, cell.condition), 0), fill, seat, tie)

    found = open_cells(study, block, counts)
    return min(found, key=key) if found else None


def block_orders(n: int) -> list[tuple[int, ...]]:
    """The orders of ``n`` blocks of a balanced Latin square (Williams design)."""
    if n < 2:
        return [tuple(range(n))]
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:  # 0, 1, n-1, 2, n-2, ...
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    orders = [tuple((b + shift) % n for b in first) for shift in range(n)]
    if n % 2:
        orders += [order[::-1] for order in orders]
    return orders


def block_order(study: Study, given: Mapping[tuple[int, ...], int]) -> tuple[int, ...]:
    """The block order of the next participant: the study's own unless ``block_order`` is
    "balanced", else the square's order given least (``given``: participants per order)."""
    n = len(study.blocks)
    if study.block_order != BALANCED or n < 2:
        return tuple(range(n))

    def tie(order: tuple[int, ...]) -> int:
        return int.from_bytes(hashlib.blake2b(f"{study.seed}:{order}".encode(), digest_size=8).digest(), "big")

    return min(block_orders(n), key=lambda order: (given.get(order, 0), tie(order)))


def slot(used: Iterable[int], had: Iterable[int], seeds: int) -> int | None:
    """The first seed index of a grid condition not used in it and not played by the game's people."""
    taken = set(used) | set(had)
    return next((i for i in range(seeds) if i not in taken), None)


def fallback(study: Study, block: int, condition: str) -> str:
    """The condition a person-partner condition falls back to when no partner comes."""
    given = study.condition(block, condition).fallback
    return given or next(c.name for c in study.blocks[block].conditions if c.partner != PERSON)
