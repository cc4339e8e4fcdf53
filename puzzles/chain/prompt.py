"""The chain puzzle's prompt: AsymPuzl's, with one attribute per agent and each agent's link."""

from __future__ import annotations

from typing import Any

from ..base import Reply, TurnContext
from ..common import prompt as common
from ..common.positions import Feedback, render_feedback as render_statuses
from ..common.prompt import NO_FEEDBACK, agent_name
from ..common.replies import compact, format_json_reply, optional_fields, read_reply
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


def render_feedback(feedback: Any) -> str:
    if not isinstance(feedback, Feedback):
        return NO_FEEDBACK
    return render_statuses(feedback, agent_name) or NO_FEEDBACK


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
    user = common.user_prompt(
        context, lambda: _clues(context), hypothesis,
        None if context.feedback is None else render_feedback(context.feedback),
        common.output_format(context, action, example),
    )
    return common.system_prompt(context, task), user


def action_reader(attributes: tuple[str, ...]):
    """Reads one raw action into a ChainReplace, or the reason it is malformed."""

    def read(raw: object) -> ChainReplace | str:
        if not isinstance(raw, dict):
            example = ", ".join(f'"{a}": ...' for a in attributes)
            return f"an action must be an object like {{\"replace\": 1, \"by\": {{{example}}}}}"
        extra = sorted(set(raw) - {"replace", "by"})
        if extra:
            return f"unknown field {extra[0]!r} in action"
        position = raw.get("replace")
        if type(position) is not int:
            return f"\"replace\" must be an integer position, got {compact(position)}"
        by = raw.get("by")
        if not isinstance(by, dict):
            names = " and ".join(f'"{a}"' for a in attributes)
            return f"\"by\" must be an object with {names}, got {compact(by)}"
        extra = sorted(set(by) - set(attributes))
        if extra:
            return f"unknown field {extra[0]!r} in \"by\""
        values = []
        for name in attributes:
            value = by.get(name)
            if not isinstance(value, str):
                return f"\"{name}\" must be a string, got {compact(value)}"
            values.append(value.strip().lower())
        return ChainReplace(position, tuple(values))

    return read


def format_reply(prose: str, message: str, actions, **extra: str | None) -> str:
    return format_json_reply(prose, message, [{"replace": a.position, "by": a.as_by()} for a in actions], **extra)


class ChainPrompter:
    """The chain puzzle's side of the model policy (``puzzles.base.Prompter``). Its prompts are not
    read back: the local model server answers them without JSON."""

    def render(self, context: TurnContext) -> tuple[str, str]:
        return render_prompt(context)

    def schema(self, context: TurnContext) -> dict[str, Any] | None:
        return common.reply_schema(context, context.view.attributes)

    def parse(self, text: str, context: TurnContext) -> Reply:
        return read_reply(text, action_reader(context.view.attributes), optional=optional_fields(context))

    def format(self, reply: Reply, prose: str = "") -> str:
        return format_reply(prose, reply.message, reply.actions, to=reply.to, scratchpad=reply.scratchpad)

    def read(self, system: str, user: str) -> tuple[TurnContext, Any] | None:
        return None
