"""The actions and the knowledge items they carry, as structs (decoded from JSON in transcripts and
replays) and as the text the reference writes and reads (``move block1 from player1_bin to
commonbin``, ``share (block1, block2, same, row)``, ``ask block3``, ``pass``).

Reading is the reference's ``str_to_move``: exact keywords, a move is exactly six whitespace tokens,
a block name is ``block`` and a number 0..30 (as Python's ``int`` reads it), bin names exact. Text
that does not read is an ``Unreadable`` action: it uses up the step and shows as a failed pass.
"""

from __future__ import annotations

from typing import Union

import msgspec

from .board import BIN_NAMES, BIN_OF, DELTA, MAX_BLOCK_NUMBER


class Grounding(msgspec.Struct, frozen=True, gc=False, tag_field="item", tag="grounding"):
    """(blockK, in, BIN)"""

    block: int
    bin: str


class Relation(msgspec.Struct, frozen=True, gc=False, tag_field="item", tag="relation"):
    """(blockA, blockB, same, KIND), with a <= b."""

    a: int
    b: int
    kind: str


Item = Union[Grounding, Relation]


def relation(a: int, b: int, kind: str) -> Relation:
    """A relation with its blocks in index order (the reference normalises them so)."""
    return Relation(min(a, b), max(a, b), kind)


class Move(msgspec.Struct, frozen=True, gc=False, tag_field="action", tag="move"):
    block: int
    source: str
    target: str


class Share(msgspec.Struct, frozen=True, gc=False, tag_field="action", tag="share"):
    item: Item


class Ask(msgspec.Struct, frozen=True, gc=False, tag_field="action", tag="ask"):
    block: int


class Pass(msgspec.Struct, frozen=True, gc=False, tag_field="action", tag="pass"):
    pass


class Unreadable(msgspec.Struct, frozen=True, gc=False, tag_field="action", tag="unreadable"):
    """A reply whose action could not be read: ``text`` is what its ``<ACTION>`` block held ("" when
    it had none)."""

    text: str


Action = Union[Move, Share, Ask, Pass, Unreadable]


# ---- Text ----


def item_text(item: Item) -> str:
    if isinstance(item, Grounding):
        return f"(block{item.block}, in, {item.bin})"
    return f"(block{item.a}, block{item.b}, same, {item.kind})"


def action_text(action: Action) -> str:
    """How the history shows an action (a pass and an unreadable reply both as ``pass the turn``)."""
    if isinstance(action, Move):
        return f"move block{action.block} from {action.source} to {action.target}"
    if isinstance(action, Share):
        return f"share {item_text(action.item)}"
    if isinstance(action, Ask):
        return f"ask block{action.block}"
    return "pass the turn"


def reply_text(action: Action) -> str:
    """How a player writes the action in its reply (what ``parse_action`` reads back)."""
    if isinstance(action, Pass):
        return "pass"
    if isinstance(action, Unreadable):
        return action.text
    return action_text(action)


class _Bad(ValueError):
    pass


def _block(name: str) -> int:
    if not name.startswith("block"):
        raise _Bad(f"{name!r} is not a block name")
    try:
        number = int(name[5:])
    except ValueError:
        raise _Bad(f"{name!r} is not a block name") from None
    if not 0 <= number <= MAX_BLOCK_NUMBER:
        raise _Bad(f"{name!r} is not a block name")
    return number


def _bin(name: str) -> str:
    if name not in BIN_OF:
        raise _Bad(f"{name!r} is not a bin name")
    return name


def _item(text: str) -> Item:
    if not (text.startswith("(") and text.endswith(")")):
        raise _Bad(f"{text!r} is not a piece of knowledge")
    parts = [p.strip() for p in text[1:-1].split(",")]
    if len(parts) == 3 and parts[1] == "in":
        return Grounding(_block(parts[0]), _bin(parts[2]))
    if len(parts) == 4 and parts[2] == "same":
        a, b = _block(parts[0]), _block(parts[1])
        if parts[3] not in DELTA:
            raise _Bad(f"{parts[3]!r} is not a relation type")
        return relation(a, b, parts[3])
    raise _Bad(f"{text!r} is not a piece of knowledge")


def read_action(text: str) -> Action:
    """The action ``text`` (an ``<ACTION>`` block's stripped content) names, or ``Unreadable``."""
    try:
        return _read(text)
    except _Bad:
        return Unreadable(text)


def why_unreadable(text: str) -> str:
    """Why ``text`` does not read as an action."""
    if not text:
        return "no action in <ACTION>...</ACTION>"
    try:
        _read(text)
    except _Bad as exc:
        return str(exc)
    return "it reads"


def _read(text: str) -> Action:
    if text == "pass":
        return Pass()
    if text.startswith("ask "):
        return Ask(_block(text[4:].strip()))
    if text.startswith("share "):
        return Share(_item(text[6:].strip()))
    if text.startswith("move "):
        parts = text.split()
        if len(parts) == 6 and parts[2] == "from" and parts[4] == "to":
            return Move(_block(parts[1]), _bin(parts[3]), _bin(parts[5]))
        raise _Bad(f"{text!r} is not 'move <block> from <bin> to <bin>'")
    raise _Bad(f"{text[:60]!r} is not an action")


def malformed(action: object) -> str | None:
    """Why an action object is not one any reply can name (out-of-range numbers or names), or None.
    Such an action is rejected without using up the step (a reply never produces one)."""
    if isinstance(action, Move):
        blocks, bins = [action.block], [action.source, action.target]
    elif isinstance(action, Share):
        item = action.item
        if isinstance(item, Grounding):
            blocks, bins = [item.block], [item.bin]
        elif isinstance(item, Relation):
            if item.kind not in DELTA:
                return f"{item.kind!r} is not a relation type"
            if item.a > item.b:
                return "a relation names its lower block first"
            blocks, bins = [item.a, item.b], []
        else:
            return "not a piece of knowledge"
    elif isinstance(action, Ask):
        blocks, bins = [action.block], []
    elif isinstance(action, (Pass, Unreadable)):
        return None
    else:
        return f"not an action of this game: {action!r}"[:120]
    for block in blocks:
        if not isinstance(block, int) or not 0 <= block <= MAX_BLOCK_NUMBER:
            return f"block {block!r} does not exist"
    for name in bins:
        if name not in BIN_OF:
            return f"{name!r} is not a bin"
    return None


__all__ = [
    "Action", "Ask", "BIN_NAMES", "Grounding", "Item", "Move", "Pass", "Relation", "Share", "Unreadable",
    "action_text", "item_text", "malformed", "read_action", "relation", "reply_text", "why_unreadable",
]
