"""AsymPuzl's scripted policies: offline stand-ins for models, with the behaviours the papers report.

They talk only through text. What a partner knows is learned by parsing its messages, never by
reading its state; what an agent does is written as a reply that ends with the JSON object and is
parsed like a model's. Each policy keeps a private memory of what it has read (like a scratchpad),
and draws any randomness from its own seeded generator, so a seed gives the same transcript.

Message phrases the policies write and read (lower-cased before matching):
- ``my shapes in order: square, circle, star.``   Alice's clue shapes, in clue order
- ``position 3 is the star``                       one exact position
- ``what color is the star?``                      a question
- ``the star is blue``                             a shape-color pair
- ``these are all my pairs:`` / ``i have told you all my pairs``   the sender has no other pairs
- ``there is no star``                             the sender has no such shape

Strategies:
- ``share_everything``: every message holds the agent's whole view. Solves any size in 2 turns.
- ``one_piece``: one piece per message. Alice asks about her shapes one at a time; Bob answers the
  question asked, or volunteers one pair. Needs about N + D + 1 turns.
- ``ignore``: shares its view but never reads its partner and never acts.
- ``noisy``: shares everything, but each write is wrong with probability 0.3. It rewrites the
  positions feedback says are wrong; with only a solved/unsolved signal it rewrites everything
  (over-correction); with no feedback it never knows.
"""

from __future__ import annotations

import random
import re

from ..turn import TurnContext
from ..policy import Answer, ScriptedFactory
from ..positions.rules import Feedback, positions_to_rewrite
from ..positions.vocab import COLORS
from .prompt import format_reply
from .rules import ALICE, SOLO, Piece, Replace

_SHAPE_LIST = re.compile(r"my shapes in order: ([a-z, ]+)")
_POSITION = re.compile(r"\bposition (\d+) is the ([a-z]+)\b")
_QUESTION = re.compile(r"\bwhat color is the ([a-z]+)\b")
_PAIR = re.compile(r"\bthe ([a-z]+) is ([a-z]+)\b")
_ALL_PAIRS = "all my pairs"
_ABSENT = re.compile(r"\bthere is no ([a-z]+)\b")

NOISE_RATE = 0.3


class _Memory:
    """What an agent has learned from its partners' messages so far."""

    __slots__ = ("colors", "absent", "complete", "order", "placed", "questions")

    def __init__(self) -> None:
        self.colors: dict[str, str] = {}  # shape -> color (Alice)
        self.absent: frozenset[str] = frozenset()  # shapes the partner said it does not have (Alice); the empty one is shared
        self.complete = False  # the partner said it listed all its pairs (Alice)
        self.order: list[str] = []  # the partner's shapes in clue order (Bob)
        self.placed: dict[int, str] = {}  # exact position -> shape (Bob)
        self.questions: list[str] = []  # shapes asked about in the partner's newest message (Bob)

    def read(self, context: TurnContext) -> None:
        """Read every partner line shown, oldest first. Reading a line again changes nothing (a
        later line says the last word), so no turn numbers are needed: the paper's prompt shows none."""
        texts = [line.text.lower() for line in context.conversation if line.sender != context.role]
        for text in texts:
            for shape, color in _PAIR.findall(text):
                self.colors[shape] = color
            absent = _ABSENT.findall(text)
            if absent:
                self.absent = self.absent.union(absent)
            if _ALL_PAIRS in text:
                self.complete = True
            listed = _SHAPE_LIST.search(text)
            if listed:
                self.order = [w.strip() for w in listed.group(1).split(",") if w.strip()]
            for position, shape in _POSITION.findall(text):
                self.placed[int(position)] = shape
        self.questions = _QUESTION.findall(texts[-1]) if texts else []


def alice_target(context: TurnContext, memory: _Memory) -> dict[int, Piece]:
    """Alice's best known piece per position: her shapes minus known distractors, with known colors."""
    shapes = [p.shape for p in context.view.clues]
    if memory.complete:
        real = [s for s in shapes if s in memory.colors]
    else:
        real = [s for s in shapes if s not in memory.absent]
    return {
        position: Piece(shape, memory.colors[shape])
        for position, shape in enumerate(real[: context.view.size], start=1)
        if shape in memory.colors
    }


def solo_target(context: TurnContext, memory: _Memory) -> dict[int, Piece]:
    """With both views: Alice's shapes that have a pair, in her order, with the pair's color."""
    colors = {p.shape: p.color for p in context.view.clues if p.color is not None}
    shapes = [p.shape for p in context.view.clues if p.color is None and p.shape in colors]
    return {i: Piece(s, colors[s]) for i, s in enumerate(shapes[: context.view.size], start=1)}


def bob_target(context: TurnContext, memory: _Memory) -> dict[int, Piece]:
    """Bob's best known piece per position: from Alice's ordered list and her exact placements."""
    mine = {p.shape: p for p in context.view.clues}
    target: dict[int, Piece] = {}
    ordered = [s for s in memory.order if s in mine]
    for position, shape in enumerate(ordered[: context.view.size], start=1):
        target[position] = mine[shape]
    for position, shape in memory.placed.items():
        if shape in mine and 1 <= position <= context.view.size:
            target[position] = mine[shape]
    return target


def target_for(context: TurnContext, memory: _Memory) -> dict[int, Piece]:
    if context.role == SOLO:
        return solo_target(context, memory)
    return (alice_target if context.role == ALICE else bob_target)(context, memory)


def _changes(context: TurnContext, target: dict[int, Piece], positions) -> list[Replace]:
    hypothesis = context.view.hypothesis
    return [
        Replace(p, target[p].shape, target[p].color)  # type: ignore[arg-type]  # a target's colors are known
        for p in sorted(positions)
        if hypothesis[p - 1] != target[p]
    ]


def share_message(context: TurnContext) -> str:
    if context.role == SOLO:
        return ""
    if context.role == ALICE:
        shapes = ", ".join(p.shape for p in context.view.clues)
        text = f"The puzzle has {context.view.size} positions. My shapes in order: {shapes}."
        if len(context.view.clues) > context.view.size:
            text += " Some of them may not be part of the puzzle."
        return text + " Please tell me the color of each of your shapes."
    pairs = "; ".join(f"the {p.shape} is {p.color}" for p in context.view.clues)
    return f"These are all my pairs: {pairs}. Please tell me the position of each shape."


class ShareEverything:
    """Sends its whole view every turn and applies everything it learns."""

    def __init__(self, role: str, rng: random.Random) -> None:
        self.memory = _Memory()

    async def reply(self, context: TurnContext) -> Answer:
        self.memory.read(context)
        target = target_for(context, self.memory)
        actions = _changes(context, target, target)
        return Answer(format_reply("I will share everything I know.", share_message(context), actions))


class OnePiece:
    """One piece of information per message."""

    def __init__(self, role: str, rng: random.Random) -> None:
        self.memory = _Memory()
        self.volunteered: set[str] = set()  # Bob: pairs already offered
        self.told: set[int] = set()  # Alice: positions already stated

    async def reply(self, context: TurnContext) -> Answer:
        memory = self.memory
        memory.read(context)
        target = target_for(context, memory)
        if context.role == ALICE:
            message = self._alice_question(context)
        elif context.role == SOLO:
            message = ""
        else:
            message = self._bob_answer(context, target)
        actions = _changes(context, target, target)
        return Answer(format_reply("One thing at a time.", message, actions))

    def _alice_question(self, context: TurnContext) -> str:
        """Ask about the first shape whose color is unknown; once all are known, tell Bob the
        positions he has not been told yet, one per message."""
        memory = self.memory
        real = [
            p.shape for p in context.view.clues
            if p.shape not in memory.absent and not (memory.complete and p.shape not in memory.colors)
        ]
        for position, shape in enumerate(real, start=1):
            if shape not in memory.colors:
                self.told.add(position)
                return f"Position {position} is the {shape}. What color is the {shape}?"
        for position, shape in enumerate(real[: context.view.size], start=1):
            if position not in self.told:
                self.told.add(position)
                return f"Position {position} is the {shape}."
        return "I have all my colors."

    def _bob_answer(self, context: TurnContext, target: dict[int, Piece]) -> str:
        mine = {p.shape: p for p in context.view.clues}
        for shape in self.memory.questions:
            if shape in mine:
                return f"The {shape} is {mine[shape].color}."
            return f"There is no {shape} in my pairs."
        ordered = [target[p] for p in sorted(target)] + list(context.view.clues)
        for piece in ordered:
            if piece.shape not in self.volunteered:
                self.volunteered.add(piece.shape)
                return f"The {piece.shape} is {piece.color}."
        return "I have told you all my pairs."


class IgnorePartner:
    """Shares its own view but never reads its partner and never changes its hypothesis."""

    def __init__(self, role: str, rng: random.Random) -> None:
        pass

    async def reply(self, context: TurnContext) -> Answer:
        return Answer(format_reply("I will go by my own clues.", share_message(context), []))


class Noisy:
    """Shares everything; writes are wrong with probability ``noise``; acts on feedback."""

    def __init__(self, role: str, rng: random.Random, noise: float = NOISE_RATE) -> None:
        self.rng = rng
        self.noise = noise
        self.memory = _Memory()
        self.intended: dict[int, Piece] = {}  # what it believes it wrote

    def _to_rewrite(self, feedback: Feedback | None, target: dict) -> set[int]:
        return positions_to_rewrite(feedback, bool(self.intended), target)

    def _garble(self, piece: Piece, context: TurnContext) -> Piece:
        if context.role in (ALICE, SOLO):
            colors = [c for c in COLORS if c != piece.color]
            return Piece(piece.shape, self.rng.choice(colors))
        others = [p for p in context.view.clues if p != piece]
        return self.rng.choice(others) if others else piece

    async def reply(self, context: TurnContext) -> Answer:
        self.memory.read(context)
        target = target_for(context, self.memory)
        positions = {p for p, piece in target.items() if self.intended.get(p) != piece}
        positions |= self._to_rewrite(context.feedback, target) & set(target)
        actions = []
        for p in sorted(positions):
            piece = target[p]
            written = self._garble(piece, context) if self.rng.random() < self.noise else piece
            actions.append(Replace(p, written.shape, written.color))  # type: ignore[arg-type]  # a target's colors are known
            self.intended[p] = piece
        return Answer(format_reply("Let me fix my hypothesis.", share_message(context), actions))


SCRIPTED: dict[str, ScriptedFactory] = {
    "share_everything": ShareEverything,
    "one_piece": OnePiece,
    "ignore": IgnorePartner,
    "noisy": Noisy,
}
