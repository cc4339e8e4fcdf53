"""Which actions are valid for a player now (the reference's ``Player.get_moves`` filtered by the
action mode, §2.5), and which moves the table allows physically.

Everything here reads only what the player knows (its inferred bins, its explicit items and its
marks) and the board, so a player can compute its own valid set from its prompt.

- Moves: every block whose bin the player has inferred and that is not there yet. From the player's
  start bin, the common bin or its own destination bins to the goal when the goal is on its side;
  else from its start bin or own destination bins to the common bin; else none.
- Shares: every explicit item not marked shared; a relation whose two blocks both sit in destination
  bins, or a grounding whose block sits in its bin, is dropped (and marked, by the caller).
- Asks: every block whose bin the player has not inferred.

Modes: ``share_ask`` moves + shares + asks; ``share`` moves + shares; ``ask`` moves + asks, plus,
right after the partner's ``ask blockK``, the shares that mention blockK; ``none`` moves.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .actions import Action, Ask, Grounding, Item, Move, Relation, Share
from .board import BIN_NAMES, BIN_OF, COMMON, DESTINATIONS, KIND, OWN, REACH_SET, START
from .knowledge import Compact, Know

MODES = ("share_ask", "share", "ask", "none")
SHARES = frozenset({"share_ask", "share"})
ASKS = frozenset({"share_ask", "ask"})


def to_item(item: Compact) -> Item:
    if len(item) == 2:
        return Grounding(item[0], BIN_NAMES[item[1]])
    return Relation(item[0], item[1], KIND[item[2]])


def planner_moves(role: str, board: Sequence[int], know: Know) -> list[tuple[int, int, int]]:
    """(block, from, to) for every move the knowledge-based planner offers ``role``."""
    start, own = START[role], OWN[role]
    moves = []
    for block, goal in enumerate(know):
        if goal >= 4:
            continue
        where = board[block]
        if where == goal:
            continue
        if goal in own and (where == start or where == COMMON or where in own):
            moves.append((block, where, goal))
        elif where == start or where in own:
            moves.append((block, where, COMMON))
    return moves


def settled(board: Sequence[int], item: Compact) -> bool:
    """The item's blocks already sit where it says (a relation: both in destination bins)."""
    if len(item) == 2:
        return board[item[0]] == item[1]
    return board[item[0]] < 4 and board[item[1]] < 4


def open_shares(board: Sequence[int], explicit: Sequence[Compact], marked: Collection[Compact]) -> list[Compact]:
    """The explicit items the player may share: not marked, not settled (relations first, as the
    reference lists them)."""
    fresh = [item for item in explicit if item not in marked and not settled(board, item)]
    return [i for i in fresh if len(i) == 3] + [i for i in fresh if len(i) == 2]


def unknown_blocks(know: Know) -> list[int]:
    return [b for b, code in enumerate(know) if code >= 4]


def mentions(item: Compact, block: int) -> bool:
    return item[0] == block if len(item) == 2 else block in item[:2]


def valid_actions(
    role: str, mode: str, board: Sequence[int], know: Know, explicit: Sequence[Compact],
    marked: Collection[Compact], asked: int | None = None, *, answers: bool = True,
) -> list[Action]:
    """The valid set: planner moves, then shares and asks as ``mode`` allows; ``asked`` is the block
    the partner asked about in the step before (the answers ``ask`` mode allows, when ``answers``)."""
    valid: list[Action] = [
        Move(b, BIN_NAMES[src], BIN_NAMES[dst]) for b, src, dst in planner_moves(role, board, know)
    ]
    if mode in SHARES:
        valid += [Share(to_item(i)) for i in open_shares(board, explicit, marked)]
    elif mode == "ask" and asked is not None and answers:
        valid += [Share(to_item(i)) for i in open_shares(board, explicit, marked) if mentions(i, asked)]
    if mode in ASKS:
        valid += [Ask(b) for b in unknown_blocks(know)]
    return valid


def physical_problems(role: str, board: Sequence[int], move: Move) -> list[str]:
    """Why the table does not allow ``move`` for ``role`` (the affordance rules); [] if it does."""
    problems = []
    source, target = BIN_OF[move.source], BIN_OF[move.target]
    if not (move.block < len(board) and board[move.block] == source):
        problems.append("object_not_in_source")
    if source not in REACH_SET[role]:
        problems.append("source_unreachable")
    if target not in REACH_SET[role]:
        problems.append("destination_unreachable")
    if source == target:
        problems.append("same_source_destination")
    return problems


def executable(role: str, board: Sequence[int], move: Move) -> bool:
    """The environment lets ``move`` through to the board as a guess: the block is in the named
    source bin and both bins are within reach (source = destination included)."""
    return not [p for p in physical_problems(role, board, move) if p != "same_source_destination"]


def guess_moves(role: str, board: Sequence[int], know: Know) -> list[tuple[int, int, int]]:
    """(block, from, to) of the reference planner's guesses (``none`` mode): every block of unknown
    bin within reach, to each of the player's destination bins and the common bin but its own."""
    sources = {START[role], COMMON, *OWN[role]}
    targets = (*OWN[role], COMMON)
    return [
        (b, board[b], t) for b in unknown_blocks(know) if board[b] in sources for t in targets if t != board[b]
    ]


__all__ = [
    "ASKS", "DESTINATIONS", "MODES", "SHARES", "executable", "guess_moves", "mentions", "open_shares",
    "physical_problems", "planner_moves", "settled", "to_item", "unknown_blocks", "valid_actions",
]
