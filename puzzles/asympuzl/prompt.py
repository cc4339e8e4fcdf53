"""AsymPuzl's prompts, and reading one back. The game's ``prompt`` parameter picks one (the view
carries it):

- ``paper`` (the default): the long paper's appendix G, word for word where the paper gives words
  (``puzzles.asympuzl.paper`` says where it gives none and what we wrote).
- ``guided``: the paper's prompt with our additions, each of which may change what a model does:
  the system part ends "Important: Agent A receives only your "message", never your actions, your
  hypothesis or your clues; write everything it needs to know into the message."; the header shows
  "(turn t of T)"; a line before the clues says what they mean, the puzzle's size and how many of
  them are distractors; feedback reads "Your part of the puzzle ...", one line per agent; the
  conversation names "Agent B (you, turn 1):"; the message field says "the other agents"; the
  example action is a legal move (``puzzles.positions.prompt``, shared with the chain game).

``read`` turns a prompt of either back into the context it shows; the local model server uses it to
answer as a scripted strategy would, so a whole game runs through real prompts and replies.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

from ..turn import Reply, TurnContext
from ..positions import prompt as shared
from ..positions.prompt import (
    SECTION_CLUES, SECTION_FEEDBACK, SECTION_HYPOTHESIS, UnreadablePrompt, agent_name,
)
from ..positions.replies import format_json_reply, optional_fields, position_action_reader, read_reply
from ..positions.rules import read_feedback
from .paper import (  # by name, not ``from . import paper``: that would import this package's __init__ back
    HEADER as PAPER_HEADER, read_conversation as read_paper_conversation, read_feedback as read_paper_feedback,
    system_prompt as paper_system_prompt, user_prompt as paper_user_prompt,
)
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
    if context.view.prompt == "paper":
        return paper_system_prompt(context)
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
    return shared.system_prompt(context, task)


render_feedback = shared.feedback_text


def _hypothesis(view: AsymView) -> str:
    return "\n".join(
        f"Position {p}: the {piece.shape} is {piece.color if piece.color is not None else 'of unknown color'}."
        for p, piece in enumerate(view.hypothesis, 1)
    )


def user_prompt(context: TurnContext) -> str:
    """The puzzle state this turn."""
    view: AsymView = context.view
    if view.prompt == "paper":
        return paper_user_prompt(context, _hypothesis(view))
    alone = context.role == SOLO
    return shared.user_prompt(
        context,
        lambda: render_clues(context.role, view.clues, view.size),
        _hypothesis(view),
        None if context.feedback is None else render_feedback(context.feedback),
        shared.output_format(context, ACTION, EXAMPLE, alone=alone),
        alone=alone,
    )


def render_prompt(context: TurnContext) -> tuple[str, str]:
    """(system, user) for one agent turn."""
    return system_prompt(context), user_prompt(context)


def reply_schema(context: TurnContext) -> dict[str, Any]:
    return shared.reply_schema(context, ("shape", "color"))


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
    return SOLO if name == SOLO_NAME else shared.role_of(name)


def read_prompt(system: str, user: str) -> TurnContext:
    """The context an AsymPuzl prompt of either kind shows; raises UnreadablePrompt if it is not
    one. The paper's prompt shows no turn: its turns (the context's and the lines') read as 0."""
    me, size, turn = shared.ME.search(system), _SIZE.search(system), shared.TURN.search(user)
    guided = turn is not None
    if me is None or size is None or not (guided or user.startswith(PAPER_HEADER + "\n")):
        raise UnreadablePrompt("not an AsymPuzl prompt")
    if "Each position must have the correct (shape, color) pair." not in system:
        raise UnreadablePrompt("only AsymPuzl prompts can be read back here")
    found = shared.sections(user)
    if SECTION_CLUES not in found:
        raise UnreadablePrompt("the prompt shows no clues")
    role = _role(me.group(1))
    view = AsymView(
        int(size.group(1)), _pieces(found[SECTION_CLUES]), _pieces(found.get(SECTION_HYPOTHESIS, "")),
        "guided" if guided else "paper",
    )
    feedback = None
    if SECTION_FEEDBACK in found:
        shown = found[SECTION_FEEDBACK]
        feedback = read_feedback(shown, role, _role) if guided else read_paper_feedback(shown, role)
    return TurnContext(
        game_id=0,
        role=role,
        turn=int(turn.group(1)) if turn else 0,
        max_turns=int(turn.group(2)) if turn else 0,
        view=view,
        feedback=feedback,
        conversation=shared.read_conversation(found) if guided else read_paper_conversation(found),
        notices=shared.read_notices(found),
        partners=shared.read_partners(system),
        directed=shared.is_directed(found),
    )


class AsymPuzlPrompter:
    """AsymPuzl's side of the model policy (``puzzles.base.Prompter``)."""

    chat_memory = False  # each turn is a fresh (system, user) pair

    def render(self, context: TurnContext[AsymView]) -> tuple[str, str]:
        return render_prompt(context)

    def schema(self, context: TurnContext[AsymView]) -> dict[str, Any] | None:
        return reply_schema(context)

    def parse(self, text: str, context: TurnContext[AsymView]) -> Reply[Replace]:
        return parse_reply(text, optional_fields(context))

    def format(self, reply: Reply[Replace], prose: str = "") -> str:
        return format_reply(prose, reply.message, reply.actions, to=reply.to, scratchpad=reply.scratchpad)

    def read(self, system: str, user: str) -> tuple[TurnContext[AsymView], Hashable] | None:
        try:
            context = read_prompt(system, user)
        except UnreadablePrompt:
            return None
        return context, (context.role, system, context.view.clues)


__all__ = ["AsymPuzlPrompter", "UnreadablePrompt", "format_reply", "parse_reply", "read_prompt", "render_prompt"]
