"""The long paper's prompt (its appendix G), word for word where the paper gives words, and reading
its own parts back.

Appendix G shows Bob's prompt at one turn of a 5-position game, the part before "# Puzzle State"
being the system prompt. Where the paper gives no words, these are ours:

- Alice's lines about what each agent sees mirror Bob's: "You see the correct order of shapes but
  not the colors." and "Agent B knows the correct shape-color mappings, but in random order."
- Alice's clues say "Position 1: the square is of unknown color." With distractors in them, the
  clues are numbered on past N ("Position 1" to "Position N + D"), as the paper numbers Bob's
  shuffled clues: a clue's number is its place in the list. The paper's short version says only
  that the agents are told the true size N, which the system prompt does.
- Feedback: the paper shows the both mode ("Agent A's part of the puzzle is solved and Agent B's
  part of the puzzle is unsolved."); own and partner say one of those clauses; the detailed modes
  add "(wrong positions: 2, 4)" to an unsolved clause; joint says "The puzzle is solved." or "The
  puzzle is unsolved."; with no feedback the section is left out.
- An empty conversation reads "No messages yet." Notices about the last turn (a reply that could not
  be read, rejected actions, a cut message), the notes of scratchpad memory and a directed
  message's "to" belong to the engine's extensions and read as in the guided prompt.
- The example reply is lost from the paper's text; ours names no shape or color of the game, so a
  reply that copies it moves nothing: {"message": "...", "actions": [{"replace": 1, "by":
  {"shape": "<shape>", "color": "<color>"}}]}.
- The paper's text comes from a PDF: a section's header and body are on consecutive lines, one
  clue per line, sections apart by a blank line; "shape-color" is written with a hyphen.
- The single-agent check: "You are the only agent.", what it sees in the paper's words, "You have
  one attempt: write your whole solution with actions.", its own status as "Your part of the
  puzzle ...", and a message that is an empty string.
"""

from __future__ import annotations

import re
from typing import Any

from ..turn import ChatLine, TurnContext
from ..positions.prompt import (
    NO_MESSAGES, SECTION_CLUES, SECTION_CONVERSATION, SECTION_FEEDBACK, SECTION_FORMAT, SECTION_HYPOTHESIS,
    SECTION_NOTES, SECTION_NOTICES, agent_name, extension_fields, names, role_of,
)
from ..positions.rules import Feedback, RoleStatus
from .rules import ALICE, BOB, SOLO, AsymView, render_pieces

HEADER = "# Puzzle State"
SOLO_NAME = "the only agent"
SEES = {
    ALICE: "You see the correct order of shapes but not the colors.",
    BOB: "You see the correct shape-color mappings, but in random order.",
}
KNOWS = {
    ALICE: "knows the correct order of shapes but not the colors.",
    BOB: "knows the correct shape-color mappings, but in random order.",
}
ACTION = '{"replace": <position>, "by": {"shape": <shape>, "color": <color>}}'
EXAMPLE = '{"replace": 1, "by": {"shape": "<shape>", "color": "<color>"}}'
SOLO_PAIRS = "The correct shape-color mappings, in random order:"


def system_prompt(context: TurnContext) -> str:
    task = (
        f"Your goal is to solve a symbolic puzzle with {context.view.size} positions.\n\n"
        "Each position must have the correct (shape, color) pair."
    )
    if context.role == SOLO:
        return (
            f"You are {SOLO_NAME}.\n\n{task}\n\n- {SEES[ALICE]}\n- You also see the correct shape-color mappings, "
            "but in random order.\n\nYou have one attempt: write your whole solution with actions."
        )
    sees = [f"- {SEES[context.role]}"] + [f"- {agent_name(p)} {KNOWS[p]}" for p in context.partners if p in KNOWS]
    return (
        f"You are {agent_name(context.role)}.\n\n{task}\n\n" + "\n".join(sees)
        + f"\n\nCommunicate with {names(context.partners)} and update your hypothesis until the puzzle is solved."
    )


def clues_text(role: str, view: AsymView) -> str:
    if role != SOLO:
        return render_pieces(view.clues)
    shapes = tuple(p for p in view.clues if p.color is None)
    pairs = tuple(p for p in view.clues if p.color is not None)
    return f"{render_pieces(shapes)}\n{SOLO_PAIRS}\n{render_pieces(pairs)}"


def _subject(role: str, me: str) -> str:
    return "Your" if role == me == SOLO else f"{agent_name(role)}'s"


def feedback_text(feedback: Any, me: str) -> str | None:
    """The feedback as the paper words it, or None when there is none to give."""
    if not isinstance(feedback, Feedback):
        return None
    statuses = ([feedback.own] if feedback.own is not None else []) + list(feedback.others)
    statuses.sort(key=lambda s: agent_name(s.role))  # Agent A first, as in the paper
    clauses = []
    for status in statuses:
        clause = f"{_subject(status.role, me)} part of the puzzle is {'solved' if status.solved else 'unsolved'}"
        if status.wrong:
            clause += f" (wrong positions: {', '.join(str(p) for p in status.wrong)})"
        clauses.append(clause)
    sentences = [" and ".join(clauses) + "."] if clauses else []
    if feedback.joint_solved is not None:
        sentences.append(f"The puzzle is {'solved' if feedback.joint_solved else 'unsolved'}.")
    return " ".join(sentences) or None


def _speaker(role: str) -> str:
    return agent_name(role).removeprefix("Agent ")


def conversation_text(context: TurnContext) -> str:
    lines = [f"{_speaker(line.sender)}: {line.text}" for line in context.conversation]
    return "\n".join(lines) if lines else NO_MESSAGES


def output_format(context: TurnContext) -> str:
    if context.role == SOLO:
        fields = ['- "message": An empty string (there is nobody to talk to).', '- "actions": A list of actions to take.']
    else:
        fields = [
            '- "message": What you want to tell and ask to the other agent (the only thing the other agent will receive).',
            '- "actions": A list of actions to take (the other agent will not see your actions).',
        ]
    fields += extension_fields(context)
    to = ', "to": "Agent B"' if context.directed else ""
    return (
        f"{SECTION_FORMAT}\nEach action must follow this format:\n```\n{ACTION}\n```\n"
        "Your answer MUST END WITH a **valid JSON object** and include the following fields:\n" + "\n".join(fields)
        + f'\n\nExample:\n```\n{{"message": "...", "actions": [{EXAMPLE}]{to}}}\n```'
    )


def user_prompt(context: TurnContext, hypothesis: str) -> str:
    parts = [HEADER]
    if context.reinjected:
        parts.append(f"{SECTION_CLUES}\n{clues_text(context.role, context.view)}")
    else:
        parts.append(f"{SECTION_NOTES}\n{context.scratchpad or '(none)'}")
    parts.append(f"{SECTION_HYPOTHESIS}\n{hypothesis}")
    feedback = feedback_text(context.feedback, context.role)
    if feedback is not None:
        parts.append(f"{SECTION_FEEDBACK}\n{feedback}")
    if context.notices:
        parts.append(SECTION_NOTICES + "\n" + "\n".join(f"- {n}" for n in context.notices))
    if context.role != SOLO:
        parts.append(f"{SECTION_CONVERSATION}\n{conversation_text(context)}")
    parts.append(output_format(context))
    return "\n\n".join(parts)


# ---- Reading the paper's own parts back ----

_CLAUSE = re.compile(r"(?:(Agent [A-Z])'s|Your) part of the puzzle is (solved|unsolved)(?: \(wrong positions: ([\d, ]+)\))?")
_JOINT = re.compile(r"The puzzle is (solved|unsolved)\.")
_LINE = re.compile(r"^([A-Z]): ?", re.M)


def read_feedback(text: str, me: str) -> Feedback:
    """Feedback read back from ``feedback_text`` for ``me``: mode "read" (or "none" if it says nothing)."""
    own, others = None, []
    for name, solved, wrong in _CLAUSE.findall(text):
        role = role_of(name) if name else me
        status = RoleStatus(role, solved == "solved", tuple(int(p) for p in wrong.split(",")) if wrong else None)
        if role == me:
            own = status
        else:
            others.append(status)
    joint = _JOINT.search(text)
    if own is None and not others and joint is None:
        return Feedback(mode="none")
    solved = None if joint is None else joint.group(1) == "solved"
    return Feedback(mode="read", own=own, others=tuple(others), joint_solved=solved)


def read_conversation(found: dict[str, str]) -> tuple[ChatLine, ...]:
    """The conversation's lines; the paper's prompt shows no turns, so each line's turn is 0."""
    text = found.get(SECTION_CONVERSATION, NO_MESSAGES)
    if text == NO_MESSAGES:
        return ()
    heads = list(_LINE.finditer(text))
    ends = [m.start() for m in heads[1:]] + [len(text)]
    return tuple(
        ChatLine(0, role_of(f"Agent {m.group(1)}"), text[m.end(): end].rstrip("\n")) for m, end in zip(heads, ends)
    )
