"""AsymPuzl for a person in a seat (``puzzles.seat``): the clues as the role reads them, the rest as
every position game shows it (``puzzles.positions.seat``)."""

from __future__ import annotations


from ..turn import TurnContext
from ..positions.seat import END, PositionSeat, partner_sentences
from ..positions.vocab import COLORS, SHAPES
from ..seat import Section
from .rules import ALICE, BOB, SOLO, AsymView, Piece, Replace

KNOWS = {
    ALICE: "knows the correct shape at each position, but not the colors",
    BOB: "knows the correct shape-color pairs, but not their positions",
}


def _extra(view: AsymView, clues: int) -> str:
    """A line saying how many of ``clues`` pieces are not part of the puzzle, or "" if none are."""
    extra = clues - view.size
    return f"{extra} of these {clues} are not part of the puzzle." if extra > 0 else ""


def _shapes(view: AsymView, pieces: tuple[Piece, ...]) -> Section:
    lines = ["The correct shape at each position; the colors are unknown."]
    lines += [extra] if (extra := _extra(view, len(pieces))) else []
    lines += [f"Position {p}: {piece.shape} (color unknown)" for p, piece in enumerate(pieces, 1)]
    return Section("Your clues: the shapes in order", tuple(lines))


def _pairs(view: AsymView, pieces: tuple[Piece, ...]) -> Section:
    lines = ["The correct shape-color pairs, in random order; their positions are unknown."]
    lines += [extra] if (extra := _extra(view, len(pieces))) else []
    lines += [f"The {piece.shape} is {piece.color}." for piece in pieces]
    return Section("Your clues: the pairs", tuple(lines))


class AsymPuzlSeat(PositionSeat[AsymView, Piece, Replace]):
    """A seat of AsymPuzl: Alice's shapes in order, Bob's pairs, or both for the single-agent check."""

    vocabulary = {"shape": SHAPES, "color": COLORS}

    def rules(self, context: TurnContext[AsymView]) -> str:
        size = context.view.size
        puzzle = (
            f"A puzzle of {size} positions: each position holds one shape in one color, and every shape "
            "and every color is used once."
        )
        if context.role == SOLO:
            return (
                f"{puzzle} You see the correct shape at each position, and the correct shape-color pairs "
                "in random order. Put the right shape and color at every position with the replace form. "
                "The game is won when your answer is right, and lost at the turn limit."
            )
        return f"{puzzle} {_you(context.role)}. {partner_sentences(context, KNOWS)} {END}"

    def attributes(self, view: AsymView) -> tuple[str, ...]:
        return ("shape", "color")

    def values(self, item: Piece) -> tuple[str | None, ...]:
        return (item.shape, item.color)

    def clues(self, context: TurnContext[AsymView]) -> tuple[Section, ...]:
        view: AsymView = context.view
        if context.role == SOLO:
            return (_shapes(view, tuple(p for p in view.clues if p.color is None)),
                    _pairs(view, tuple(p for p in view.clues if p.color is not None)))
        return (_shapes(view, view.clues) if context.role == ALICE else _pairs(view, view.clues),)

    def make(self, context: TurnContext[AsymView], position: int, values: tuple[str, ...]) -> Replace:
        return Replace(position, *values)

    def unpack(self, action: Replace) -> tuple[int, dict[str, str]]:
        return action.position, {"shape": action.shape, "color": action.color}

    def words(self, values: dict[str, str]) -> str:
        return f"{values['color']} {values['shape']}"


def _you(role: str) -> str:
    """What the role itself knows, as KNOWS says it of a partner."""
    return "You " + KNOWS[role].replace("knows", "know", 1)


SEAT = AsymPuzlSeat()
