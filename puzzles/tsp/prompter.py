"""Traveling Adventurers' side of the model agent (``puzzles.base.Prompter``): the prompts, the reply
format, the agent modules, and reading a prompt back (the local model server answers it as a
scripted player would).

A prompt read back has no turn number (the reference prompts show none), so its context has turn 0,
and its conversation is the partner's message in [Observation]; ``reference_grounding`` changes no
prompt text, so a view read back always has it off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from typing import Any

from ..base import ModelCall
from ..turn import ChatLine, Reply, TurnContext
from .board import GHOST, LIGHT, ROOM_ORDER
from .modules import GroundingRequest, prepare
from .prompt import DRAFT_VARIANTS, NOTICES_LINE, START, WRONG_FORMAT, fields, system_prompt, user_prompt
from .replies import format_reply, parse_reply, reply_grammar
from .rules import ACTIONS, TspAction, TspView

_WORLD = re.compile(r"you are in the (light|ghost) world")
_HALLWAY = re.compile(r"^- hallway between ([A-Z]) and ([A-Z]): (\d+) (?:light|ghost) coins$", re.M)
_FIELD = re.compile(r"^\[([A-Za-z-]+)\]: ?", re.M)
_INPUTS = re.compile(r"^\[([A-Za-z-]+)\] - ", re.M)
_ACTUAL = "Now the actual game."
_GROUNDING = "Your task is to write down the coins of the hallways"
VARIANT_FIELDS = {
    ("World-state-own", "History", "Observation"): "baseline",
    ("World-state-own", "World-state-user", "History", "Observation"): "grounding",
    ("World-state-own", "World-state-user", "Visited", "Remaining", "Observation"): "state_tracking",
    ("World-state-own", "World-state-user", "Visited", "Remaining", "IBP", "Observation"): "problem_solving",
}
assert all(fields(variant) == names for names, variant in VARIANT_FIELDS.items())


def user_fields(user: str) -> dict[str, str]:
    marks = list(_FIELD.finditer(user))
    found: dict[str, str] = {}
    for mark, following in zip(marks, marks[1:] + [None]):
        end = following.start() - 1 if following is not None else len(user)
        found.setdefault(mark.group(1), user[mark.end():end])
    return found


def _edges(text: str) -> tuple[tuple[str, str, int], ...]:
    try:
        return tuple((a, b, int(w)) for a, b, w in json.loads(text))
    except (ValueError, TypeError):
        return ()


def _read_grounding(user: str) -> TurnContext | None:
    found = user_fields(user)
    if "Message" not in found or "World" not in found:
        return None
    try:
        location = json.loads(found["Loc"]) if "Loc" in found else None
        world = json.loads(found["World"])
    except ValueError:
        return None
    request = GroundingRequest(found["Message"], _edges(found.get("OWS", "[]")), location, str(world))
    return TurnContext(game_id=0, role=str(world).lower(), turn=0, max_turns=0, view=request, feedback=None, conversation=())


def read_prompt(system: str, user: str) -> TurnContext | None:
    """The context a prompt shows (turn 0: the prompt shows no turn), or None if it is not one of this game's."""
    if system.startswith("You are watching two players") and _GROUNDING in system:
        return _read_grounding(user)
    world = _WORLD.search(system)
    actual = system.find(_ACTUAL)
    if world is None or actual < 0:
        return None
    role = world.group(1)
    weights = tuple((a, b, int(w)) for a, b, w in _HALLWAY.findall(system[actual:]))
    names = tuple(_INPUTS.findall(system))
    variant = VARIANT_FIELDS.get(names)
    found = user_fields(user)
    if variant is None or not weights or "Observation" not in found:
        return None
    named = {room for a, b, _ in weights for room in (a, b)}
    rooms = tuple(room for room in ROOM_ORDER if room in named)
    try:
        history = tuple(json.loads(found["History"])) if "History" in found else ()
        visited = tuple(json.loads(found["Visited"])) if "Visited" in found else (rooms[0],)
        remaining = tuple(json.loads(found["Remaining"])) if "Remaining" in found else rooms
    except ValueError:
        return None
    view = TspView(
        role=role, rooms=rooms, weights=weights, variant=variant, history=history, visited=visited,
        remaining=remaining, fidelity="(of length 1)" in system, notices=NOTICES_LINE in system,
    )
    partner = GHOST if role == LIGHT else LIGHT
    said = found["Observation"].strip()
    conversation = () if said in (START, WRONG_FORMAT) else (ChatLine(0, partner, said),)
    notices = tuple(found["Rejected"].split(". ")) if "Rejected" in found else ()
    return TurnContext(
        game_id=0, role=role, turn=0, max_turns=0, view=view, feedback=None, conversation=conversation,
        notices=notices, partners=(partner,),
    )


class TspPrompter:
    """The agents keep their whole chat with the model; the grounding and IBP modules run before a
    turn where the variant has them (``modules.prepare``)."""

    chat_memory = True

    def render(self, context: TurnContext[TspView]) -> tuple[str, str]:
        return system_prompt(context.view), user_prompt(context)

    def schema(self, context: TurnContext[TspView]) -> dict[str, Any] | None:
        return None  # the reply is sectioned text: constrained by its grammar

    def grammar(self, context: TurnContext[TspView]) -> str:
        """The reply's grammar, with the actions the prompt lists (``solve`` where the variant drafts)."""
        return reply_grammar(tuple(a for a in ACTIONS if a != "solve" or context.view.variant in DRAFT_VARIANTS))

    def parse(self, text: str, context: TurnContext[TspView]) -> Reply[TspAction]:
        return parse_reply(text)

    def format(self, reply: Reply[TspAction], prose: str = "") -> str:
        return format_reply(prose or "...", tuple(reply.actions), reply.message)

    async def prepare(self, context: TurnContext[TspView], notes: dict, ask: ModelCall) -> TurnContext[TspView]:
        return await prepare(context, notes, ask)

    def read(self, system: str, user: str) -> tuple[TurnContext[TspView], Hashable] | None:
        context = read_prompt(system, user)
        if context is None:
            return None
        return context, (context.role, system)
