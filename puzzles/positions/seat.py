"""A person's seat in a position game (AsymPuzl, the chain puzzle): what both games show a person
and the one form they act through (``puzzles.seat``).

A person sees their clues (the game says how they read), their working hypothesis as a table with
one row per position, and the feedback as the game's feedback mode gives it; the turn and the turn
limit, the conversation and notices are drawn by the front end. They act with one form, "replace":
a position and a value for every attribute (shape, color, ...). Each attribute's choices are the
values this person has been shown (their clues, their answer, the messages they were sent), sorted;
where they have been shown none yet, the whole vocabulary. A list drawn from the puzzle would tell
the person which colors are in play, which one role's clues alone may say: this one tells nothing
they have not read. Everything shown comes from the
turn's context (its view, feedback and conversation), never from the game's state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar

from ..turn import ActionT, TurnContext
from ..seat import ActionForm, Field, Section, Values, check_values, form_named
from .rules import Feedback, render_feedback
from ..common.replay import Board, Mark, Span

REPLACE = "replace"
UNKNOWN = "?"


def person_name(role: str) -> str:
    """How a person's screen names a role: by name, as the conversation does."""
    return role.capitalize()


def marks(feedback: Any, size: int) -> list[Mark]:
    """Per position, what the feedback says of it: "right", "wrong", or "" where it says nothing.
    Only the role's own status marks positions: "solved" marks all right, a list of wrong positions
    marks those wrong and the rest right."""
    own = feedback.own if isinstance(feedback, Feedback) else None
    if own is None:
        return [""] * size
    if own.solved:
        return ["right"] * size
    if own.wrong is None:
        return [""] * size
    return ["wrong" if p in own.wrong else "right" for p in range(1, size + 1)]


ItemT = TypeVar("ItemT")  # one position's value (a piece, a chain item)
ItemT_co = TypeVar("ItemT_co", covariant=True)


class PositionView(Protocol[ItemT_co]):
    """What every position game's view has: the size, the role's clues and its hypothesis."""

    @property
    def size(self) -> int: ...
    @property
    def clues(self) -> tuple[ItemT_co, ...]: ...
    @property
    def hypothesis(self) -> tuple[ItemT_co, ...]: ...


PositionViewT = TypeVar("PositionViewT", bound=PositionView[Any])


class PositionSeat(Generic[PositionViewT, ItemT, ActionT]):
    """The seat both position games share, for a view ``PositionViewT`` of items ``ItemT`` and
    actions ``ActionT``. A game says how its view reads through the methods below; the rest (the
    hypothesis table, the feedback, the replace form) is the same for both."""

    max_actions: int | None = None
    messages = True
    vocabulary: Mapping[str, Sequence[str]] = {}  # attribute -> every word it can take

    # ---- What a game says ----

    def rules(self, context: TurnContext[PositionViewT]) -> str:
        raise NotImplementedError

    def attributes(self, view: PositionViewT) -> tuple[str, ...]:
        """The attributes of a position, in order (shape, color, ...)."""
        raise NotImplementedError

    def values(self, item: ItemT) -> tuple[str | None, ...]:
        """One position of a hypothesis as one value per attribute (None: unknown)."""
        raise NotImplementedError

    def clues(self, context: TurnContext[PositionViewT]) -> tuple[Section, ...]:
        """The role's clues as sections of lines."""
        raise NotImplementedError

    def make(self, context: TurnContext[PositionViewT], position: int, values: tuple[str, ...]) -> ActionT:
        """The game's action putting ``values`` at ``position``."""
        raise NotImplementedError

    def unpack(self, action: ActionT) -> tuple[int, dict[str, str]]:
        """An action as its position and attribute -> value."""
        raise NotImplementedError

    # ---- The same for both ----

    def show(self, context: TurnContext[PositionViewT]) -> tuple[Section, ...]:
        if context.reinjected:
            sections = list(self.clues(context))
        else:  # a seat whose memory is its notes sees them in place of its clues, as a model does
            sections = [Section("Your notes from your last turn", tuple((context.scratchpad or "(none)").splitlines()))]
        sections.append(self.hypothesis(context))
        if context.feedback is not None:
            said = render_feedback(context.feedback, person_name) if isinstance(context.feedback, Feedback) else ""
            sections.append(Section("Feedback", tuple(said.splitlines()) or ("No feedback in this game.",)))
        return tuple(sections)

    def hypothesis(self, context: TurnContext[PositionViewT]) -> Section:
        """The working hypothesis, one row per position; a "check" column where the feedback says
        which positions are right."""
        view = context.view
        attributes = self.attributes(view)
        checks = marks(context.feedback, len(view.hypothesis))
        checked = any(checks)
        rows = []
        for position, (item, mark) in enumerate(zip(view.hypothesis, checks), 1):
            cells = [Span(str(position))]
            cells += [Span(value if value is not None else UNKNOWN, mark) for value in self.values(item)]
            if checked:
                cells.append(Span(mark, mark))
            rows.append(tuple(cells))
        columns = ("position", *attributes) + (("check",) if checked else ())
        lines = (
            "Your answer so far, position by position (? where you do not know the value yet).",
            "Change a position with the replace form; nobody else sees your answer.",
        )
        return Section("Your hypothesis", lines, Board(columns, tuple(rows)))

    def seen(self, context: TurnContext[PositionViewT], name: str) -> tuple[str, ...]:
        """The values of attribute ``name`` this person has been shown: in their clues, their answer
        and the messages of the conversation (whole words), sorted."""
        view = context.view
        at = self.attributes(view).index(name)
        shown = {self.values(item)[at] for item in (*view.clues, *view.hypothesis)} - {None}
        said = " ".join(line.text.lower() for line in context.conversation)
        shown |= {word for word in self.vocabulary[name] if re.search(rf"\b{re.escape(word.lower())}\b", said)}
        return tuple(sorted(str(value) for value in shown))

    def forms(self, context: TurnContext[PositionViewT]) -> tuple[ActionForm, ...]:
        return (self.replace_form(context),)

    def replace_form(self, context: TurnContext[PositionViewT]) -> ActionForm:
        """The replace form: a position, and each attribute's values this person has been shown."""
        view = context.view
        fields = [Field("position", "position", "number", minimum=1, maximum=view.size)]
        for name in self.attributes(view):
            seen = self.seen(context, name)
            if seen:
                fields.append(Field(name, name, "choice", seen,
                                    help=f"the {name}s your clues, your answer and the messages name"))
            else:
                fields.append(Field(name, name, "choice", tuple(sorted(self.vocabulary[name])),
                                    help=f"every {name} the game has; clues and messages say which are in this puzzle"))
        return ActionForm(
            REPLACE, "Replace a position", tuple(fields),
            help="Put one value of every attribute at a position of your answer.",
        )

    def action(self, context: TurnContext[PositionViewT], kind: str, values: Values) -> ActionT:
        checked = check_values(form_named(self.forms(context), kind), values)
        chosen = tuple(checked[name] for name in self.attributes(context.view))
        return self.make(context, checked["position"], chosen)

    def describe(self, action: ActionT) -> str:
        position, values = self.unpack(action)
        return f"position {position}: {self.words(values)}"

    def words(self, values: dict[str, str]) -> str:
        """A position's values in words: "shape square, color red"."""
        return ", ".join(f"{name} {value}" for name, value in values.items())


def partner_sentences(context: TurnContext, knows: Mapping[str, str]) -> str:
    """What each partner knows, one sentence each, in roster order."""
    return " ".join(f"{person_name(p)} {knows[p]}." for p in context.partners if p in knows)


END = (
    "You each keep your own answer, position by position, and only you can change yours. Partners see "
    "only your messages, never your clues or your answer, so write into your message what they need. "
    "The game is won when every player's answer is right, and lost at the turn limit."
)
