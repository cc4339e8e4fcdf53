"""Traveling Adventurers' scripted players (spec ``tsp.md`` §5.4). They talk only through messages,
read only their own view and their partner's newest message, and keep their own notes.

Messages use a few fixed phrases: ``L-E: 5`` (my coins on a hallway), ``suggest: L E`` (go from L
to E next), ``agree: L E`` (I agree to go from L to E: the hop is taken), ``final: L E ... L``.
- ``full_share``: lists all its coins; once it has the partner's, ends with the joint optimum (the
  lexicographically smallest of the optimal tours, so both pick the same one).
- ``ibp_node``: node by node, as the paper's problem-solving agent: tells its coins from the current
  room, suggests the next room of its best path over what it knows (unknown coins count 0) with
  that path and its own coins along it, and of two suggested hops takes the one whose path has
  more joint coins, once each player has said its coins along the other's path.
- ``joint_greedy``: the same, suggesting the hop with the most joint coins.
- ``selfish``: suggests the hop with the most of its own coins and agrees only to that hop.
- ``silent``: says nothing and never ends (the turn limit ends the game).
The node-by-node players suggest a hop only once they know both players' coins from the room, and
break ties between hops by the earlier letter, so the tour does not depend on who moves first.
Each also answers grounding calls (``GroundingRequest``) by reading the coin phrases, so the local
model server can play the model agents' modules.
"""

from __future__ import annotations

import json
import random
import re

from ..turn import TurnContext
from ..policy import Answer, ScriptedFactory
from .modules import GroundingRequest
from .prompt import DRAFT_VARIANTS, START, WRONG_FORMAT, observation
from .replies import format_reply
from .rules import TspAction, TspView
from .solver import best_with_prefix, solve

_COINS = re.compile(r"\b([A-Z])-([A-Z]): (\d+)\b")
_HOP = re.compile(r"\b(suggest|agree): ([A-Z]) ([A-Z])\b")
_PATH = re.compile(r"\bpath: ([A-Z](?: [A-Z])+)")
_ON = re.compile(r"\bcoins on ([A-Z](?: [A-Z])+): (\d+)")


def partner_news(context: TurnContext) -> str | None:
    """The partner's message since this agent's last turn, if there is one. (A prompt read back by
    the local model server has no turn number: its conversation is that message.)"""
    if context.turn == 0:
        return "\n".join(line.text for line in context.conversation if line.sender != context.role) or None
    text = observation(context)
    return None if text in (START, WRONG_FORMAT) else text


def grounding_reply(request: GroundingRequest) -> str:
    """A grounding call answered by reading the coin phrases of the message."""
    known = {(a, b, w) for a, b, w in request.known}
    new = [[a, b, int(w)] for a, b, w in _COINS.findall(request.message) if (a, b, int(w)) not in known]
    return f"[Thought]: The message names {len(new)} new hallways.\n[NWS]: {json.dumps(new)}"


def path_action(name: str, path) -> TspAction:
    return TspAction(name, json.dumps(list(path)))


class ScriptedPlayer:
    """What every scripted player shares: its own coins, the partner's coins it has read."""

    def __init__(self, role: str, rng: random.Random) -> None:
        self.role = role
        self.rng = rng
        self.partner: dict[frozenset, int] = {}

    async def reply(self, context: TurnContext) -> Answer:
        if isinstance(context.view, GroundingRequest):
            return Answer(grounding_reply(context.view))
        view: TspView = context.view
        self.own = {frozenset((a, b)): w for a, b, w in view.weights}
        news = partner_news(context)
        if news:
            for a, b, w in _COINS.findall(news):
                if a != b and a in view.rooms and b in view.rooms:
                    self.partner[frozenset((a, b))] = int(w)
        thought, actions, message = self.play(view, news or "")
        return Answer(format_reply(thought, tuple(actions), message, draft=view.variant in DRAFT_VARIANTS))

    def joint(self, a: str, b: str) -> int:
        """The joint coins of a hallway as far as this player knows (unknown partner coins count 0)."""
        key = frozenset((a, b))
        return self.own[key] + self.partner.get(key, 0)

    def coins(self, view: TspView, edges) -> str:
        return ", ".join(f"{a}-{b}: {self.own[frozenset((a, b))]}" for a, b in edges)

    def play(self, view: TspView, news: str) -> tuple[str, list[TspAction], str]:
        raise NotImplementedError


class FullShare(ScriptedPlayer):
    def play(self, view, news):
        everything = self.coins(view, [(a, b) for a, b, _ in view.weights])
        if len(self.partner) < len(view.weights):
            return "I share all my coins first.", [TspAction("inform", json.dumps("all my coins"))], f"My coins: {everything}."
        best = solve(view.rooms, self.joint).tours[0]
        shown = " ".join(best)
        return (
            "I know both players' coins: the best round trip is the joint optimum.",
            [path_action("suggest", best), path_action("agree-inner", best), path_action("end", best)],
            f"My coins: {everything}. final: {shown}",
        )


class NodeByNode(ScriptedPlayer):
    """The node-by-node protocol; subclasses choose which hop to suggest and which to accept.

    A player suggests a hop only once it knows the partner's coins from the current room (so the
    player who arrives first tells its coins and waits), unless one room is left. Of two suggested
    hops both players take the same one (``better``): the tour then depends on what the two players
    know, not on which of them moves first."""

    def __init__(self, role: str, rng: random.Random) -> None:
        super().__init__(role, rng)
        self.path: list[str] = []
        self.suggested: str | None = None

    def choose(self, view: TspView, here: str, left: list[str]) -> str:
        raise NotImplementedError

    def rank(self, here: str, room: str) -> tuple[int, str]:
        """Sorts the hops from here best first: the most joint coins, then the earlier letter."""
        return -self.joint(here, room), room

    def better(self, here: str, one: str, other: str) -> str:
        return min(one, other, key=lambda room: self.rank(here, room))

    def accepts(self, view: TspView, here: str, theirs: str, mine: str) -> bool:
        return self.better(here, theirs, mine) == theirs

    def knows(self, here: str, left: list[str]) -> bool:
        """Whether the partner's coins from here to every room left have been read."""
        return len(left) == 1 or all(frozenset((here, room)) in self.partner for room in left)

    def play(self, view, news):
        if not self.path:
            self.path = [view.rooms[0]]
        actions: list[TspAction] = []
        said: list[str] = []
        for kind, a, b in _HOP.findall(news):
            here = self.path[-1]
            left = [r for r in view.rooms if r not in self.path]
            if a != here or b not in left:
                continue
            if kind == "agree" and b == self.suggested:
                actions += [path_action("agree-outer", [a, b]), TspAction("visit", json.dumps(b))]
                self._go(b)
            elif kind == "suggest":
                mine = self.choose(view, here, left)
                if self.accepts(view, here, b, mine):
                    actions += [path_action("agree-inner", [a, b]), TspAction("visit", json.dumps(b))]
                    said.append(f"agree: {a} {b}")
                    self._go(b)
                else:
                    actions.append(path_action("reject", [a, b]))
                    if mine != self.suggested:
                        self.suggested = None  # a new counter-suggestion follows
        left = [r for r in view.rooms if r not in self.path]
        if not left:
            tour = self.path + [view.rooms[0]]
            actions.append(path_action("end", tour))
            said.append("final: " + " ".join(tour))
            return "Every room is visited: we go home.", actions, "; ".join(said)
        here = self.path[-1]
        hallways = [(here, r) for r in left] + ([(left[0], view.rooms[0])] if len(left) == 1 else [])
        said.append(f"coins from {here}: {self.coins(view, hallways)}")
        if self.suggested is None and self.knows(here, left):
            self.suggested = self.choose(view, here, left)
            actions += [path_action("suggest", [here, self.suggested]), path_action("agree-inner", [here, self.suggested])]
        if self.suggested is not None:
            said.append(f"suggest: {here} {self.suggested}")
        actions.append(TspAction("ask", json.dumps(f"your coins from {here}")))
        return f"We are in {here}; {len(left)} rooms are left.", actions, "; ".join(said)

    def _go(self, room: str) -> None:
        self.path.append(room)
        self.suggested = None


class IbpNode(NodeByNode):
    """Suggests the next room of its best path (``path: ...``) and says its own coins along it
    (``coins on L C ...: 27``). When the two players suggest different hops, each says its coins
    along the other's path too: then both know the joint coins of both paths exactly, and both take
    the hop of the heavier one (of equal ones, the earlier letter). With a partner that names no
    path, of two suggested hops it takes the one with more joint coins, as the others do."""

    def __init__(self, role: str, rng: random.Random) -> None:
        super().__init__(role, rng)
        self.best: tuple[str, ...] = ()  # its best path, as last computed
        self.theirs: tuple[str, ...] = ()  # the partner's best path, as last said
        self.sums: dict[tuple[str, ...], int] = {}  # the partner's own coins along a path, as said

    def choose(self, view, here, left):
        self.best, _ = best_with_prefix(view.rooms, self.joint, self.path)
        return self.best[len(self.path)]

    def mine_on(self, tour) -> int:
        return sum(self.own[frozenset(hop)] for hop in zip(tour, tour[1:]))

    def accepts(self, view, here, theirs, mine):
        if theirs == mine:
            return True
        prefix = (*self.path, theirs)
        their_path, my_path = self.theirs, self.best
        if their_path[: len(prefix)] != prefix:  # a partner that names no path: the hop with more joint coins
            return super().accepts(view, here, theirs, mine)
        if their_path not in self.sums or my_path not in self.sums:
            return False  # not yet known which path is heavier: keep suggesting
        value = {hop: self.mine_on(tour) + self.sums[tour] for hop, tour in ((theirs, their_path), (mine, my_path))}
        return (-value[theirs], theirs) < (-value[mine], mine)

    def play(self, view, news):
        for tour in _PATH.findall(news):
            self.theirs = tuple(tour.split())
        for tour, coins in _ON.findall(news):
            self.sums[tuple(tour.split())] = int(coins)
        thought, actions, message = super().play(view, news)
        if self.suggested is None or len(self.path) == len(view.rooms):
            return thought, actions, message
        said = [message]
        if self.best[len(self.path)] == self.suggested:
            said += [f"path: {' '.join(self.best)}", f"coins on {' '.join(self.best)}: {self.mine_on(self.best)}"]
        prefix = tuple(self.path)
        if self.theirs[: len(prefix)] == prefix and len(self.theirs) > len(prefix) and self.theirs[len(prefix)] != self.suggested:
            said.append(f"coins on {' '.join(self.theirs)}: {self.mine_on(self.theirs)}")
        return thought, actions, "; ".join(said)


class JointGreedy(NodeByNode):
    def choose(self, view, here, left):
        return min(left, key=lambda r: self.rank(here, r))


class Selfish(NodeByNode):
    def choose(self, view, here, left):
        return max(sorted(left), key=lambda r: self.own[frozenset((here, r))])

    def accepts(self, view, here, theirs, mine):
        return theirs == mine


class Silent(ScriptedPlayer):
    def play(self, view, news):
        return "I keep quiet.", [], ""


SCRIPTED: dict[str, ScriptedFactory] = {
    "full_share": FullShare,
    "ibp_node": IbpNode,
    "joint_greedy": JointGreedy,
    "selfish": Selfish,
    "silent": Silent,
}
