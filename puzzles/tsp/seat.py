"""Traveling Adventurers for a person in a seat (``puzzles.seat``): the story in plain words, the
house and the person's own coins as a table, the round trip they submitted, and one action: submit
the final round trip.

The agents' other actions (suggest, agree, reject, visit, ask, inform, solve) are bookkeeping inside
an agent, notes the game keeps and scores nothing on; a person keeps their own notes, so the seat
offers only what a person does in the game: talk, and submit. The form writes the very ``TspAction``
text a model writes (``end(["L", ..., "L"])``), so the game reads and rules a person's turn as any
other; the trip is chosen room by room between leaving the start room and coming back to it, so
every trip a person submits is a round trip. Everything shown comes from the seat's own view: the
partner's coins are never in it.
"""
from __future__ import annotations

import json

from ..turn import TurnContext
from ..common.replay import Board, Span
from ..seat import ActionForm, Field, Section, Values, check_values, form_named
from .board import DISPLAY_ORDER, ROOM_NAMES
from .prompt import WORLDS
from .rules import TspAction, TspView, read_path, read_room

ARROW = " → "


def _room(room: str) -> str:
    return f"{room} ({ROOM_NAMES.get(room, room)})"


class TspSeat:
    """The seat of either player (light or ghost)."""

    max_actions: int | None = 1
    messages = True

    def rules(self, context: TurnContext[TspView]) -> str:
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
            "To finish, each of you submits the final round trip; the game is over when both have submitted, and "
            "it is completed only if you both submitted the identical trip, rooms in the same order. You have "
            f"{context.max_turns} turns each; you may submit again to change your trip until your partner has "
            "submitted too."
        )

    def show(self, context: TurnContext[TspView]) -> tuple[Section, ...]:
        view: TspView = context.view
        mine, _ = WORLDS[view.role]
        rooms = tuple(view.rooms)
        listed = tuple(f"{_room(r)}" for r in DISPLAY_ORDER if r in rooms)
        coins = {frozenset((a, b)): w for a, b, w in view.weights}
        rows = tuple(
            (Span(r, "strong"), *(Span("" if r == c else str(coins[frozenset((r, c))])) for c in rooms)) for r in rooms
        )
        return (
            Section("The house", (f"You start in {_room(rooms[0])} and must come back to it.", "Rooms:", *listed)),
            Section(
                f"Your {mine} coins",
                (f"Your coins on the hallway between two rooms (the same either way); {len(view.weights)} hallways.",),
                Board(("room", *rooms), rows),
            ),
            Section("Your submitted round trip", _submitted(view, coins)),
        )

    def forms(self, context: TurnContext[TspView]) -> tuple[ActionForm, ...]:
        view: TspView = context.view
        rooms = tuple(view.rooms)
        start = rooms[0]
        again = " again" if view.submitted is not None else ""
        return (
            ActionForm(
                "end", f"Submit{again} the final round trip",
                (Field("rooms", "Rooms after " + start, "sequence", rooms[1:], minimum=len(rooms) - 1,
                       maximum=len(rooms) - 1, help=f"every room but {start} once, in order; the trip starts and ends in {start}"),),
                help="the game is over once your partner submits too; submit the identical trip your partner does",
            ),
        )

    def action(self, context: TurnContext[TspView], kind: str, values: Values) -> TspAction:
        view: TspView = context.view
        checked = check_values(form_named(self.forms(context), kind), values)
        start = view.rooms[0]
        return TspAction("end", json.dumps([start, *checked["rooms"], start]))

    def describe(self, action: TspAction) -> str:
        path = read_path(action.argument)
        if action.name == "visit":
            return f"visit {read_room(action.argument) or action.argument}"
        if action.name == "end" and path is not None:
            return f"submit {ARROW.join(path)}"
        if path is not None:
            return f"{action.name} {ARROW.join(path)}"
        try:
            text = json.loads(action.argument)
        except ValueError:
            text = action.argument
        return f"{action.name} {json.dumps(text, ensure_ascii=False) if isinstance(text, str) else action.argument}"


def _submitted(view: TspView, coins: dict[frozenset, int]) -> tuple[str, ...]:
    """The trip the person submitted, and their own coins on it; or that there is none yet."""
    path = view.submitted
    if path is None:
        return ("Not submitted yet.",)
    pairs = [frozenset(pair) for pair in zip(path, path[1:])]
    lines = [ARROW.join(path)]
    if all(pair in coins for pair in pairs):
        lines.append(f"Your {WORLDS[view.role][0]} coins on it: {sum(coins[pair] for pair in pairs)} (your partner's coins add to the score).")
    lines.append("You may submit again to change it until your partner has submitted too.")
    return tuple(lines)


SEAT = TspSeat()
