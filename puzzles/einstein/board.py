"""The tabletop: seven bins, who reaches which, the 2x2 geometry of the destination bins, the
relation types, and one instance of the puzzle with its game ID.

Bins are small ints. The four destination bins are numbered by the game ID's goal digit, row + 2 *
column (row 0 = top, column 0 = left): TL = 0, BL = 1, TR = 2, BR = 3. So two destination bins are
in the same row when their numbers differ in bit 1 only, in the same column when they differ in bit
0 only, on the same diagonal when they differ in both: every relation type is an XOR of bin numbers
(``DELTA``), and composing two relations is XOR-ing their deltas. The other bins are 4 (player1's
start bin), 5 (player2's) and 6 (the common bin).

Blocks are ``0 .. N-1`` and shown as ``block0 .. block{N-1}``; block0 is the grounded block.
"""

from __future__ import annotations

import re

import msgspec

TL, BL, TR, BR, P1_BIN, P2_BIN, COMMON = range(7)
DESTINATIONS = (TL, BL, TR, BR)
BIN_NAMES = (
    "top_left_bin", "bottom_left_bin", "top_right_bin", "bottom_right_bin", "player1_bin", "player2_bin", "commonbin",
)
BIN_OF = {name: i for i, name in enumerate(BIN_NAMES)}
BOARD_ORDER = (TL, P2_BIN, TR, COMMON, BL, P1_BIN, BR)  # the order the prompt lists the bins in

ROLES = ("player1", "player2")  # player1 sits at the bottom and moves first
SIDE = {"player1": "bottom", "player2": "top"}
START = {"player1": P1_BIN, "player2": P2_BIN}
OWN = {"player1": (BL, BR), "player2": (TL, TR)}  # the destination bins on a player's side
REACH = {"player1": (BL, P1_BIN, BR, COMMON), "player2": (TL, P2_BIN, TR, COMMON)}  # in the prompt's order
REACH_SET = {role: frozenset(bins) for role, bins in REACH.items()}

# Relation types: the XOR between the two blocks' destination bins.
DELTA = {"bin": 0, "column": 1, "row": 2, "diagonal": 3}
KIND = {delta: kind for kind, delta in DELTA.items()}
KINDS = ("row", "column", "diagonal", "bin")  # the order the prompt lists them in

MAX_BLOCK_NUMBER = 30  # the reference's enum reads block0 .. block30
MIN_BLOCKS, MAX_BLOCKS = 4, 8


def side_of(bin_: int) -> str:
    """The player whose side a destination bin is on."""
    return "player1" if bin_ & 1 else "player2"


class Instance(msgspec.Struct, frozen=True, gc=False):
    """One puzzle: ``n`` blocks, each block's start bin (4 or 5) and goal bin (0..3), the anchor of
    each relation (``anchors[i]`` for block i, ``anchors[0] == 0``), who holds each relation
    (``split[i - 1]``: 0 player1, 1 both, 2 player2), the constraint items (item 0 grounds block0,
    item i relates block i to its anchor) and each role's initial explicit knowledge (item indices).
    Build one with ``make_instance`` or ``instance_from_id``."""

    n: int
    start: tuple[int, ...]
    goal: tuple[int, ...]
    anchors: tuple[int, ...]
    split: tuple[int, ...]
    items: tuple[tuple[int, ...], ...]  # ("grounding") (block, bin) or ("relation") (low block, high block, delta)
    knowledge: dict[str, tuple[int, ...]]
    id: str


def make_instance(start, goal, anchors, split) -> Instance:
    """The instance of these components; ValueError with a one-line reason if they do not make one."""
    start, goal, anchors, split = tuple(start), tuple(goal), tuple(anchors), tuple(split)
    n = len(start)
    if not MIN_BLOCKS <= n <= MAX_BLOCKS:
        raise ValueError(f"an instance has {MIN_BLOCKS} to {MAX_BLOCKS} blocks, got {n}")
    if len(goal) != n or len(anchors) != n or len(split) != n - 1:
        raise ValueError("the components of an instance must have N, N, N and N-1 entries")
    if any(s not in (P1_BIN, P2_BIN) for s in start):
        raise ValueError("every block starts in player1_bin or player2_bin")
    if any(g not in DESTINATIONS for g in goal):
        raise ValueError("every goal is a destination bin")
    if anchors[0] != 0 or any(not 0 <= a < i for i, a in enumerate(anchors) if i):
        raise ValueError("anchors[0] must be 0 and anchors[i] one of 0..i-1")
    if any(d not in (0, 1, 2) for d in split):
        raise ValueError("each relation goes to player1 (0), both (1) or player2 (2)")
    items: list[tuple[int, ...]] = [(0, goal[0])]
    for i in range(1, n):
        a = anchors[i]
        items.append((min(i, a), max(i, a), goal[i] ^ goal[a]))
    knowledge = {
        "player1": (0,) + tuple(i for i in range(1, n) if split[i - 1] <= 1),
        "player2": (0,) + tuple(i for i in range(1, n) if split[i - 1] >= 1),
    }
    parts = [
        str(n), "".join("0" if s == P1_BIN else "2" for s in start), "".join(map(str, goal)),
        "".join(map(str, anchors)), "".join(map(str, split)),
    ]
    return Instance(n, start, goal, anchors, split, tuple(items), knowledge, "_".join(parts))


_ID = re.compile(r"^([4-8])_([02]+)_([0-3]+)_([0-7]+)_([0-2]+)(?:_(\d+))?(?:\.pkl)?$")


def instance_from_id(game_id: str) -> Instance:
    """The instance a game ID encodes (``N_start_goal_anchors_split``, as the reference's file
    names, which may end in ``_XX`` (the solution index) and ``.pkl``; both are ignored)."""
    m = _ID.match(game_id.strip().rsplit("/", 1)[-1])
    if m is None:
        raise ValueError(f"not a game ID: {game_id!r}")
    n = int(m.group(1))
    start = [P1_BIN if c == "0" else P2_BIN for c in m.group(2)]
    if len(start) != n:
        raise ValueError(f"not a game ID: {game_id!r} (the start digits are not N)")
    return make_instance(start, map(int, m.group(3)), map(int, m.group(4)), map(int, m.group(5)))


def instance_id(instance: Instance) -> str:
    return instance.id
