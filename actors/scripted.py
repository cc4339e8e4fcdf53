"""Scripted AsymPuzl policies: offline stand-ins for models, with the behaviours the papers report.

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
from collections.abc import Callable

import msgspec

from puzzles.asympuzl import ALICE, SOLO, Feedback, Piece, Replace
from puzzles.replies import format_reply
from puzzles.vocab import COLORS

from .agent import Policy, TurnContext

_SHAPE_LIST = re.compile(r"my shapes in order: ([a-z, ]+)")
_POSITION = re.compile(r"\bposition (\d+) is the ([a-z]+)\b")
_QUESTION = re.compile(r"\bwhat color is the ([a-z]+)\b")
_PAIR = re.compile(r"\bthe ([a-z]+) is ([a-z]+)\b")
_ALL_PAIRS = "all my pairs"
_ABSENT = re.compile(r"\bthere is no ([a-z]+)\b")

NOISE_RATE = 0.3


def _partner_texts(context: TurnContext, since_turn: int) -> list[str]:
    """The partner lines visible now that are newer than ``since_turn`` (lower-cased)."""
    return [
        line.text.lower()
        for line in context.conversation
        if line.sender != context.role and line.turn > since_turn
    ]


class _Memory:
    """What an agent has learned from its partners' messages so far."""

    def __init__(self) -> None:
        self.read_up_to = 0  # last turn whose partner messages were read
        self.colors: dict[str, str] = {}  # shape -> color (Alice)
        self.absent: set[str] = set()  # shapes the partner said it does not have (Alice)
        self.complete = False  # the partner said it listed all its pairs (Alice)
        self.order: list[str] = []  # the partner's shapes in clue order (Bob)
        self.placed: dict[int, str] = {}  # exact position -> shape (Bob)
        self.questions: list[str] = []  # shapes asked about in the newest message (Bob)

    def read(self, context: TurnContext) -> None:
        texts = _partner_texts(context, self.read_up_to)
        if not texts:
            self.questions = []
            return
        self.read_up_to = max(line.turn for line in context.conversation if line.sender != context.role)
        for text in texts:
            for shape, color in _PAIR.findall(text):
                self.colors[shape] = color
            self.absent.update(_ABSENT.findall(text))
            if _ALL_PAIRS in text:
                self.complete = True
            listed = _SHAPE_LIST.search(text)
            if listed:
                self.order = [w.strip() for w in listed.group(1).split(",") if w.strip()]
            for position, shape in _POSITION.findall(text):
                self.placed[int(position)] = shape
        self.questions = _QUESTION.findall(texts[-1])


def alice_target(context: TurnContext, memory: _Memory) -> dict[int, Piece]:
    """Alice's best known piece per position: her shapes minus known distractors, with known colors."""
    shapes = [p.shape for p in context.clues]
    if memory.complete:
        real = [s for s in shapes if s in memory.colors]
    else:
        real = [s for s in shapes if s not in memory.absent]
    return {
        position: Piece(shape, memory.colors[shape])
        for position, shape in enumerate(real[: context.size], start=1)
        if shape in memory.colors
    }


def solo_target(context: TurnContext, memory: _Memory) -> dict[int, Piece]:
    """With both views: Alice's shapes that have a pair, in her order, with the pair's color."""
    colors = {p.shape: p.color for p in context.clues if p.color is not None}
    shapes = [p.shape for p in context.clues if p.color is None and p.shape in colors]
    return {i: Piece(s, colors[s]) for i, s in enumerate(shapes[: context.size], start=1)}


def bob_target(context: TurnContext, memory: _Memory) -> dict[int, Piece]:
    """Bob's best known piece per position: from Alice's ordered list and her exact placements."""
    mine = {p.shape: p for p in context.clues}
    target: dict[int, Piece] = {}
    ordered = [s for s in memory.order if s in mine]
    for position, shape in enumerate(ordered[: context.size], start=1):
        target[position] = mine[shape]
    for position, shape in memory.placed.items():
        if shape in mine and 1 <= position <= context.size:
            target[position] = mine[shape]
    return target


def target_for(context: TurnContext, memory: _Memory) -> dict[int, Piece]:
    if context.role == SOLO:
        return solo_target(context, memory)
    return (alice_target if context.role == ALICE else bob_target)(context, memory)


def _changes(context: TurnContext, target: dict[int, Piece], positions) -> list[Replace]:
    hypothesis = context.hypothesis
    return [
        Replace(p, target[p].shape, target[p].color)
        for p in sorted(positions)
        if hypothesis[p - 1] != target[p]
    ]


def remember_clues(policy: object, context: TurnContext) -> TurnContext:
    """Scripted agents note their clues when first shown them; where the clues are not re-shown
    (scratchpad memory) they use that note."""
    if context.clues is not None:
        policy._clues = context.clues  # type: ignore[attr-defined]
        return context
    return msgspec.structs.replace(context, clues=getattr(policy, "_clues", ()))


def share_message(context: TurnContext) -> str:
    if context.role == SOLO:
        return ""
    if context.role == ALICE:
        shapes = ", ".join(p.shape for p in context.clues)
        text = f"The puzzle has {context.size} positions. My shapes in order: {shapes}."
        if len(context.clues) > context.size:
            text += " Some of them may not be part of the puzzle."
        return text + " Please tell me the color of each of your shapes."
    pairs = "; ".join(f"the {p.shape} is {p.color}" for p in context.clues)
    return f"These are all my pairs: {pairs}. Please tell me the position of each shape."


class ShareEverything:
    """Sends its whole view every turn and applies everything it learns."""

    def __init__(self, role: str, rng: random.Random) -> None:
        self.memory = _Memory()
        self.chain = ChainMemory()

    async def reply(self, context: TurnContext) -> str:
        context = remember_clues(self, context)
        if context.puzzle == "chain":
            return chain_reply(context, self.chain, listen=True, act=True)
        self.memory.read(context)
        target = target_for(context, self.memory)
        actions = _changes(context, target, target)
        return format_reply("I will share everything I know.", share_message(context), actions)


class OnePiece:
    """One piece of information per message."""

    def __init__(self, role: str, rng: random.Random) -> None:
        self.memory = _Memory()
        self.volunteered: set[str] = set()  # Bob: pairs already offered
        self.told: set[int] = set()  # Alice: positions already stated
        self.chain = ChainMemory()
        self.sent_facts: set = set()  # chain puzzle: facts already told

    async def reply(self, context: TurnContext) -> str:
        context = remember_clues(self, context)
        if context.puzzle == "chain":
            return chain_reply(context, self.chain, listen=True, act=True, one_fact=self.sent_facts)
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
        return format_reply("One thing at a time.", message, actions)

    def _alice_question(self, context: TurnContext) -> str:
        """Ask about the first shape whose color is unknown; once all are known, tell Bob the
        positions he has not been told yet, one per message."""
        memory = self.memory
        real = [
            p.shape for p in context.clues
            if p.shape not in memory.absent and not (memory.complete and p.shape not in memory.colors)
        ]
        for position, shape in enumerate(real, start=1):
            if shape not in memory.colors:
                self.told.add(position)
                return f"Position {position} is the {shape}. What color is the {shape}?"
        for position, shape in enumerate(real[: context.size], start=1):
            if position not in self.told:
                self.told.add(position)
                return f"Position {position} is the {shape}."
        return "I have all my colors."

    def _bob_answer(self, context: TurnContext, target: dict[int, Piece]) -> str:
        mine = {p.shape: p for p in context.clues}
        for shape in self.memory.questions:
            if shape in mine:
                return f"The {shape} is {mine[shape].color}."
            return f"There is no {shape} in my pairs."
        ordered = [target[p] for p in sorted(target)] + list(context.clues)
        for piece in ordered:
            if piece.shape not in self.volunteered:
                self.volunteered.add(piece.shape)
                return f"The {piece.shape} is {piece.color}."
        return "I have told you all my pairs."


class IgnorePartner:
    """Shares its own view but never reads its partner and never changes its hypothesis."""

    def __init__(self, role: str, rng: random.Random) -> None:
        self.chain = ChainMemory()

    async def reply(self, context: TurnContext) -> str:
        context = remember_clues(self, context)
        if context.puzzle == "chain":
            return chain_reply(context, self.chain, listen=False, act=False)
        return format_reply("I will go by my own clues.", share_message(context), [])


class Noisy:
    """Shares everything; writes are wrong with probability ``noise``; acts on feedback."""

    def __init__(self, role: str, rng: random.Random, noise: float = NOISE_RATE) -> None:
        self.rng = rng
        self.noise = noise
        self.memory = _Memory()
        self.intended: dict[int, Piece] = {}  # what it believes it wrote
        self.chain = ChainMemory()

    def _to_rewrite(self, feedback: Feedback, target: dict[int, Piece]) -> set[int]:
        if not self.intended:
            return set()
        own = feedback.own
        if own is not None:
            if own.solved:
                return set()
            if own.wrong is not None:
                return set(own.wrong)
            return set(target)
        if feedback.joint_solved is False:
            return set(target)
        return set()

    def _garble(self, piece: Piece, context: TurnContext) -> Piece:
        if context.role in (ALICE, SOLO):
            others = [c for c in COLORS if c != piece.color]
            return Piece(piece.shape, self.rng.choice(others))
        others = [p for p in context.clues if p != piece]
        return self.rng.choice(others) if others else piece

    def _chain_writes(self, context: TurnContext):
        from puzzles.chain import VOCABULARIES, ChainReplace

        attributes = _chain_attributes(context)

        def writes(target: dict[int, tuple[str, ...]]) -> list:
            positions = {p for p, values in target.items() if self.intended.get(p) != values}
            positions |= self._to_rewrite(context.feedback, target) & set(target)
            actions = []
            for p in sorted(positions):
                values = list(target[p])
                if self.rng.random() < self.noise:  # one attribute written wrong
                    k = self.rng.randrange(len(values))
                    values[k] = self.rng.choice([w for w in VOCABULARIES[attributes[k]] if w != values[k]])
                actions.append(ChainReplace(p, tuple(values)))
                self.intended[p] = target[p]
            return actions

        return writes

    async def reply(self, context: TurnContext) -> str:
        context = remember_clues(self, context)
        if context.puzzle == "chain":
            return chain_reply(context, self.chain, listen=True, act=True, writes=self._chain_writes(context))
        self.memory.read(context)
        target = target_for(context, self.memory)
        positions = {p for p, piece in target.items() if self.intended.get(p) != piece}
        positions |= self._to_rewrite(context.feedback, target) & set(target)
        actions = []
        for p in sorted(positions):
            piece = target[p]
            written = self._garble(piece, context) if self.rng.random() < self.noise else piece
            actions.append(Replace(p, written.shape, written.color))
            self.intended[p] = piece
        return format_reply("Let me fix my hypothesis.", share_message(context), actions)


ScriptedFactory = Callable[[str, random.Random], Policy]

SCRIPTED: dict[str, ScriptedFactory] = {
    "share_everything": ShareEverything,
    "one_piece": OnePiece,
    "ignore": IgnorePartner,
    "noisy": Noisy,
}


# ---- The K-agent chain puzzle (puzzles.chain) ----

_LINK = re.compile(r"\b(position|shape|color|pattern|material) ([a-z0-9]+) -> (shape|color|pattern|material) ([a-z]+)\b")


class ChainMemory:
    """Facts learned about the chain: ``links[(attribute, value)] = (next attribute, value)``, with
    "position" as the attribute before the first one."""

    def __init__(self) -> None:
        self.links: dict[tuple[str, str], tuple[str, str]] = {}

    def learn_clues(self, clues, attributes: tuple[str, ...]) -> None:
        for position, item in enumerate(clues, start=1):
            known = [(a, v) for a, v in zip(attributes, item) if v is not None]
            if len(known) == 1 and known[0][0] == attributes[0] and self._is_first_role(clues, attributes):
                self.links.setdefault(("position", str(position)), known[0])
            elif len(known) == 2:
                self.links.setdefault(known[0], known[1])

    @staticmethod
    def _is_first_role(clues, attributes) -> bool:
        return all(item[1:] == (None,) * (len(attributes) - 1) for item in clues)

    def read(self, context: TurnContext) -> None:
        """Learn from every partner line shown (reading one twice changes nothing)."""
        for line in context.conversation:
            if line.sender != context.role:
                for a, v, b, w in _LINK.findall(line.text.lower()):
                    self.links.setdefault((a, v), (b, w))

    def message(self) -> str:
        return "; ".join(f"{a} {v} -> {b} {w}" for (a, v), (b, w) in self.links.items())

    def target(self, size: int, attributes: tuple[str, ...]) -> dict[int, tuple[str, ...]]:
        """Every position whose whole chain of attributes is known."""
        target = {}
        for position in range(1, size + 1):
            values, key = [], ("position", str(position))
            for attribute in attributes:
                link = self.links.get(key)
                if link is None or link[0] != attribute:
                    break
                values.append(link[1])
                key = link
            if len(values) == len(attributes):
                target[position] = tuple(values)
        return target


def _chain_attributes(context: TurnContext) -> tuple[str, ...]:
    from puzzles.chain import ATTRIBUTES

    return ATTRIBUTES[: len(context.clues[0])]


def chain_reply(
    context: TurnContext, memory: ChainMemory, *, listen: bool, act: bool,
    one_fact: set | None = None, writes=None,
) -> str:
    """Share every fact known (own clues and, when listening, what partners said), or with
    ``one_fact`` (the facts already sent) one new fact per message; when acting, write every
    position whose chain is complete, or let ``writes(target)`` choose the actions."""
    from puzzles.chain import ChainReplace

    attributes = _chain_attributes(context)
    memory.learn_clues(context.clues, attributes)
    if listen:
        memory.read(context)
    actions = []
    if act:
        target = memory.target(context.size, attributes)
        if writes is not None:
            actions = writes(target)
        else:
            actions = [
                ChainReplace(p, values) for p, values in target.items()
                if tuple(context.hypothesis[p - 1]) != values
            ]
    to = None
    if context.directed and context.partners:
        to = context.partners[(context.turn - 1) % len(context.partners)]
    message = memory.message()
    if one_fact is not None:
        fresh = [fact for fact in memory.links.items() if fact not in one_fact]
        message = ""
        if fresh:
            one_fact.add(fresh[0])
            (a, v), (b, w) = fresh[0]
            message = f"{a} {v} -> {b} {w}"
    return format_reply("Here is what I know.", message, actions, to=to)
