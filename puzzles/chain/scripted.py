"""The chain puzzle's scripted policies: the same four strategies as AsymPuzl's, over links.

Facts travel as ``A v -> B w`` phrases (``position 3 -> shape star``, ``shape star -> color blue``).
- ``share_everything``: every message holds every fact known (own clues and what partners said), so
  facts are relayed along a chain of agents; writes every position whose whole chain is known.
- ``one_piece``: one new fact per message.
- ``ignore``: shares its own facts, never reads its partners, never acts.
- ``noisy``: as share_everything, but each write has one attribute wrong with probability 0.3; it
  rewrites what feedback says is wrong.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from ..turn import TurnContext
from ..policy import Answer, ScriptedFactory
from ..positions.rules import Feedback, positions_to_rewrite
from .prompt import format_reply
from .rules import VOCABULARIES, ChainReplace, ChainView

NOISE_RATE = 0.3
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


Writes = Callable[[dict[int, tuple[str, ...]]], list[ChainReplace]]


def chain_reply(
    context: TurnContext, memory: ChainMemory, *, listen: bool, act: bool,
    one_fact: set | None = None, writes: Writes | None = None,
) -> str:
    """Share every fact known (own clues and, when listening, what partners said), or with
    ``one_fact`` (the facts already sent) one new fact per message; when acting, write every
    position whose chain is complete, or let ``writes(target)`` choose the actions."""
    view: ChainView = context.view
    memory.learn_clues(view.clues, view.attributes)
    if listen:
        memory.read(context)
    actions: list[ChainReplace] = []
    if act:
        target = memory.target(view.size, view.attributes)
        if writes is not None:
            actions = writes(target)
        else:
            actions = [
                ChainReplace(p, values) for p, values in target.items()
                if tuple(view.hypothesis[p - 1]) != values
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


class ShareEverything:
    def __init__(self, role: str, rng: random.Random) -> None:
        self.memory = ChainMemory()

    async def reply(self, context: TurnContext) -> Answer:
        return Answer(chain_reply(context, self.memory, listen=True, act=True))


class OnePiece:
    def __init__(self, role: str, rng: random.Random) -> None:
        self.memory = ChainMemory()
        self.sent: set = set()

    async def reply(self, context: TurnContext) -> Answer:
        return Answer(chain_reply(context, self.memory, listen=True, act=True, one_fact=self.sent))


class IgnorePartner:
    def __init__(self, role: str, rng: random.Random) -> None:
        self.memory = ChainMemory()

    async def reply(self, context: TurnContext) -> Answer:
        return Answer(chain_reply(context, self.memory, listen=False, act=False))


class Noisy:
    def __init__(self, role: str, rng: random.Random, noise: float = NOISE_RATE) -> None:
        self.rng = rng
        self.noise = noise
        self.memory = ChainMemory()
        self.intended: dict[int, tuple[str, ...]] = {}  # what it believes it wrote

    def _to_rewrite(self, feedback: Feedback | None, target: dict) -> set[int]:
        return positions_to_rewrite(feedback, bool(self.intended), target)

    async def reply(self, context: TurnContext) -> Answer:
        attributes = context.view.attributes

        def writes(target: dict[int, tuple[str, ...]]) -> list[ChainReplace]:
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

        return Answer(chain_reply(context, self.memory, listen=True, act=True, writes=writes))


SCRIPTED: dict[str, ScriptedFactory] = {
    "share_everything": ShareEverything,
    "one_piece": OnePiece,
    "ignore": IgnorePartner,
    "noisy": Noisy,
}
