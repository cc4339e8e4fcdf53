"""What a player is shown each step (the reference's user prompt, as data), and what it can work out
from that alone: where each block is, what it can infer, which items are marked shared, what its
partner asked in the step before, its valid set.

The view holds exactly what the prompt shows, so a prompt reads back into the same view: the
player's explicit knowledge in the prompt's order, the seven bins, the bins it reaches, the history
of steps (whose, the action as the history writes it, failed or not), and the settings the prompt
depends on (the player's action mode, the prompt family, CoT, whether notices are shown). One rule is
in the view but not in the prompt (the reference does not tell it): whether an ask-mode player's
answer to its partner's ask is accepted (``answers``); a person's seat offers answers only then.
Likewise whether a move outside the valid set still reaches the board (``guesses``); without it a
person's seat offers only the valid moves.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from .actions import Ask, Item, Share, action_text, read_action
from .board import BIN_NAMES, BIN_OF, COMMON
from .knowledge import Know, compact, infer
from .validity import settled, valid_actions


class HistoryEntry(msgspec.Struct, frozen=True, gc=False, array_like=True):
    """One past step: by this player (``mine``) or its partner, the action's text, whether it failed."""

    mine: bool
    text: str
    failed: bool


class EinsteinView(msgspec.Struct, frozen=True, gc=False):
    mode: str
    prompt: str
    cot: bool
    notices: bool
    knowledge: tuple[Item, ...]
    bins: tuple[tuple[int, ...], ...]  # the blocks in each bin, by bin number (board.BIN_NAMES)
    reach: tuple[str, ...]
    history: tuple[HistoryEntry, ...]
    answers: bool = True  # an ask-mode player may answer its partner's ask (``seek_answers``; not in the prompt)
    guesses: bool = True  # a move outside the valid set still reaches the board (``random_guess``; not in the prompt)
    unprompted: ClassVar[tuple[str, ...]] = ("answers", "guesses")  # the rules above, which the prompt does not show

    @property
    def blocks(self) -> int:
        return sum(len(b) for b in self.bins)

    def board(self) -> tuple[int, ...]:
        """The bin of each block."""
        where = [COMMON] * self.blocks
        for bin_, blocks in enumerate(self.bins):
            for b in blocks:
                where[b] = bin_
        return tuple(where)


def placed(view: EinsteinView) -> list[tuple[int, int]]:
    """(block, bin) for every block sitting in a destination bin: wrong placements are refused, so
    each is right, and the player has learned it."""
    return [(b, bin_) for bin_ in range(4) for b in view.bins[bin_]]


def inferred(view: EinsteinView) -> Know:
    """What the player infers: its explicit knowledge plus what the board shows placed."""
    return infer(view.blocks, view.knowledge, placed(view))


def partner_asked(view: EinsteinView) -> int | None:
    """The block the partner asked about in the step just before, if it did."""
    if view.history and not view.history[-1].mine:
        action = read_action(view.history[-1].text)
        if isinstance(action, Ask):
            return action.block
    return None


def shared_items(view: EinsteinView) -> set[tuple[int, ...]]:
    """The items a share in the history marked shared (by either player), as compact tuples."""
    out = set()
    for entry in view.history:
        if entry.failed or not entry.text.startswith("share "):
            continue
        action = read_action(entry.text)
        if isinstance(action, Share):
            item = compact(action.item)
            if item is not None:
                out.add(item)
    return out


def marks(view: EinsteinView) -> set[tuple[int, ...]]:
    """The items the player may not share: shared already, or settled on the board now."""
    board = view.board()
    explicit = [c for c in map(compact, view.knowledge) if c is not None]
    return shared_items(view) | {item for item in explicit if settled(board, item)}


def my_valid_actions(view: EinsteinView, role: str, *, answers: bool = True) -> list:
    """The valid set the player can work out from its view (the game computes the same from its
    state, up to marks on items settled earlier and moved out since)."""
    explicit = [c for c in map(compact, view.knowledge) if c is not None]
    return valid_actions(
        role, view.mode, view.board(), inferred(view), explicit, marks(view), partner_asked(view), answers=answers,
    )


def history_line(entry: HistoryEntry) -> str:
    line = f"{'You' if entry.mine else 'Partner'}: {entry.text}"
    return line + (", but failed." if entry.failed else "")


__all__ = [
    "BIN_NAMES", "BIN_OF", "EinsteinView", "HistoryEntry", "action_text", "history_line", "inferred", "marks",
    "my_valid_actions", "partner_asked", "placed", "shared_items",
]
