"""The chain puzzle's prompt: AsymPuzl's, with one attribute per agent and each agent's link; and
reading one back (the local model server answers it as a scripted strategy would)."""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

from ..turn import Reply, TurnContext
from ..positions import prompt as shared
from ..positions.prompt import (
    SECTION_CLUES, SECTION_FEEDBACK, SECTION_HYPOTHESIS,
)
from ..positions.replies import format_json_reply, optional_fields, position_action_reader, read_reply
from ..positions.rules import read_feedback
from .rules import CHAIN_ROLES, ChainReplace, ChainView, render_item


def _clues(context: TurnContext) -> str:
    view: ChainView = context.view
    attributes = view.attributes
    i = CHAIN_ROLES.index(context.role)
    if i == 0:
        head = f"You see the correct {attributes[0]} at each of the {view.size} positions."
        body = "\n".join(render_item(p, item, attributes) for p, item in enumerate(view.clues, 1))
    else:
        head = (
            f"You see which {attributes[i]} goes with each {attributes[i - 1]}, in random order; "
            f"positions unknown. The puzzle has {view.size} positions."
        )
        body = "\n".join(
            f"The {attributes[i - 1]} {item[i - 1]} goes with the {attributes[i]} {item[i]}." for item in view.clues
        )
    return head + "\n" + body


render_feedback = shared.feedback_text


def render_prompt(context: TurnContext) -> tuple[str, str]:
    view: ChainView = context.view
    task = (
        f"Your goal is to solve a symbolic puzzle with {view.size} positions.\n\n"
        f"Each position must have the correct values of: {', '.join(view.attributes)}.\n\n"
        "Each agent knows one link of the puzzle; your clues below say which."
    )
    by = ", ".join(f'"{a}": <{a}>' for a in view.attributes)
    filled = ", ".join(f'"{a}": "..."' for a in view.attributes)
    action = "{" + f'"replace": <position>, "by": {{{by}}}' + "}"
    example = "{" + f'"replace": 1, "by": {{{filled}}}' + "}"
    hypothesis = "\n".join(render_item(p, item, view.attributes) for p, item in enumerate(view.hypothesis, 1))
    user = shared.user_prompt(
        context, lambda: _clues(context), hypothesis,
        None if context.feedback is None else render_feedback(context.feedback),
        shared.output_format(context, action, example),
    )
    return shared.system_prompt(context, task), user


def action_reader(attributes: tuple[str, ...]):
    """Reads one raw action into a ChainReplace, or the reason it is malformed."""
    return position_action_reader(attributes, ChainReplace)


def format_reply(prose: str, message: str, actions, **extra: str | None) -> str:
    return format_json_reply(prose, message, [{"replace": a.position, "by": a.as_by()} for a in actions], **extra)


# ---- Reading a prompt back (for the local model server) ----


_SIZE = re.compile(r"puzzle with (\d+) positions")
_ATTRIBUTES = re.compile(r"^Each position must have the correct values of: ([a-z, ]+)\.$", re.M)
_ITEM = re.compile(r"^Position (\d+): (.*?)(?: \(([a-z, ]+) unknown\))?\.$")
_LINK = re.compile(r"^The ([a-z]+) ([a-z]+) goes with the ([a-z]+) ([a-z]+)\.$")


def _items(text: str, attributes: tuple[str, ...]) -> tuple[tuple[str | None, ...], ...]:
    """The items of lines written by ``render_item`` or as links (``The shape x goes with the color y.``)."""
    items = []
    for line in text.splitlines():
        values: dict[str, str] = {}
        if (m := _ITEM.match(line)) is not None:
            values = dict(pair.split(" ", 1) for pair in m.group(2).split(", ") if pair)
        elif (m := _LINK.match(line)) is not None:
            values = {m.group(1): m.group(2), m.group(3): m.group(4)}
        else:
            continue
        items.append(tuple(values.get(a) for a in attributes))
    return tuple(items)


def read_prompt(system: str, user: str) -> TurnContext | None:
    """The context a chain prompt shows, or None if it is not one (or shows no clues)."""
    me, size, turn = shared.ME.search(system), _SIZE.search(system), shared.TURN.search(user)
    attributes = _ATTRIBUTES.search(system)
    found = shared.sections(user)
    if me is None or size is None or turn is None or attributes is None or SECTION_CLUES not in found:
        return None
    names = tuple(attributes.group(1).split(", "))
    role = shared.role_of(me.group(1))
    clues = _items(found[SECTION_CLUES], names)
    view = ChainView(int(size.group(1)), names, clues, _items(found.get(SECTION_HYPOTHESIS, ""), names))
    return TurnContext(
        game_id=0, role=role, turn=int(turn.group(1)), max_turns=int(turn.group(2)),
        view=view, feedback=read_feedback(found[SECTION_FEEDBACK], role, shared.role_of) if SECTION_FEEDBACK in found else None,
        conversation=shared.read_conversation(found), notices=shared.read_notices(found),
        partners=shared.read_partners(system), directed=shared.is_directed(found),
    )


class ChainPrompter:
    """The chain puzzle's side of the model policy (``puzzles.base.Prompter``)."""

    chat_memory = False  # each turn is a fresh (system, user) pair

    def render(self, context: TurnContext[ChainView]) -> tuple[str, str]:
        return render_prompt(context)

    def schema(self, context: TurnContext[ChainView]) -> dict[str, Any] | None:
        return shared.reply_schema(context, context.view.attributes)

    def parse(self, text: str, context: TurnContext[ChainView]) -> Reply[ChainReplace]:
        return read_reply(text, action_reader(context.view.attributes), optional=optional_fields(context))

    def format(self, reply: Reply[ChainReplace], prose: str = "") -> str:
        return format_reply(prose, reply.message, reply.actions, to=reply.to, scratchpad=reply.scratchpad)

    def read(self, system: str, user: str) -> tuple[TurnContext[ChainView], Hashable] | None:
        context = read_prompt(system, user)
        if context is None:
            return None
        return context, (context.role, system, context.view.clues)
