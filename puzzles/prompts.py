"""The prompt a model agent gets each turn, after appendix G of the long AsymPuzl paper.

The system part holds the task: who the agent is, what it and its partners see, that partners receive
only the "message" (never the actions or the hypothesis), and the output format. The user part is the
puzzle state: the initial clues, the current working hypothesis, the feedback, notices about the last
turn, and the recent conversation.

``read_prompt`` turns a prompt back into the state it shows; the local model server uses it to answer
as a scripted strategy would, so a whole game runs through real prompts and replies.
"""

from __future__ import annotations

import re
from typing import Any

from .asympuzl import ALICE, BOB, SOLO, Feedback, Piece, RoleStatus, render_clues
from .asympuzl import render_feedback as asympuzl_feedback
from .chain import ATTRIBUTES, CHAIN_ROLES, render_item

AGENT_NAMES = {ALICE: "Agent A", BOB: "Agent B", "carol": "Agent C", "dave": "Agent D"}
_ROLE_OF_NAME = {name: role for role, name in AGENT_NAMES.items()}
SOLO_NAME = "the only agent"

SECTION_CLUES = "Initial clues:"
SECTION_HYPOTHESIS = "Your current working hypothesis:"
SECTION_FEEDBACK = "Feedback:"
SECTION_NOTICES = "About your last turn:"
SECTION_CONVERSATION = "Recent conversation:"
SECTION_NOTES = "Your notes from your last turn:"
SECTION_FORMAT = "Output format:"
NO_FEEDBACK = "No feedback this turn."
NO_MESSAGES = "No messages yet."


def agent_name(role: str) -> str:
    return AGENT_NAMES.get(role, f"Agent {role.capitalize()}")


def _names(roles) -> str:
    names = [agent_name(r) for r in roles]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _views(context: Any) -> list[str]:
    """One line per agent saying what it sees, this agent first."""
    if context.puzzle == "chain":
        return []
    partners = context.partners
    mine = (
        "You see the correct shape at each position, but not the colors."
        if context.role == ALICE
        else "You see the correct shape-color pairs, but in random order."
    )
    lines = [f"- {mine}"]
    for partner in partners:
        if partner == ALICE:
            lines.append(f"- {agent_name(partner)} knows the correct order of shapes but not the colors.")
        elif partner == BOB:
            lines.append(f"- {agent_name(partner)} knows the correct shape-color pairs, but not their order.")
    return lines


def _action_example(context: Any) -> tuple[str, str]:
    if context.puzzle == "chain":
        attributes = _chain_attributes(context)
        by = ", ".join(f'"{a}": <{a}>' for a in attributes)
        filled = ", ".join(f'"{a}": "..."' for a in attributes)
        return "{" + f'"replace": <position>, "by": {{{by}}}' + "}", "{" + f'"replace": 1, "by": {{{filled}}}' + "}"
    return (
        '{"replace": <position>, "by": {"shape": <shape>, "color": <color>}}',
        '{"replace": 1, "by": {"shape": "square", "color": "blue"}}',
    )


def _chain_attributes(context: Any) -> tuple[str, ...]:
    return ATTRIBUTES[: len(context.hypothesis[0])]


def _chain_clues(context: Any) -> str:
    """A chain agent's clues, worded as ``render_chain_clues`` words them."""
    attributes = _chain_attributes(context)
    i = CHAIN_ROLES.index(context.role)
    if i == 0:
        head = f"You see the correct {attributes[0]} at each of the {context.size} positions."
        body = "\n".join(render_item(p, item, attributes) for p, item in enumerate(context.clues, 1))
    else:
        head = (
            f"You see which {attributes[i]} goes with each {attributes[i - 1]}, in random order; "
            f"positions unknown. The puzzle has {context.size} positions."
        )
        body = "\n".join(
            f"The {attributes[i - 1]} {item[i - 1]} goes with the {attributes[i]} {item[i]}." for item in context.clues
        )
    return head + "\n" + body


def output_format(context: Any) -> str:
    action, example = _action_example(context)
    fields = []
    if context.role != SOLO:
        fields.append('- "message": what you want to tell and ask the other agents (the only thing they will receive).')
    else:
        fields.append('- "message": an empty string (there is nobody to talk to).')
    fields.append('- "actions": a list of actions to take on your hypothesis (no other agent sees them).')
    if context.directed:
        fields.append(f'- "to": the one agent your message goes to ({_names(context.partners)}).')
    if context.keeps_notes:
        fields.append('- "scratchpad": notes for yourself; only they (not your clues) are shown to you next turn.')
    extra = ', "to": "Agent B"' if context.directed else ""
    return (
        f"{SECTION_FORMAT}\n"
        f"Each action must follow this format:\n{action}\n\n"
        "Your answer MUST END WITH a valid JSON object with the following fields:\n"
        + "\n".join(fields)
        + f'\n\nExample:\n{{"message": "...", "actions": [{example}]{extra}}}'
    )


def system_prompt(context: Any) -> str:
    """The task, identical for every turn of an agent (so providers can cache it)."""
    if context.role == SOLO:
        return (
            f"You are {SOLO_NAME}.\n\n"
            f"Your goal is to solve a symbolic puzzle with {context.size} positions.\n\n"
            "Each position must have the correct (shape, color) pair.\n\n"
            "- You see the correct shape at each position, and the correct shape-color pairs in random order.\n\n"
            "You have one attempt: write your whole solution with actions."
        )
    me = agent_name(context.role)
    partners = _names(context.partners)
    one = len(context.partners) == 1
    if context.puzzle == "chain":
        attributes = ", ".join(_chain_attributes(context))
        task = (
            f"Your goal is to solve a symbolic puzzle with {context.size} positions.\n\n"
            f"Each position must have the correct values of: {attributes}.\n\n"
            "Each agent knows one link of the puzzle; your clues below say which."
        )
    else:
        task = (
            f"Your goal is to solve a symbolic puzzle with {context.size} positions.\n\n"
            "Each position must have the correct (shape, color) pair.\n\n" + "\n".join(_views(context))
        )
    return (
        f"You are {me}.\n\n{task}\n\n"
        f"Communicate with {partners} and update your hypothesis until the puzzle is solved.\n\n"
        f"Important: {partners} {'receives' if one else 'receive'} only your \"message\", never your actions, "
        f"your hypothesis or your clues; write everything {'it needs' if one else 'they need'} to know into the message."
    )


def _render_hypothesis(context: Any) -> str:
    if context.puzzle == "chain":
        attributes = _chain_attributes(context)
        return "\n".join(render_item(p, item, attributes) for p, item in enumerate(context.hypothesis, 1))
    return "\n".join(
        f"Position {p}: the {piece.shape} is {piece.color if piece.color is not None else 'of unknown color'}."
        for p, piece in enumerate(context.hypothesis, 1)
    )


def render_feedback(feedback: Any) -> str:
    if not isinstance(feedback, Feedback):
        return NO_FEEDBACK
    return asympuzl_feedback(feedback, agent_name) or NO_FEEDBACK


def _speaker(sender: str, me: str, turn: int) -> str:
    if sender == me:
        return f"{agent_name(sender)} (you, turn {turn}):"
    return f"{agent_name(sender)} (turn {turn}):"


def _render_clues(context: Any) -> str:
    if context.puzzle == "chain":
        return _chain_clues(context)
    return render_clues(context.role, context.clues, context.size)


def user_prompt(context: Any) -> str:
    """The puzzle state this turn."""
    parts = [f"# Puzzle State (turn {context.turn} of {context.max_turns})"]
    if context.clues is not None:
        parts.append(f"{SECTION_CLUES}\n{_render_clues(context)}")
    else:
        parts.append(f"{SECTION_NOTES}\n{context.scratchpad or '(none)'}")
    parts.append(f"{SECTION_HYPOTHESIS}\n{_render_hypothesis(context)}")
    if context.feedback is not None:
        parts.append(f"{SECTION_FEEDBACK}\n{render_feedback(context.feedback)}")
    if context.notices:
        parts.append(SECTION_NOTICES + "\n" + "\n".join(f"- {n}" for n in context.notices))
    if context.role != SOLO:
        lines = [f"{_speaker(line.sender, context.role, line.turn)} {line.text}" for line in context.conversation]
        parts.append(f"{SECTION_CONVERSATION}\n" + ("\n".join(lines) if lines else NO_MESSAGES))
    parts.append(output_format(context))
    return "\n\n".join(parts)


def render_prompt(context: Any) -> tuple[str, str]:
    """(system, user) for one agent turn."""
    return system_prompt(context), user_prompt(context)


# ---- Reading a prompt back (for the local model server) ----


class PromptState:
    """What an AsymPuzl prompt shows, read back from its text."""

    def __init__(self) -> None:
        self.role = ""
        self.size = 0
        self.turn = 0
        self.max_turns = 0
        self.clues: tuple[Piece, ...] = ()
        self.hypothesis: tuple[Piece, ...] = ()
        self.feedback: Feedback | None = None
        self.notices: tuple[str, ...] = ()
        self.conversation: list[tuple[int, str, str]] = []  # (turn, sender role, text)
        self.partners: tuple[str, ...] = ()
        self.directed = False
        self.puzzle = "asympuzl"


class UnreadablePrompt(ValueError):
    """The prompt is not one this module writes."""


_PIECE = re.compile(r"^Position (\d+): the ([a-z]+) is (of unknown color|[a-z]+)\.$")
_ME = re.compile(r"^You are (Agent [A-Z]|the only agent)\.", re.M)
_SIZE = re.compile(r"puzzle with (\d+) positions")
_TURN = re.compile(r"^# Puzzle State \(turn (\d+) of (\d+)\)", re.M)
_SPEAKER = re.compile(r"^(Agent [A-Z]) \((you, )?turn (\d+)\): ?", re.M)
_STATUS = re.compile(r"^(Your|Agent [A-Z]'s) part of the puzzle is (solved|unsolved)(?:; wrong positions: ([\d, ]+))?\.$")
_JOINT = re.compile(r"^The puzzle is (solved|not solved yet)\.$")
_HEADERS = (SECTION_CLUES, SECTION_HYPOTHESIS, SECTION_FEEDBACK, SECTION_NOTICES, SECTION_CONVERSATION, SECTION_NOTES, SECTION_FORMAT)


def _sections(user: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for block in user.split("\n\n"):
        head, _, rest = block.partition("\n")
        if head in _HEADERS:
            found[head] = rest
            current = head
        elif found and current != SECTION_FORMAT:
            found[current] += "\n\n" + block  # a blank line inside a section (a message, say)
    return found


def _pieces(text: str) -> tuple[Piece, ...]:
    pieces = []
    for line in text.splitlines():
        m = _PIECE.match(line.strip())
        if m:
            color = None if m.group(3) == "of unknown color" else m.group(3)
            pieces.append(Piece(m.group(2), color))
    return tuple(pieces)


def _role(name: str) -> str:
    return SOLO if name == SOLO_NAME else _ROLE_OF_NAME.get(name, name.removeprefix("Agent ").lower())


def _feedback(text: str) -> Feedback | None:
    if text.strip() == NO_FEEDBACK:
        return Feedback(mode="none")
    own, others, joint = None, [], None
    for line in text.splitlines():
        m = _STATUS.match(line.strip())
        if m:
            wrong = tuple(int(p) for p in m.group(3).split(",")) if m.group(3) else None
            if m.group(1) == "Your":
                own = RoleStatus("", m.group(2) == "solved", wrong)
            else:
                others.append(RoleStatus(_role(m.group(1).removesuffix("'s")), m.group(2) == "solved", wrong))
        elif (j := _JOINT.match(line.strip())) is not None:
            joint = j.group(1) == "solved"
    return Feedback(mode="read", own=own, others=tuple(others), joint_solved=joint)


def read_prompt(system: str, user: str) -> PromptState:
    """The state an AsymPuzl prompt shows; raises UnreadablePrompt if it is not one."""
    state = PromptState()
    me, size, turn = _ME.search(system), _SIZE.search(system), _TURN.search(user)
    if me is None or size is None or turn is None:
        raise UnreadablePrompt("not an AsymPuzl prompt written by puzzles.prompts")
    if "Each position must have the correct (shape, color) pair." not in system:
        raise UnreadablePrompt("only AsymPuzl prompts can be read back")
    state.role = _role(me.group(1))
    state.size = int(size.group(1))
    state.turn, state.max_turns = int(turn.group(1)), int(turn.group(2))
    sections = _sections(user)
    if SECTION_CLUES not in sections:
        raise UnreadablePrompt("the prompt shows no clues")
    state.clues = _pieces(sections[SECTION_CLUES])
    state.hypothesis = _pieces(sections.get(SECTION_HYPOTHESIS, ""))
    if SECTION_FEEDBACK in sections:
        state.feedback = _feedback(sections[SECTION_FEEDBACK])
    if SECTION_NOTICES in sections:
        state.notices = tuple(line[2:] for line in sections[SECTION_NOTICES].splitlines() if line.startswith("- "))
    conversation = sections.get(SECTION_CONVERSATION, NO_MESSAGES)
    if conversation != NO_MESSAGES:
        heads = list(_SPEAKER.finditer(conversation))
        for i, m in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(conversation)
            text = conversation[m.end():end].rstrip("\n")
            state.conversation.append((int(m.group(3)), _role(m.group(1)), text))
    partners = re.search(r"^Communicate with (.+) and update your hypothesis", system, re.M)
    if partners:
        state.partners = tuple(_role(n.strip()) for n in re.split(r",| and ", partners.group(1)) if n.strip())
    state.directed = '"to":' in sections.get(SECTION_FORMAT, "")
    return state


__all__ = ["PromptState", "UnreadablePrompt", "agent_name", "read_prompt", "render_prompt"]


def reply_schema(context: Any) -> dict[str, Any]:
    """The reply object as a JSON schema, for backends with structured outputs (strict mode: every
    property required, no others)."""
    attributes = _chain_attributes(context) if context.puzzle == "chain" else ("shape", "color")
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
