"""Traveling Adventurers prompts: the system prompt (story, inputs, outputs, rules, a worked example,
the actual house) and each turn's user prompt of bracketed fields, per agent variant (spec
``tsp.md`` §2.2 and §4; the wording is ours, the structure and every rule the reference's).

These agents keep their whole chat (``chat_memory``): the system prompt is sent once and every turn
adds its user prompt, so [Observation] holds only the partner's newest message. Choices where the
reference is silent or slipped: the room counts name the actual house (``prompt_fidelity`` keeps
the reference's "4 rooms" / "6 rooms" and its other slips); the worked example is the reference's
(the paper's board 1, in the prompt's own world); [Rejected] lines appear only with ``notices``.
"""

from __future__ import annotations

import json

from ..turn import TurnContext
from .board import DISPLAY_ORDER, LIGHT, ROOM_NAMES, paper_board
from .rules import STATE_VARIANTS, TspView

WORLDS = {"light": ("light", "ghost"), "ghost": ("ghost", "light")}
START = "<START>"
WRONG_FORMAT = "<USER MESSAGE IN WRONG FORMAT>"
NOTICES_LINE = "After a turn in which some of your actions could not be carried out, [Rejected] says which and why."
DRAFT_VARIANTS = ("baseline", "grounding")
EXAMPLE_PATH = ["L", "E", "A", "B", "K", "C", "L"]


def fields(variant: str) -> tuple[str, ...]:
    """The bracketed input fields of a variant, in prompt order."""
    names = ["World-state-own"]
    if variant != "baseline":
        names.append("World-state-user")
    if variant in DRAFT_VARIANTS:
        names.append("History")
    else:
        names += ["Visited", "Remaining"]
    if variant == "problem_solving":
        names.append("IBP")
    return (*names, "Observation")


FIELD_TEXT = {
    "World-state-own": "your own world: the coins in every hallway, as a Python list of [room, room, coins]",
    "World-state-user": "what your partner has told you so far about the coins in its world, in the same form",
    "History": "the actions you have taken so far",
    "Visited": "the rooms you and your partner have agreed on, in order",
    "Remaining": "the rooms you still have to visit (the living room counts until you return to it)",
    "IBP": "the best path found so far from everything you know, starting with the rooms in [Visited]",
    "Observation": "the message your partner sent you",
}


def _story(view: TspView) -> str:
    mine, other = WORLDS[view.role]
    n = len(view.rooms)
    house, tour = n, n
    if view.fidelity:  # the reference's slips (spec §4.4)
        house, tour = (4 if view.variant in DRAFT_VARIANTS else 6), 4
        if view.variant == "baseline" and view.role == LIGHT:
            other = "light"
    return (
        "You are playing a game with a partner in which each of you controls a magical character. An evil wizard "
        f"has split the two of you into two dimensions of the same house: you are in the {mine} world and your "
        f"partner is in the {other} world. You can talk to each other only in writing. The house has {house} rooms, "
        "and every two rooms are joined by a hallway that holds coins. To break the curse and escape, you must "
        f"visit each of the {tour} rooms exactly once and come back to the room where you started. You must travel "
        f"together and enter the same rooms at the same time. You collect {mine} coins and your partner collects "
        f"{WORLDS[view.role][1]} coins, but because of the curse the coins only appear when you both walk through "
        "the same hallway at the same time, so coordinate your paths. Your score is the sum of the coins you both "
        "collect, and each of you is rewarded with that whole sum: work together to make it as large as you can. "
        "Chat with your partner to decide on the best way to proceed."
    )


def _outputs(view: TspView) -> str:
    if view.variant in DRAFT_VARIANTS:
        thought = (
            "- [Thought-DRAFT]: try to find the best complete path with what you know; if you find one, also "
            "generate the action solve(x).\n"
            "- [Thought-MISSING]: only if the draft failed: what you are missing to find the best path."
        )
    else:
        thought = (
            "- [Thought]: find the best path with what you know (your own coins in [World-state-own], your "
            "partner's known coins in [World-state-user]), visiting every room once and returning to the start "
            "(check against [Remaining]). Always start with this."
        )
    length = " (of length 1)" if view.fidelity else ""
    actions = [
        "suggest(x): you propose the partial or complete path x",
        "agree-inner(x): you agree with the path x",
        "agree-outer(x): your partner agreed with the path x, as its message in [Observation] says",
        "reject(x): the path x was rejected, by you or by your partner",
        "visit(x): you and your partner agree to go to room x next; x is one room letter",
        "ask(x): what you want to know from your partner; x is a string",
        "inform(x): what you tell your partner about your own world; x is a string",
        f"end(x): you are ready to end the game and submit the final path x, a Python list of room letters{length} "
        "from the living room back to it; you must generate it to end the game",
    ]
    if view.variant in DRAFT_VARIANTS:
        actions.append("solve(x): your [Thought-DRAFT] found the complete path x")
    rules = [
        "suggest(x) must be accompanied by agree-inner(x)",
        "never generate agree-inner(x) for a path x you have already agreed on",
        "generate visit(x) only when you agree with your partner's suggestion, or your partner agreed with "
        "yours (agree-inner together with agree-outer)",
    ]
    if view.variant in STATE_VARIANTS:
        rules.append("never generate visit(x) for a room x that is in [Visited]")
    if view.variant == "problem_solving":
        rules.append("base ask(x) and suggest(x) on the best path given in [IBP]")
        rules.append("base inform(x) on [World-state-own], or on [IBP] when asked for the best next step")
    else:
        rules.append("base inform(x) on the coins in [World-state-own]")
    listed = "\n".join(f"  * {a}" for a in actions)
    ruled = "\n".join(f"  - {r}" for r in rules)
    return (
        "Your reply is made of parts, each starting with its flag in square brackets:\n"
        f"{thought}\n"
        "- [Action]: the actions you take, separated by commas; x is a Python list of room letters in the order "
        f"they are visited unless said otherwise:\n{listed}\n"
        f"  Rules for the actions:\n{ruled}\n"
        "- [Message]: every reply ends with a message to your partner, in line with your thoughts and actions.\n"
        "Make sure to ALWAYS format the output in this exact way."
    )


def house_text(rooms: tuple[str, ...], weights, world: str) -> str:
    listed = "\n".join(f"- {ROOM_NAMES[r]} ({r})" for r in DISPLAY_ORDER if r in rooms)
    hallways = "\n".join(f"- hallway between {a} and {b}: {w} {world} coins" for a, b, w in weights)
    return (
        f"The house has these rooms:\n{listed}\n"
        f"All rooms are joined by hallways; the coins in the {world} world are:\n{hallways}"
    )


def _example(view: TspView) -> str:
    """The reference's worked example: board 1 in this prompt's own world, played node by node."""
    mine, _ = WORLDS[view.role]
    board = paper_board(1)
    weights = board.weights[view.role]
    own = json.dumps([list(edge) for edge in weights])
    draft = view.variant in DRAFT_VARIANTS
    flag = "[Thought-DRAFT]" if draft else "[Thought]"

    def shown(visited: list[str], observation: str, history: list[str], known: str) -> str:
        remaining = [r for r in board.rooms if r not in visited[1:]]
        values = {
            "World-state-own": own, "World-state-user": known, "History": json.dumps(history),
            "Visited": json.dumps(visited), "Remaining": json.dumps(remaining),
            "IBP": json.dumps(EXAMPLE_PATH), "Observation": observation,
        }
        return "\n".join(f"[{name}]: {values[name]}" for name in fields(view.variant))

    first_hop = board.weight(view.role, "L", "E")
    turns = [
        shown(["L"], "hi there! where should we go first?", [], "[]"),
        f"{flag}: We are in the living room. Going to the empty room (E) gives me {first_hop} {mine} coins, "
        "my best first hallway.\n"
        '[Action]: suggest(["L", "E"]), agree-inner(["L", "E"]), ask("your coins from L to each room")\n'
        f"[Message]: I get {first_hop} coins going from the living room to the empty room. How many coins do you "
        "get from the living room to each room?",
        shown(["L"], "Going to E works for me, I get 5 there. Let's go!", ['suggest(["L", "E"]), agree-inner(["L", "E"])'],
              '[["L", "E", 5]]'),
        f"{flag}: My partner agreed to go to E.\n"
        '[Action]: agree-outer(["L", "E"]), visit("E")\n'
        "[Message]: Great, we are in the empty room. From here, what are your coins to the other rooms?",
        shown(["L", "E", "A", "B", "K", "C"], "I think we should go from C to K instead and end there.",
              ["..."], '[["L", "E", 5], ["E", "A", 3], ["A", "B", 6], ["B", "K", 2], ["K", "C", 3], ["L", "C", 6]]'),
        f"{flag}: Going back through K would visit it twice; the only way home is from C to the living room.\n"
        f'[Action]: reject(["C", "K"]), end({json.dumps(EXAMPLE_PATH)})\n'
        "[Message]: We have already been in the kitchen, so let's go home from here: "
        + " -> ".join(EXAMPLE_PATH) + ".",
    ]
    labelled = [("Input" if i % 2 == 0 else "Output") + ":\n" + turn for i, turn in enumerate(turns)]
    return (
        "Here is an example house:\n" + house_text(board.rooms, weights, mine) + "\n\n"
        "And an example conversation in it:\n\n" + "\n\n".join(labelled)
    )


def system_prompt(view: TspView) -> str:
    mine, _ = WORLDS[view.role]
    inputs = "\n".join(f"[{name}] - {FIELD_TEXT[name]}" for name in fields(view.variant))
    parts = [
        _story(view),
        f"Every turn you get an input with these fields:\n{inputs}",
        _outputs(view),
        _example(view),
        "Now the actual game.\n" + house_text(view.rooms, view.weights, mine) + "\n"
        "You both start in the living room. Remember: to escape you must both follow the same path, enter every "
        "room exactly once and return to the living room. The more coins you collect together, the bigger the "
        "reward for both of you.",
    ]
    if view.variant == "baseline" and view.role == LIGHT:  # the reference's baseline light prompt alone
        parts.append("You have a maximum of 200 tokens per Message. To end the game, generate end(x) with the final path.")
    if view.notices:
        parts.append(NOTICES_LINE)
    return "\n\n".join(parts)


def observation(context: TurnContext) -> str:
    """The partner's messages since this agent's last turn; the reference's markers otherwise."""
    first = context.role == LIGHT
    since = context.turn - 1 if first else context.turn
    new = [line.text for line in context.conversation if line.sender != context.role and line.turn == since]
    if new:
        return "\n".join(new)
    return START if first and context.turn == 1 else WRONG_FORMAT


def user_prompt(context: TurnContext) -> str:
    view: TspView = context.view
    derived = context.derived
    known = derived.partner if derived is not None else ()
    values = {
        "World-state-own": json.dumps([list(edge) for edge in view.weights]),
        "World-state-user": json.dumps([list(edge) for edge in known]),
        "History": json.dumps(list(view.history)),
        "Visited": json.dumps(list(view.visited)),
        "Remaining": json.dumps(list(view.remaining)),
        "IBP": json.dumps(list(derived.ibp)) if derived is not None and derived.ibp else "[]",
        "Observation": observation(context),
    }
    lines = [f"[{name}]: {values[name]}" for name in fields(view.variant)]
    if view.notices and context.notices:
        lines.append("[Rejected]: " + " ".join(context.notices))
    return "\n".join(lines)
