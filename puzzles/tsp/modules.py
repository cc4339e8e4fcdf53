"""The model agents' own modules (spec ``tsp.md`` §2.6, §2.7): grounding, a second model call per
partner message that writes down the partner's coins it mentions, and for the problem-solving
agent the intermediate best path ([IBP]) from the exact solver over everything the agent knows.

They belong to the agent, not the game: the game never sees their output, and a scripted player
keeps its own notes instead. By default a hallway is matched in either direction and a repeated
report replaces the earlier one; ``reference_grounding`` keeps the reference's behaviour (a report
in the other direction than the board stores is lost, a repeat is added on top, and the list shown
to the agent keeps every report).
"""

from __future__ import annotations

import ast
import json
import re

import msgspec

from ..base import ModelCall
from ..turn import TurnContext
from .board import ROOM_NAMES, canonical_edges
from .prompt import START, WRONG_FORMAT, observation
from .rules import TspView
from .solver import best_with_prefix

_NOT_LITERAL = re.compile(r"[^a-zA-Z0-9\s\[\]\(\)\"',]")
_NWS = re.compile(r"\[NWS\]\s*:?(.*)", re.IGNORECASE | re.DOTALL)
WORLD_NAMES = {"light": "LIGHT", "ghost": "GHOST"}


class TspNotes(msgspec.Struct, frozen=True, gc=False):
    """What an agent's modules worked out: the partner's coins it knows of, and its best path."""

    partner: tuple[tuple[str, str, int], ...] = ()
    ibp: tuple[str, ...] = ()


class GroundingRequest(msgspec.Struct, frozen=True, gc=False):
    """A grounding call as the model sees it (read back by the local model server)."""

    message: str
    known: tuple[tuple[str, str, int], ...]
    location: str | None
    world: str


def grounding_system(rooms: tuple[str, ...]) -> str:
    listed = ", ".join(f"{ROOM_NAMES[r]} ({r})" for r in rooms)
    return (
        "You are watching two players play a game in which each is locked in a different dimension of the same "
        "house, with coins in the hallways between rooms; every two rooms are joined by a hallway. Your task is to "
        "write down the coins of the hallways in one player's world that their message tells.\n"
        "The input has these fields:\n"
        "[Message] - the message the player sent\n"
        "[OWS] - the old world state: the coins already known, as a Python list of [room, room, coins]\n"
        "[Loc] - the player's last known room, in case the message does not name it\n"
        "[World] - the player's world: LIGHT or GHOST\n"
        "Your output has these fields:\n"
        "[Thought] - your reasoning about what the message tells beyond [OWS]\n"
        "[NWS] - the new world state: only what the message adds, as a Python list of [room, room, coins], or [] "
        "if it adds nothing.\n"
        "Hallways go both ways: x coins between A and B are x coins between B and A. Make sure to ONLY include "
        "the player's own coin amounts (light OR ghost), NOT totals or sums of both players' coins.\n\n"
        "Example:\n"
        "[Message]: Hello! From the living room I get 6 coins to the bathroom and 1 to the empty room. And you?\n"
        '[OWS]: []\n[Loc]: "L"\n[World]: "LIGHT"\n'
        "[Thought]: The player is in the living room and tells two hallways from it.\n"
        '[NWS]: [["L", "B", 6], ["L", "E", 1]]\n\n'
        "Example:\n"
        "[Message]: I get 3 between K and E, you get 5 there, so 8 in all. Shall we go?\n"
        '[OWS]: [["L", "B", 6], ["L", "E", 1]]\n[Loc]: "K"\n[World]: "GHOST"\n'
        "[Thought]: The player's own amount is 3; 5 is the other player's and 8 the sum.\n"
        '[NWS]: [["K", "E", 3]]\n\n'
        "Example:\n"
        "[Message]: Sounds good, let's go there.\n"
        '[OWS]: [["L", "B", 6], ["L", "E", 1], ["K", "E", 3]]\n[Loc]: "E"\n[World]: "GHOST"\n'
        "[Thought]: The message tells no coins.\n[NWS]: []\n\n"
        f"In this game there are {len(rooms)} rooms: {listed}."
    )


def grounding_user(message: str, known, location: str | None, world: str) -> str:
    lines = [f"[Message]: {message}", f"[OWS]: {json.dumps([list(e) for e in known])}"]
    if location is not None:
        lines.append(f"[Loc]: {json.dumps(location)}")
    lines.append(f"[World]: {json.dumps(world)}")
    return "\n".join(lines)


def read_new_state(text: str, rooms: tuple[str, ...]) -> list[tuple[str, str, int]]:
    """The hallways a grounding reply's [NWS] lists; [] for anything that cannot be read (the
    reference swallows such errors too)."""
    found = _NWS.search(text)
    if found is None:
        return []
    body = found.group(1)
    end = body.find("]]")
    body = body[: end + 2] if end >= 0 else body.split("\n", 1)[0]
    try:
        value = ast.literal_eval(_NOT_LITERAL.sub("", body).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return []
    edges = []
    for item in value if isinstance(value, (list, tuple)) else ():
        if (
            isinstance(item, (list, tuple)) and len(item) == 3 and item[0] in rooms and item[1] in rooms
            and item[0] != item[1] and isinstance(item[2], int) and not isinstance(item[2], bool)
        ):
            edges.append((item[0], item[1], item[2]))
    return edges


def merge(known: list[tuple[str, str, int]], new: list[tuple[str, str, int]], reference: bool) -> list[tuple[str, str, int]]:
    """The partner's known hallways after a report: appended (reference) or replacing earlier
    reports of the same hallway in either direction."""
    if reference:
        return known + new
    merged = {frozenset(edge[:2]): edge for edge in known}
    for edge in new:
        merged[frozenset(edge[:2])] = edge
    return list(merged.values())


def total_weigher(view: TspView, known: list[tuple[str, str, int]], reference: bool):
    """Own coins plus the partner's known coins (0 where unknown), as the IBP solver reads them."""
    own = {frozenset(edge[:2]): edge[2] for edge in view.weights}
    partner: dict = {}
    stored = set(canonical_edges(view.rooms)) | {(a, b) for a, b, _ in view.weights}
    for a, b, w in known:
        if reference:
            if (a, b) in stored:  # a report in the other direction is lost
                partner[frozenset((a, b))] = partner.get(frozenset((a, b)), 0) + w
        else:
            partner[frozenset((a, b))] = w
    return lambda a, b: own[frozenset((a, b))] + partner.get(frozenset((a, b)), 0)


async def prepare(context: TurnContext, notes: dict, ask: ModelCall) -> TurnContext:
    """Run the variant's modules before the turn: grounding on the partner's new message, then the IBP."""
    view: TspView = context.view
    reference = view.reference_grounding
    if view.variant == "baseline":
        return context
    known: list = notes.setdefault("partner", [])
    message = observation(context)
    if message not in (START, WRONG_FORMAT):
        partner_world = WORLD_NAMES["ghost" if view.role == "light" else "light"]
        location = view.visited[-1] if view.variant != "grounding" else None
        reply = await ask(grounding_system(view.rooms), grounding_user(message, known, location, partner_world), "grounding")
        notes["partner"] = known = merge(known, read_new_state(reply, view.rooms), reference)
    ibp: tuple[str, ...] = ()
    if view.variant == "problem_solving":
        ibp, _ = best_with_prefix(view.rooms, total_weigher(view, known, reference), list(view.visited))
    return msgspec.structs.replace(context, derived=TspNotes(tuple(known), tuple(ibp)))
