"""AsymPuzl's prompt, after appendix G of the long paper, and reading one back.

The system part says who the agent is, what it and its partner see, that the partner receives only
the "message" (never the actions or the hypothesis), and the output format. The user part is the
puzzle state: the initial clues, the current working hypothesis, the feedback, notices about the
last turn, and the recent conversation (``puzzles.common.prompt``).

``read`` turns a prompt back into the context it shows; the local model server uses it to answer as
a scripted strategy would, so a whole game runs through real prompts and replies.
"""

from __future__ import annotations

import re
from typing import Any

from ..base import Reply, TurnContext
from ..common import prompt as common
from ..common.positions import read_feedback
from ..common.prompt import (
    SECTION_CLUES, SECTION_FEEDBACK, SECTION_HYPOTHESIS, UnreadablePrompt, agent_name,
)
from ..common.replies import format_json_reply, optional_fields, position_action_reader, read_reply
from .rules import ALICE, BOB, SOLO, AsymView, Piece, Replace, render_clues

SOLO_NAME = "the only agent"
ACTION = '{"replace": <position>, "by": {"shape": <shape>, "color": <color>}}'
EXAMPLE = '{"replace": 1, "by": {"shape": "square", "color": "blue"}}'


def _views(context: TurnContext) -> list[str]:
    """One line per agent saying what it sees, this agent first."""
    mine = (
        "You see the correct shape at each position, but not the colors."
        if context.role == ALICE
        else "You see the correct shape-color pairs, but in random order."
    )
    lines = [f"- {mine}"]
    for partner in context.partners:
        if partner == ALICE:
            lines.append(f"- {agent_name(partner)} knows the correct order of shapes but not the colors.")
        elif partner == BOB:
            lines.append(f"- {agent_name(partner)} knows the correct shape-color pairs, but not their order.")
    return lines


def system_prompt(context: TurnContext) -> str:
    """The task, identical for every turn of an agent (so providers can cache it)."""
    size = context.view.size
    if context.role == SOLO:
        return (
            f"You are {SOLO_NAME}.\n\n"
            f"Your goal is to solve a symbolic puzzle with {size} positions.\n\n"
            "Each position must have the correct (shape, color) pair.\n\n"
            "- You see the correct shape at each position, and the correct shape-color pairs in random order.\n\n"
            "You have one attempt: write your whole solution with actions."
        )
    task = (
        f"Your goal is to solve a symbolic puzzle with {size} positions.\n\n"
        "Each position must have the correct (shape, color) pair.\n\n" + "\n".join(_views(context))
    )
    return common.system_prompt(context, task)


render_feedback = common.feedback_text


def _hypothesis(view: AsymView) -> str:
    return "\n".join(
        f"Position {p}: the {piece.shape} is {piece.color if piece.color is not None else 'of unknown color'}."
        for p, piece in enumerate(view.hypothesis, 1)
    )


def user_prompt(context: TurnContext) -> str:
    """The puzzle state this turn."""
    view: AsymView = context.view
    alone = context.role == SOLO
    return common.user_prompt(
        context,
        lambda: render_clues(context.role, view.clues, view.size),
        _hypothesis(view),
        None if context.feedback is None else render_feedback(context.feedback),
        common.output_format(context, ACTION, EXAMPLE, alone=alone),
        alone=alone,
    )


def render_prompt(context: TurnContext) -> tuple[str, str]:
    """(system, user) for one agent turn."""
    return system_prompt(context), user_prompt(context)


def reply_schema(context: TurnContext) -> dict[str, Any]:
    return common.reply_schema(context, ("shape", "color"))


# ---- Replies ----


read_action = position_action_reader(("shape", "color"), lambda position, values: Replace(position, *values))
"""A raw action as a Replace, or the reason it is malformed."""


def parse_reply(text: str, optional: tuple[str, ...] = ()) -> Reply:
    return read_reply(text, read_action, optional=optional)


def action_json(action: Replace) -> dict[str, Any]:
    return {"replace": action.position, "by": {"shape": action.shape, "color": action.color}}


def format_reply(prose: str, message: str, actions, **extra: str | None) -> str:
    """A reply in the required format: prose, then the JSON object on its own line."""
    return format_json_reply(prose, message, [action_json(a) for a in actions], **extra)


# ---- Reading a prompt back (for the local model server) ----


_PIECE = re.compile(r"^Position (\d+): the ([a-z]+) is (of unknown color|[a-z]+)\.$")
_SIZE = re.compile(r"puzzle with (\d+) positions")


def _pieces(text: str) -> tuple[Piece, ...]:
    pieces = []
    for line in text.splitlines():
        m = _PIECE.match(line.strip())
        if m:
            color = None if m.group(3) == "of unknown color" else m.group(3)
            pieces.append(Piece(m.group(2), color))
    return tuple(pieces)


def _role(name: str) -> str:
    return SOLO if name == SOLO_NAME else common.role_of(name)


def read_prompt(system: str, user: str) -> TurnContext:
    """The context an AsymPuzl prompt shows; raises UnreadablePrompt if it is not one."""
    me, size, turn = common.ME.search(system), _SIZE.search(system), common.TURN.search(user)
    if me is None or size is None or turn is None:
        raise UnreadablePrompt("not an AsymPuzl prompt")
    if "Each position must have the correct (shape, color) pair." not in system:
        raise UnreadablePrompt("only AsymPuzl prompts can be read back here")
    found = common.sections(user)
    if SECTION_CLUES not in found:
        raise UnreadablePrompt("the prompt shows no clues")
    view = AsymView(int(size.group(1)), _pieces(found[SECTION_CLUES]), _pieces(found.get(SECTION_HYPOTHESIS, "")))
    role = _role(me.group(1))
    return TurnContext(
        game_id=0,
        role=role,
        turn=int(turn.group(1)),
        max_turns=int(turn.group(2)),
        view=view,
        feedback=read_feedback(found[SECTION_FEEDBACK], role, _role) if SECTION_FEEDBACK in found else None,
        conversation=common.read_conversation(found),
        notices=common.read_notices(found),
        partners=common.read_partners(system),
        directed=common.is_directed(found),
    )


class AsymPuzlPrompter:
    """AsymPuzl's side of the model policy (``puzzles.base.Prompter``)."""

    def render(self, context: TurnContext) -> tuple[str, str]:
        return render_prompt(context)

    def schema(self, context: TurnContext) -> dict[str, Any] | None:
        return reply_schema(context)

    def parse(self, text: str, context: TurnContext) -> Reply:
        return parse_reply(text, optional_fields(context))

    def format(self, reply: Reply, prose: str = "") -> str:
        return format_reply(prose, reply.message, reply.actions, to=reply.to, scratchpad=reply.scratchpad)

    def read(self, system: str, user: str) -> tuple[TurnContext, Any] | None:
        try:
            context = read_prompt(system, user)
        except UnreadablePrompt:
            return None
        return context, (context.role, system, context.view.clues)


__all__ = ["AsymPuzlPrompter", "UnreadablePrompt", "format_reply", "parse_reply", "read_prompt", "render_prompt"]
