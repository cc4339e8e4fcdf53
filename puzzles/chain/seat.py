"""The chain puzzle for a person in a seat (``puzzles.seat``): the role's link of the chain as it
reads, the rest as every position game shows it (``puzzles.positions.seat``)."""

from __future__ import annotations

from ..turn import TurnContext
from ..positions.seat import END, PositionSeat, person_name
from ..seat import Section
from .rules import CHAIN_ROLES, VOCABULARIES, ChainReplace, ChainView, Item


def _knows(index: int, attributes: tuple[str, ...]) -> str:
    """What the role at ``index`` of the roster knows."""
    if index == 0:
        return f"the correct {attributes[0]} at each position"
    return f"which {attributes[index]} goes with each {attributes[index - 1]}, in random order"


def _listed(attributes: tuple[str, ...]) -> str:
    """"a shape and a color", "a shape, a color and a pattern"."""
    named = [f"a {name}" for name in attributes]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


class ChainSeat(PositionSeat[ChainView, Item, ChainReplace]):
    """A seat of the chain puzzle: the first role's values in order, every other role's pairs."""

    vocabulary = VOCABULARIES

    def rules(self, context: TurnContext[ChainView]) -> str:
        view: ChainView = context.view
        attributes = view.attributes
        puzzle = (
            f"A puzzle of {view.size} positions: each position has {_listed(attributes)}, and every value "
            "is used once. Each player holds one link of the chain."
        )
        mine = f"You know {_knows(CHAIN_ROLES.index(context.role), attributes)}."
        partners = " ".join(
            f"{person_name(p)} knows {_knows(CHAIN_ROLES.index(p), attributes)}." for p in context.partners
        )
        return f"{puzzle} {mine} {partners} {END}"

    def attributes(self, view: ChainView) -> tuple[str, ...]:
        return view.attributes

    def values(self, item: Item) -> tuple[str | None, ...]:
        return item

    def clues(self, context: TurnContext[ChainView]) -> tuple[Section, ...]:
        view: ChainView = context.view
        attributes = view.attributes
        index = CHAIN_ROLES.index(context.role)
        if index == 0:
            lines = [f"The correct {attributes[0]} at each position; the rest is unknown."]
            lines += [f"Position {p}: {attributes[0]} {item[0]}" for p, item in enumerate(view.clues, 1)]
            return (Section(f"Your clues: the {attributes[0]}s in order", tuple(lines)),)
        before, after = attributes[index - 1], attributes[index]
        lines = [f"Which {after} goes with each {before}, in random order; their positions are unknown."]
        lines += [f"The {before} {item[index - 1]} goes with the {after} {item[index]}." for item in view.clues]
        return (Section(f"Your clues: {before} to {after}", tuple(lines)),)

    def make(self, context: TurnContext[ChainView], position: int, values: tuple[str, ...]) -> ChainReplace:
        return ChainReplace(position, values)

    def unpack(self, action: ChainReplace) -> tuple[int, dict[str, str]]:
        return action.position, action.as_by()


SEAT = ChainSeat()
