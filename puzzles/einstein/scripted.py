"""Scripted players for the Einstein game. Each acts from its own view only (its knowledge, the board,
the public history; never the partner's knowledge or the game state) and writes its reply in the
reference's format, which the game parses as it would a model's.

- ``optimal``: the planner's step semantics played from one side. It computes its own valid set
  (§2.5) and takes, in order: the answer to the partner's ask (the item that lets the partner place
  the block if it has one), a move (to the common bin first, so the partner gets work), a share
  that lets the partner place a block it has to handle (as far as it can tell: what the partner
  surely knows is the grounding of block0, what was shared either way, and the board), an ask about
  a block it has to move, another share, another ask, a guess (a block it cannot place: into a
  bin of its side that no failed move has ruled out, or into the common bin when every bin left is
  on the far side), or a pass. It cannot see its partner's constraints, so it is not the oracle the
  planner is: in self-play it solved every instance tried (all modes, N = 4 to 6), at a mean of
  about 1.1 times the optimal steps.
- ``share_everything``: shares every item it holds (one per step, repeats of the partner's included
  while the game lets it), then plays as ``optimal``.
- ``seek_only``: never shares unless asked; asks about every block it cannot place; moves.
- ``random_mover``: a random move the table allows (a block within reach to another bin within
  reach), seeded by the rng it is given.
"""

from __future__ import annotations

import random

from ..turn import Reply, TurnContext
from ..policy import Answer, ScriptedFactory
from .actions import Action, Ask, Move, Pass, Share, read_action
from .board import BIN_NAMES, BIN_OF, COMMON, OWN, REACH, START
from .knowledge import add, compact, infer
from .prompt import format_reply
from .validity import SHARES, mentions, unknown_blocks
from .view import EinsteinView, inferred, my_valid_actions, partner_asked, placed, shared_items


def _write(action: Action, why: str) -> str:
    return format_reply(Reply(message="", actions=(action,)), why)


def partner_knows(view: EinsteinView):
    """What the partner surely infers: block0's grounding, every item shared either way, the board."""
    items = [i for i in view.knowledge[:1]]  # the grounding of block0, which both hold from the start
    for entry in view.history:
        if not entry.failed and entry.text.startswith("share "):
            action = read_action(entry.text)
            if isinstance(action, Share):
                items.append(action.item)
    return infer(view.blocks, items, placed(view))


def needed_by_partner(view: EinsteinView, role: str, know) -> set[int]:
    """Blocks the partner has to handle: not placed, and in its start bin or (as far as this player
    knows) bound for its side."""
    board = view.board()
    partner_start = START["player2" if role == "player1" else "player1"]
    out = set()
    for b, where in enumerate(board):
        goal = know[b]
        if where == goal:
            continue
        if where == partner_start or (goal < 4 and goal not in OWN[role]):
            out.add(b)
    return out


def _share_score(view: EinsteinView, role: str, item, know, theirs, needed: set[int]) -> int:
    small = compact(item)
    if small is None:
        return -1
    after = add(theirs, small)
    if any(after[b] < 4 <= theirs[b] for b in needed):
        return 2
    blocks = small[:1] if len(small) == 2 else small[:2]
    return 1 if any(b in needed and theirs[b] >= 4 for b in blocks) else 0


def _asked_before(view: EinsteinView) -> set[int]:
    """Blocks this player asked about and got no answer about in the partner's next step."""
    out = set()
    for i, entry in enumerate(view.history):
        if not entry.mine:
            continue
        action = read_action(entry.text)
        if isinstance(action, Ask):
            answer = read_action(view.history[i + 1].text) if i + 1 < len(view.history) else None
            if i + 1 < len(view.history) and not (isinstance(answer, Share) and _about(answer, action.block)):
                out.add(action.block)
    return out


def _about(share: Share, block: int) -> bool:
    small = compact(share.item)
    return small is not None and mentions(small, block)


def _mine_to_handle(view: EinsteinView, role: str, know) -> list[int]:
    """Unknown blocks this player could move: in its start bin, or in the common bin."""
    board = view.board()
    return [b for b in unknown_blocks(know) if board[b] in (START[role], COMMON)]


def _guess(view: EinsteinView, role: str, know) -> Move | None:
    """A move of a block of unknown bin: into a bin of this side no failed move ruled out, or into the
    common bin when only far bins are left."""
    board = view.board()
    ruled_out: tuple[dict[int, set[int]], dict[int, set[int]]] = ({}, {})  # by this player's moves, by its partner's
    for entry in view.history:
        action = read_action(entry.text)
        if isinstance(action, Move) and action.block < view.blocks:
            target = BIN_OF[action.target]
            if target < 4 and board[action.block] != target:
                ruled_out[0 if entry.mine else 1].setdefault(action.block, set()).add(target)
    for b in _mine_to_handle(view, role, know):
        root, delta = (know[b] - 4) >> 2, (know[b] - 4) & 3

        def left(sources) -> set[int]:
            possible = set(range(4))
            for m, code in enumerate(know):  # a bin ruled out for a block of b's component rules one out for b
                if code >= 4 and (code - 4) >> 2 == root:
                    for found in sources:
                        for bin_ in found.get(m, ()):
                            possible.discard(bin_ ^ ((code - 4) & 3) ^ delta)
            return possible

        # the partner's failed moves may have failed for other reasons: trust them only while consistent
        possible = left(ruled_out) or left(ruled_out[:1])
        mine = [t for t in OWN[role] if t in possible]
        if mine:
            return Move(b, BIN_NAMES[board[b]], BIN_NAMES[mine[0]])
        if board[b] != COMMON and possible:
            return Move(b, BIN_NAMES[board[b]], BIN_NAMES[COMMON])
    return None


def decide(view: EinsteinView, role: str, *, share_first: bool = False, share_unasked: bool = True) -> tuple[Action, str]:
    """The ``optimal`` strategy's step (with ``share_first``: share everything first; without
    ``share_unasked``: share only to answer an ask)."""
    know = inferred(view)
    valid = my_valid_actions(view, role)
    moves = [a for a in valid if isinstance(a, Move)]
    shares = [a for a in valid if isinstance(a, Share)]
    asks = [a for a in valid if isinstance(a, Ask)]
    asked = partner_asked(view)
    theirs = partner_knows(view)
    needed = needed_by_partner(view, role, know)
    if asked is not None:
        answers = [s for s in shares if _about(s, asked)]
        if answers:
            best = max(answers, key=lambda s: _share_score(view, role, s.item, know, theirs, {asked}))
            return best, f"My partner asked about block{asked}; I share what I know about it."
    if share_first and shares and view.mode in SHARES:
        return shares[0], "I share everything I know."
    if moves:
        move = sorted(moves, key=lambda m: m.target != BIN_NAMES[COMMON])[0]
        return move, f"I know where block{move.block} goes, so I move it."
    offered = shares if (share_unasked and view.mode in SHARES) else []
    scored = sorted(offered, key=lambda s: -_share_score(view, role, s.item, know, theirs, needed))
    if scored and _share_score(view, role, scored[0].item, know, theirs, needed) > 0:
        return scored[0], "My partner needs this to place a block."
    mine = set(_mine_to_handle(view, role, know))
    tried = _asked_before(view)
    for pick in (
        [a for a in asks if a.block in mine and a.block not in tried],
        scored,
        [a for a in asks if a.block not in tried],
    ):
        if pick:
            return pick[0], "I need to know more."
    guess = _guess(view, role, know)
    if guess is not None:
        return guess, f"I do not know where block{guess.block} goes; I try a bin."
    return Pass(), "Nothing useful to do now."


class Optimal:
    def __init__(self, role: str, rng: random.Random) -> None:
        self.role = role

    async def reply(self, context: TurnContext) -> Answer:
        action, why = decide(context.view, context.role)
        return Answer(_write(action, why))


class ShareEverything:
    def __init__(self, role: str, rng: random.Random) -> None:
        self.role = role

    async def reply(self, context: TurnContext) -> Answer:
        action, why = decide(context.view, context.role, share_first=True)
        return Answer(_write(action, why))


class SeekOnly:
    def __init__(self, role: str, rng: random.Random) -> None:
        self.role = role

    async def reply(self, context: TurnContext) -> Answer:
        action, why = decide(context.view, context.role, share_unasked=False)
        return Answer(_write(action, why))


class RandomMover:
    def __init__(self, role: str, rng: random.Random) -> None:
        self.rng = rng

    async def reply(self, context: TurnContext) -> Answer:
        view: EinsteinView = context.view
        board = view.board()
        reach = REACH[context.role]
        options = [
            Move(b, BIN_NAMES[board[b]], BIN_NAMES[t]) for b in range(view.blocks) if board[b] in reach
            for t in reach if t != board[b]
        ]
        if not options:
            return Answer(_write(Pass(), "Nothing within reach."))
        return Answer(_write(self.rng.choice(options), "A random move."))


SCRIPTED: dict[str, ScriptedFactory] = {
    "optimal": Optimal,
    "share_everything": ShareEverything,
    "seek_only": SeekOnly,
    "random_mover": RandomMover,
}

__all__ = ["SCRIPTED", "decide", "needed_by_partner", "partner_knows", "shared_items"]
