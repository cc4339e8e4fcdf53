"""A person in a seat: the game's side of a human player (``Faces.seat``), and the stand-in every
game without one gets.

A person is shown the same view a model gets, drawn for a person, and answers with a message and
actions chosen in a form, never raw JSON or the model's reply format. The game says:

- ``rules(context)``: the task and the rules as a person reads them (shown above every turn);
- ``show(context)``: what the seat sees this turn, as sections of lines and tables (``Section``),
  drawn from ``context`` only (its view and feedback), never from another role's information;
- ``forms(context)``: the kinds of action the seat can take now, each a form of fields (``ActionForm``);
- ``action(context, kind, values)``: the action a filled-in form stands for (the game's ``Action``),
  or ``ValueError`` with the reason, which the person is shown so as to fix the form;
- ``describe(action)``: an action in one line, as the person's list of chosen actions shows it;
- ``max_actions``: how many actions one turn may carry (None: any number);
- ``messages``: whether the person writes a message (False: the game talks through its actions);
- optionally ``idle(context)`` (``IdleActions``): the actions of a turn the person let run out
  (without it, no actions).

What comes back is written as the game's reply (``Prompter.format``) and read as any reply is, so a
person's turn goes through exactly the rules a model's does. The front ends (the terminal form, the
browser page) know nothing of any game: they draw ``Section``s and ``ActionForm``s.
"""

from __future__ import annotations

import json
import typing
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

import msgspec

from .turn import ActionT, TurnContext, ViewT
from .common.replay import Board

if TYPE_CHECKING:
    from typing_extensions import TypeForm

FieldKind = Literal["choice", "number", "text", "sequence"]


class Field(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """One field of an action form.

    - "choice": one of ``choices``;
    - "number": an integer from ``minimum`` to ``maximum``;
    - "text": free text;
    - "sequence": several of ``choices`` in order (a path, say), from ``minimum`` to ``maximum`` items,
      with repeats where ``repeats``.
    """

    name: str
    label: str
    kind: FieldKind = "text"
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    repeats: bool = False
    help: str = ""


class ActionForm(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """One kind of action and the fields that make one."""

    kind: str
    label: str
    fields: tuple[Field, ...] = ()
    help: str = ""


class Section(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A titled part of what a seat sees: lines of text, a table, or both."""

    title: str
    lines: tuple[str, ...] = ()
    board: Board | None = None


Values = dict[str, Any]  # field name -> str (choice, text), int (number) or list[str] (sequence)
MadeT = TypeVar("MadeT", covariant=True)  # the actions an idle turn makes


class Seat(Protocol[ViewT, ActionT]):
    """A person's side of a game whose state shows ``ViewT`` and whose actions are ``ActionT``."""

    max_actions: int | None
    messages: bool

    def rules(self, context: TurnContext[ViewT]) -> str: ...

    def show(self, context: TurnContext[ViewT]) -> tuple[Section, ...]: ...

    def forms(self, context: TurnContext[ViewT]) -> tuple[ActionForm, ...]: ...

    def action(self, context: TurnContext[ViewT], kind: str, values: Values) -> ActionT: ...

    def describe(self, action: ActionT) -> str: ...


@runtime_checkable
class IdleActions(Protocol[ViewT, MadeT]):
    """Optional for a ``Seat``: the actions of a turn the person let run out (a pass, say)."""

    def idle(self, context: TurnContext[ViewT]) -> tuple[MadeT, ...]: ...


def check_values(form: ActionForm, values: Values) -> Values:
    """``values`` checked against ``form``'s fields and converted (a number from text, a choice
    from a unique prefix of one); ValueError naming the field and why."""
    checked: Values = {}
    for field in form.fields:
        if field.name not in values or values[field.name] in (None, ""):
            raise ValueError(f"{field.label}: give a value")
        checked[field.name] = _checked(field, values[field.name])
    return checked


def pick(field: Field, text: str) -> str:
    """The one choice ``text`` names: the choice itself, its 1-based number, or a unique prefix."""
    text = str(text).strip()
    if text in field.choices:
        return text
    if text.isdigit() and 1 <= int(text) <= len(field.choices):
        return field.choices[int(text) - 1]
    folded = [c for c in field.choices if c.lower() == text.lower()]
    if len(folded) == 1:
        return folded[0]
    starts = [c for c in field.choices if c.lower().startswith(text.lower())] if text else []
    if len(starts) == 1:
        return starts[0]
    shown = ", ".join(field.choices)
    if len(starts) > 1:
        raise ValueError(f"{field.label}: {text!r} could be {', '.join(starts)}")
    raise ValueError(f"{field.label}: {text!r} is not one of {shown}")


def _checked(field: Field, value: Any) -> Any:
    if field.kind == "choice":
        return pick(field, value)
    if field.kind == "number":
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ValueError(f"{field.label}: {value!r} is not a whole number") from None
        if field.minimum is not None and number < field.minimum or field.maximum is not None and number > field.maximum:
            raise ValueError(f"{field.label}: give a number from {field.minimum} to {field.maximum}")
        return number
    if field.kind == "sequence":
        items = value.replace(",", " ").split() if isinstance(value, str) else list(value)
        chosen = [pick(field, item) for item in items]
        if field.minimum is not None and len(chosen) < field.minimum or field.maximum is not None and len(chosen) > field.maximum:
            raise ValueError(f"{field.label}: give {field.minimum} to {field.maximum} items, got {len(chosen)}")
        if not field.repeats and len(set(chosen)) < len(chosen):
            raise ValueError(f"{field.label}: an item is named twice")
        return chosen
    return str(value)


def form_named(forms: tuple[ActionForm, ...], kind: str) -> ActionForm:
    for form in forms:
        if form.kind == kind:
            return form
    raise ValueError(f"no action {kind!r} now; the actions are {', '.join(f.kind for f in forms) or 'none'}")


# ---- The stand-in seat: any game, from its prompt and its Action type ----


class Renders(Protocol[ViewT]):
    """A prompter's ``render`` (``puzzles.base.Prompter``), all a stand-in seat shows."""

    def render(self, context: TurnContext[ViewT]) -> tuple[str, str]: ...


class PromptSeat(Generic[ViewT, ActionT]):
    """A seat for a game that has none of its own: the model's prompt as the person's view, and one
    form per struct of the game's ``Action`` type, a field per struct field (choices where the type
    is a ``Literal``). Plain, but it lets a person play any game."""

    max_actions: int | None = None
    messages = True

    def __init__(self, prompter: Renders[ViewT], action_type: TypeForm[ActionT]) -> None:
        self.prompter = prompter
        self.structs = {_tag(t): t for t in _structs(action_type)}

    def rules(self, context: TurnContext[ViewT]) -> str:
        return self.prompter.render(context)[0]

    def show(self, context: TurnContext[ViewT]) -> tuple[Section, ...]:
        return (Section("What you see", tuple(self.prompter.render(context)[1].splitlines())),)

    def forms(self, context: TurnContext[ViewT]) -> tuple[ActionForm, ...]:
        return tuple(
            ActionForm(kind, kind.replace("_", " "), tuple(_field(f) for f in msgspec.structs.fields(t)))
            for kind, t in self.structs.items()
        )

    def action(self, context: TurnContext[ViewT], kind: str, values: Values) -> ActionT:
        form = form_named(self.forms(context), kind)
        checked = check_values(form, values)
        struct = self.structs[kind]
        try:
            return msgspec.convert({k: _decoded(v) for k, v in checked.items()}, struct, strict=False)
        except msgspec.ValidationError as exc:
            raise ValueError(str(exc)) from None

    def describe(self, action: ActionT) -> str:
        return f"{_tag(type(action))} {json.dumps(msgspec.to_builtins(action), ensure_ascii=False)}"


def _structs(action_type: TypeForm[Any]) -> list[type]:
    members = typing.get_args(action_type) if typing.get_origin(action_type) is typing.Union else (action_type,)
    return [t for t in members if isinstance(t, type)]


def _tag(struct: type) -> str:
    tag = getattr(getattr(struct, "__struct_config__", None), "tag", None)
    return str(tag) if tag is not None else struct.__name__.lower()


def _field(field: msgspec.structs.FieldInfo) -> Field:
    label = field.name.replace("_", " ")
    if typing.get_origin(field.type) is typing.Literal:
        return Field(field.name, label, "choice", tuple(str(v) for v in typing.get_args(field.type)))
    if field.type is int:
        return Field(field.name, label, "number")
    if field.type is str:
        return Field(field.name, label, "text")
    return Field(field.name, label, "text", help="as JSON")


def _decoded(value: Any) -> Any:
    """A text field meant as JSON (a nested struct) read as JSON; anything else as it is."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def seat_of(game: Any) -> Seat[Any, Any]:
    """The game's own seat, or the stand-in (``game``: a ``puzzles.base.Game``, which imports this module)."""
    seat = game.faces.seat
    return seat if seat is not None else PromptSeat(game.faces.prompter, game.rules.Action)
