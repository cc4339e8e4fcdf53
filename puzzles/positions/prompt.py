"""Prompt parts shared by the games whose replies end in {"message": ..., "actions": [...]}, after
appendix G of the long AsymPuzl paper: agent names, the sections of the user part, the
conversation, the output format, and reading a prompt back into its sections.

The system part holds the task: who the agent is, what it and its partners see, and that partners
receive only the "message". The user part is the state: the initial clues (or the agent's notes),
the current working hypothesis, the feedback, notices about the last turn, and the recent
conversation, then the output format.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..turn import ChatLine, TurnContext
from .rules import Feedback, render_feedback as render_statuses

AGENT_NAMES = {"alice": "Agent A", "bob": "Agent B", "carol": "Agent C", "dave": "Agent D"}
_ROLE_OF_NAME = {name: role for role, name in AGENT_NAMES.items()}

SECTION_CLUES = "Initial clues:"
SECTION_HYPOTHESIS = "Your current working hypothesis:"
SECTION_FEEDBACK = "Feedback:"
SECTION_NOTICES = "About your last turn:"
SECTION_CONVERSATION = "Recent conversation:"
SECTION_NOTES = "Your notes from your last turn:"
SECTION_FORMAT = "Output format:"
NO_FEEDBACK = "No feedback this turn."
NO_MESSAGES = "No messages yet."
HEADERS = (
    SECTION_CLUES, SECTION_HYPOTHESIS, SECTION_FEEDBACK, SECTION_NOTICES, SECTION_CONVERSATION,
    SECTION_NOTES, SECTION_FORMAT,
)


def agent_name(role: str) -> str:
    return AGENT_NAMES.get(role, f"Agent {role.capitalize()}")


def role_of(name: str) -> str:
    return _ROLE_OF_NAME.get(name, name.removeprefix("Agent ").lower())


def names(roles) -> str:
    shown = [agent_name(r) for r in roles]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def feedback_text(feedback: Any) -> str:
    """The feedback section's text: the statuses as sentences, or that there is none."""
    if not isinstance(feedback, Feedback):
        return NO_FEEDBACK
    return render_statuses(feedback, agent_name) or NO_FEEDBACK



def extension_fields(context: TurnContext) -> list[str]:
    """The reply fields the extensions add: the addressee (directed messages), the scratchpad."""
    fields = []
    if context.directed:
        fields.append(f'- "to": the one agent your message goes to ({names(context.partners)}).')
    if context.keeps_notes:
        fields.append('- "scratchpad": notes for yourself; only they (not your clues) are shown to you next turn.')
    return fields

def output_format(context: TurnContext, action: str, example: str, *, alone: bool = False) -> str:
    """The output-format section: one action's format and an example. ``alone``: nobody to talk to."""
    fields = []
    if not alone:
        fields.append('- "message": what you want to tell and ask the other agents (the only thing they will receive).')
    else:
        fields.append('- "message": an empty string (there is nobody to talk to).')
    fields.append('- "actions": a list of actions to take on your hypothesis (no other agent sees them).')
    fields += extension_fields(context)
    extra = ', "to": "Agent B"' if context.directed else ""
    return (
        f"{SECTION_FORMAT}\n"
        f"Each action must follow this format:\n{action}\n\n"
        "Your answer MUST END WITH a valid JSON object with the following fields:\n"
        + "\n".join(fields)
        + f'\n\nExample:\n{{"message": "...", "actions": [{example}]{extra}}}'
    )


def system_prompt(context: TurnContext, task: str) -> str:
    """Who the agent is, the task, and that partners receive only the message."""
    me = agent_name(context.role)
    partners = names(context.partners)
    one = len(context.partners) == 1
    return (
        f"You are {me}.\n\n{task}\n\n"
        f"Communicate with {partners} and update your hypothesis until the puzzle is solved.\n\n"
        f"Important: {partners} {'receives' if one else 'receive'} only your \"message\", never your actions, "
        f"your hypothesis or your clues; write everything {'it needs' if one else 'they need'} to know into the message."
    )


def _speaker(sender: str, me: str, turn: int) -> str:
    if sender == me:
        return f"{agent_name(sender)} (you, turn {turn}):"
    return f"{agent_name(sender)} (turn {turn}):"


def user_prompt(
    context: TurnContext, clues: Callable[[], str], hypothesis: str, feedback: str | None, output: str,
    *, alone: bool = False,
) -> str:
    """The state this turn: clues (or notes), hypothesis, feedback, notices, conversation, format."""
    parts = [f"# Puzzle State (turn {context.turn} of {context.max_turns})"]
    if context.reinjected:
        parts.append(f"{SECTION_CLUES}\n{clues()}")
    else:
        parts.append(f"{SECTION_NOTES}\n{context.scratchpad or '(none)'}")
    parts.append(f"{SECTION_HYPOTHESIS}\n{hypothesis}")
    if feedback is not None:
        parts.append(f"{SECTION_FEEDBACK}\n{feedback}")
    if context.notices:
        parts.append(SECTION_NOTICES + "\n" + "\n".join(f"- {n}" for n in context.notices))
    if not alone:
        lines = [f"{_speaker(line.sender, context.role, line.turn)} {line.text}" for line in context.conversation]
        parts.append(f"{SECTION_CONVERSATION}\n" + ("\n".join(lines) if lines else NO_MESSAGES))
    parts.append(output)
    return "\n\n".join(parts)


def reply_schema(context: TurnContext, attributes: tuple[str, ...]) -> dict[str, Any]:
    """The reply object as a JSON schema, for backends with structured outputs (strict mode: every
    property required, no others). Each action replaces a position by one value per attribute."""
    by = {
        "type": "object",
        "properties": {a: {"type": "string"} for a in attributes},
        "required": list(attributes),
        "additionalProperties": False,
    }
    action = {
        "type": "object",
        "properties": {"replace": {"type": "integer"}, "by": by},
        "required": ["replace", "by"],
        "additionalProperties": False,
    }
    properties: dict[str, Any] = {"message": {"type": "string"}, "actions": {"type": "array", "items": action}}
    if context.directed:
        properties["to"] = {"type": "string"}
    if context.keeps_notes:
        properties["scratchpad"] = {"type": "string"}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


# ---- Reading a prompt back (for the local model server) ----


class UnreadablePrompt(ValueError):
    """The prompt is not one this game writes."""


ME = re.compile(r"^You are (Agent [A-Z]|the only agent)\.", re.M)
TURN = re.compile(r"^# Puzzle State \(turn (\d+) of (\d+)\)", re.M)
_SPEAKER = re.compile(r"^(Agent [A-Z]) \((you, )?turn (\d+)\): ?", re.M)


def sections(user: str) -> dict[str, str]:
    """The user part cut into its sections, by header."""
    found: dict[str, str] = {}
    current = ""
    for block in user.split("\n\n"):
        head, _, rest = block.partition("\n")
        if head in HEADERS:
            found[head] = rest
            current = head
        elif found:
            found[current] += "\n\n" + block  # a blank line inside a section (a message, say)
    return found


def read_conversation(found: dict[str, str]) -> tuple[ChatLine, ...]:
    conversation = found.get(SECTION_CONVERSATION, NO_MESSAGES)
    if conversation == NO_MESSAGES:
        return ()
    lines = []
    heads = list(_SPEAKER.finditer(conversation))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(conversation)
        lines.append(ChatLine(int(m.group(3)), role_of(m.group(1)), conversation[m.end():end].rstrip("\n")))
    return tuple(lines)


def read_notices(found: dict[str, str]) -> tuple[str, ...]:
    if SECTION_NOTICES not in found:
        return ()
    return tuple(line[2:] for line in found[SECTION_NOTICES].splitlines() if line.startswith("- "))


def read_partners(system: str) -> tuple[str, ...]:
    partners = re.search(r"^Communicate with (.+) and update your hypothesis", system, re.M)
    if not partners:
        return ()
    return tuple(role_of(n.strip()) for n in re.split(r",| and ", partners.group(1)) if n.strip())


def is_directed(found: dict[str, str]) -> bool:
    return '"to":' in found.get(SECTION_FORMAT, "")
