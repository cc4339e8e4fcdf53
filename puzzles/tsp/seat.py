"""Traveling Adventurers for a person in a seat (``puzzles.seat``): the story in plain words, the
house and the person's own coins as a table, and a form per action the agent variant has.

A person acts as an agent does: the forms write the very ``TspAction`` text a model writes
(``suggest(["L", "E"])``, ``visit("E")``, ``end(["L", ..., "L"])``), so the game reads and rules a
person's turn as any other. Paths are chosen room by room; the final path is the rooms between
leaving the living room and coming back to it, so every path a person submits is a round trip.
Everything shown comes from the seat's own view: the partner's coins are never in it.
"""

from __future__ import annotations

import json

from ..turn import TurnContext
from ..common.replay import Board, Span
from ..seat import ActionForm, Field, Section, Values, check_values, form_named
from .board import DISPLAY_ORDER, ROOM_NAMES
from .prompt import DRAFT_VARIANTS, WORLDS
from .rules import STATE_VARIANTS, TspAction, TspView, read_path, read_room

ARROW = " → "
_FLAGS = ("[thought", "[action", "[message")  # reply flags: text holding one would split the reply


def _room(room: str) -> str:
    return f"{room} ({ROOM_NAMES.get(room, room)})"


def _path_field(view: TspView, name: str = "path", label: str = "Path") -> Field:
    """A path of 2 rooms (one hallway) up to a whole round trip (every room, then the start again)."""
    return Field(
        name, label, "sequence", tuple(view.rooms), minimum=2, maximum=len(view.rooms) + 1, repeats=True,
        help="rooms in the order walked, e.g. L E for the hallway from L to E; a round trip ends where it began",
    )


class TspSeat:
    """The seat of either player (light or ghost)."""

    max_actions: int | None = None
    messages = True

    def rules(self, context: TurnContext) -> str:
        view: TspView = context.view
        mine, other = WORLDS[view.role]
        start = view.rooms[0]
        n = len(view.rooms)
        return (
            f"You and a partner are trapped in the same house, you in the {mine} world and your partner in the "
            f"{other} world. The house has {n} rooms. Every two rooms are joined by a hallway with coins in it. "
            f"Each hallway holds your own {mine} coins and, separately, your partner's {other} coins; you see only "
            "your own, your partner sees only theirs, and you can talk only by messages.\n"
            f"Together you must pick one round trip: start in {_room(start)}, visit every other room exactly once, "
            f"and come back to {start}. You collect the coins of every hallway you walk together, and your score "
            "is both players' coins on the trip added up: find the round trip with the most coins for both of you, "
            "so tell each other your coins and agree.\n"
            "To finish, each of you submits the final round trip (the action 'end'); the game is over when both "
            "have submitted, and it is completed only if you both submitted the identical trip, rooms in the same "
            f"order. You have {context.max_turns} turns each; you may submit again to change your path until your "
            "partner has submitted too. The other actions are notes for yourself (what you suggested, agreed, "
            + ("visited, " if view.variant in STATE_VARIANTS else "")
            + "asked...): only your messages reach your partner."
        )

    def show(self, context: TurnContext) -> tuple[Section, ...]:
        view: TspView = context.view
        mine, _ = WORLDS[view.role]
        rooms = tuple(view.rooms)
        listed = tuple(f"{_room(r)}" for r in DISPLAY_ORDER if r in rooms)
        coins = {frozenset((a, b)): w for a, b, w in view.weights}
        rows = tuple(
            (Span(r, "strong"), *(Span("" if r == c else str(coins[frozenset((r, c))])) for c in rooms)) for r in rooms
        )
        sections = [
            Section("The house", (f"You start in {_room(rooms[0])} and must come back to it.", "Rooms:", *listed)),
            Section(
                f"Your {mine} coins",
                (f"Your coins on the hallway between two rooms (the same either way); {len(view.weights)} hallways.",),
                Board(("room", *rooms), rows),
            ),
        ]
        done: list[str] = []
        if view.variant in STATE_VARIANTS:
            done.append("Visited so far: " + ARROW.join(view.visited))
            done.append("Still to visit: " + (" ".join(view.remaining) or "none"))
        if view.variant in DRAFT_VARIANTS:
            done += [f"Turn {i}: {line}" for i, line in enumerate(view.history, 1)] or ["No actions yet."]
        if done:
            sections.append(Section("What you have done", tuple(done)))
        return tuple(sections)

    def forms(self, context: TurnContext) -> tuple[ActionForm, ...]:
        view: TspView = context.view
        rooms = tuple(view.rooms)
        start = rooms[0]
        forms = [
            ActionForm(
                "end", "Submit the final round trip",
                (Field("rooms", "Rooms after " + start, "sequence", rooms[1:], minimum=len(rooms) - 1,
                       maximum=len(rooms) - 1, help=f"every room but {start} once, in order; the trip starts and ends in {start}"),),
                help="ends the game for you once your partner submits too; submit the identical trip your partner does",
            ),
            ActionForm("suggest", "Suggest a path", (_path_field(view),), help="a note that you proposed this path"),
            ActionForm("agree-inner", "Agree with a path", (_path_field(view),), help="a note that you agree with this path"),
            ActionForm("agree-outer", "Partner agreed with a path", (_path_field(view),),
                       help="a note that your partner agreed with this path"),
            ActionForm("reject", "Reject a path", (_path_field(view),), help="a note that this path was rejected"),
        ]
        if view.variant in STATE_VARIANTS:
            # The start room last: going back to it closes the trip.
            left = [r for r in view.remaining if r != start] + [r for r in view.remaining if r == start]
            if left:
                forms.append(ActionForm(
                    "visit", "Go to a room", (Field("room", "Room", "choice", tuple(left)),),
                    help=f"both of you agreed on the next room: it is added to your visited rooms ({start} last, to go back)",
                ))
        forms += [
            ActionForm("ask", "Note a question", (Field("text", "Question", "text"),),
                       help="a note of what you asked; write the question itself in your message"),
            ActionForm("inform", "Note what you told", (Field("text", "Statement", "text"),),
                       help="a note of what you told; write it in your message too"),
        ]
        if view.variant in DRAFT_VARIANTS:
            forms.append(ActionForm("solve", "Found a whole trip", (_path_field(view),),
                                    help="a note that you worked out a complete round trip"))
        return tuple(forms)

    def action(self, context: TurnContext, kind: str, values: Values) -> TspAction:
        view: TspView = context.view
        form = form_named(self.forms(context), kind)
        checked = check_values(form, values)
        start = view.rooms[0]
        if kind == "end":
            return TspAction("end", json.dumps([start, *checked["rooms"], start]))
        if kind == "visit":
            return TspAction("visit", json.dumps(checked["room"]))
        if kind in ("ask", "inform"):
            text = " ".join(checked["text"].split())
            if not text:
                raise ValueError(f"{form.fields[0].label}: give a value")
            if any(flag in text.lower() for flag in _FLAGS):
                raise ValueError(f"{form.fields[0].label}: square-bracketed words such as [Message] cannot be used")
            return TspAction(kind, json.dumps(text, ensure_ascii=False))
        path = checked["path"]
        _check_path(path)
        return TspAction(kind, json.dumps(path))

    def describe(self, action: TspAction) -> str:
        path = read_path(action.argument)
        if action.name == "visit":
            return f"visit {read_room(action.argument) or action.argument}"
        if path is not None:
            return f"{action.name} {ARROW.join(path)}"
        try:
            text = json.loads(action.argument)
        except ValueError:
            text = action.argument
        return f"{action.name} {json.dumps(text, ensure_ascii=False) if isinstance(text, str) else action.argument}"


def _check_path(path: list[str]) -> None:
    """ValueError unless ``path`` walks hallways (no room twice in a row) and enters no room twice
    (only a round trip's last room may be its first)."""
    for a, b in zip(path, path[1:]):
        if a == b:
            raise ValueError(f"Path: {a} twice in a row is not a hallway")
    inner = path[:-1] if len(path) > 2 and path[-1] == path[0] else path
    twice = sorted({r for r in inner if inner.count(r) > 1})
    if twice:
        raise ValueError(f"Path: room {twice[0]} is entered twice (only a round trip may end where it began)")


SEAT = TspSeat()
