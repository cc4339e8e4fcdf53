"""Training trajectories as the paper makes them (App. B): for one instance, the planner's optimal
plan and near-optimal ones (one or two steps longer), distinct, balanced between sharing and asking,
with several bins tried where the players must guess; none stalls on two passes in a row.

The search is the planner's (``planner.expand``: the same steps, costs and knowledge), walked depth
first under a bound of the optimum plus a slack, each walk in its own random order, so that the
walks find different plans; a node from which no plan ends within the steps left is remembered and
not walked again. From what the walks find, ``choose`` picks ``count``: the planner's optimum first,
then, one at a time, the plan that most evens out asks against shares, adds a failed guess where
none was chosen yet (modes that guess), and brings a length not yet chosen.

``demonstrations`` writes each chosen plan as the two players' replies (``<ACTION>`` only, or with a
``<THINK>`` line saying why when the prompt asks for reasoning): what ``engine.dataset`` plays.
"""

from __future__ import annotations

import random
from typing import NamedTuple

from ..policy import Demonstration
from ..turn import Reply
from .actions import Action, Ask, Move, Pass, Share, item_text
from .board import BIN_NAMES, COMMON, ROLES, Instance
from .generate import generate
from .params import EinsteinParams
from .planner import Search, Step, expand, plan, root_of, search_of
from .prompt import format_reply
from .validity import to_item

SLACK = 2  # steps over the optimum a near-optimal plan may take (the paper: one or two)
WALKS = 40  # random walks per instance


class Found(NamedTuple):
    """The plans of one instance: ``optimum`` (None: the planner found none), the chosen plans (the
    first is optimal), how many distinct plans the walks found, and how many branches they cut
    because both players would have passed in a row."""

    optimum: int | None
    chosen: tuple[tuple[Step, ...], ...]
    distinct: int
    stalls: int


def cost(path: tuple[Step, ...]) -> int:
    """Steps a plan takes: an ask is two (the ask and its answer)."""
    return sum(2 if s.kind == "ask" else 1 for s in path)


class _Walk:
    def __init__(self, search: Search, rng: random.Random) -> None:
        self.search, self.rng = search, rng
        self.dead: set[tuple] = set()  # (node, steps left, passed last): no plan ends from here
        self.stalls = 0

    def walk(self, root: tuple, bound: int, seen: set[tuple[Step, ...]]) -> tuple[Step, ...] | None:
        found: list[tuple[Step, ...]] = []

        def down(state: tuple, g: int, path: tuple[Step, ...], passed: bool) -> bool:
            """Whether any plan ends below; a new one goes to ``found``."""
            if state[0] == self.search.goal:
                if path not in seen:
                    found.append(path)
                return True
            key = (state, bound - g, passed)
            if key in self.dead:
                return False
            children = expand(self.search, state)
            self.rng.shuffle(children)
            ends = False
            for step_cost, new, step in children:
                if step.kind == "pass" and passed:
                    self.stalls += 1
                    continue
                if g + step_cost + self.search.h(new[0]) > bound:
                    continue
                ends = down(new, g + step_cost, path + (step,), step.kind == "pass") or ends
                if found:
                    return True
            if not ends:
                self.dead.add(key)
            return ends

        down(root, 0, (), False)
        return found[0] if found else None


def _features(path: tuple[Step, ...], instance: Instance) -> tuple[int, int, int]:
    """(asks, shares, failed guesses) of a plan."""
    asks = sum(s.kind == "ask" for s in path)
    shares = sum(s.kind == "share" for s in path)
    missed = sum(s.kind == "guess" and s.args[2] not in (COMMON, instance.goal[s.args[0]]) for s in path)
    return asks, shares, missed


def choose(paths: list[tuple[Step, ...]], count: int, instance: Instance, guessing: bool, rng: random.Random) -> list[tuple[Step, ...]]:
    """``count`` plans of ``paths`` (the first is kept first): asks evened out against shares, a
    failed guess where the players guess, lengths not yet chosen."""
    chosen, left = paths[:1], paths[1:]
    rng.shuffle(left)
    while left and len(chosen) < count:
        asks = sum(_features(p, instance)[0] for p in chosen)
        shares = sum(_features(p, instance)[1] for p in chosen)
        missed = any(_features(p, instance)[2] for p in chosen)
        lengths = {cost(p) for p in chosen}

        def score(path: tuple[Step, ...]) -> int:
            a, s, m = _features(path, instance)
            balance = 2 if (a > s and asks < shares) or (s > a and shares < asks) else 0
            return balance + (2 if guessing and m and not missed else 0) + (cost(path) not in lengths)

        best = max(left, key=score)
        chosen.append(best)
        left.remove(best)
    return chosen


def plans(instance: Instance, modes: tuple[str, str], count: int, seed: int, *, answers: bool = True,
          max_steps: int = 30, slack: int = SLACK, walks: int = WALKS) -> Found:
    """Up to ``count`` distinct plans of ``instance``: the optimum, then near-optimal ones."""
    best = plan(instance, modes, answers=answers, with_path=True)
    if best.steps is None or best.path is None or best.steps > max_steps:
        return Found(best.steps, (), 0, 0)
    search = search_of(instance, modes, answers=answers)
    root = root_of(instance)
    rng = random.Random(f"{instance.id}:{seed}")
    walker = _Walk(search, rng)
    seen: set[tuple[Step, ...]] = {best.path}
    found = [best.path]
    for _ in range(walks):
        if len(found) >= 4 * count:
            break
        path = walker.walk(root, min(max_steps, best.steps + rng.randint(0, slack)), seen)
        if path is not None:
            seen.add(path)
            found.append(path)
    guessing = any(search.guesses)
    chosen = choose(found, count, instance, guessing, rng)
    return Found(best.steps, tuple(chosen), len(found), walker.stalls)


def _why(step: Step, instance: Instance) -> str:
    if step.kind in ("move", "guess"):
        b, _, dst = step.args
        if step.kind == "guess":
            if dst == COMMON:
                return f"I cannot work out where block{b} goes and it may belong on my partner's side, so I put it in the commonbin."
            return f"I cannot work out where block{b} goes from what I know, so I try {BIN_NAMES[dst]}."
        if dst == COMMON:
            return f"block{b} belongs on my partner's side, so I pass it through the commonbin."
        return f"I know block{b} goes in {BIN_NAMES[dst]}, which I can reach, so I move it there."
    if step.kind == "share":
        return f"My partner needs {item_text(to_item(instance.items[step.args[0]]))} to place its blocks, so I share it."
    if step.kind == "ask":
        return f"I cannot tell where block{step.args[0]} goes yet, so I ask my partner about it."
    return "I have nothing useful to do right now, so I pass."


def turns(path: tuple[Step, ...], instance: Instance) -> list[tuple[str, Action, str]]:
    """A plan as the game plays it, step by step: (role, action, why); an ask is followed by the
    partner's answer."""
    out: list[tuple[str, Action, str]] = []
    for step in path:
        why = _why(step, instance)
        if step.kind in ("move", "guess"):
            b, src, dst = step.args
            out.append((step.role, Move(b, BIN_NAMES[src], BIN_NAMES[dst]), why))
        elif step.kind == "share":
            out.append((step.role, Share(to_item(instance.items[step.args[0]])), why))
        elif step.kind == "ask":
            b, i = step.args
            partner = ROLES[1 - ROLES.index(step.role)]
            out.append((step.role, Ask(b), why))
            answer = f"My partner asked about block{b}; I share what I know about it."
            out.append((partner, Share(to_item(instance.items[i])), answer))
        else:
            out.append((step.role, Pass(), why))
    return out


def label(path: tuple[Step, ...], optimum: int) -> str:
    extra = cost(path) - optimum
    return "optimal" if extra == 0 else f"optimal+{extra}"


def demonstrations(params: EinsteinParams, seed: int, count: int, max_turns: int) -> tuple[Demonstration, ...]:
    """The game of ``seed`` played ``count`` ways (fewer where fewer plans exist): the optimum first."""
    instance = generate(params.blocks, seed)
    found = plans(instance, params.modes, count, seed, answers=params.seek_answers, max_steps=2 * max_turns)
    out = []
    for path in found.chosen:
        replies: dict[str, list[str]] = {role: [] for role in ROLES}
        for role, action, why in turns(path, instance):
            replies[role].append(format_reply(Reply(message="", actions=(action,)), why if params.cot else ""))
        assert found.optimum is not None
        out.append(Demonstration(label(path, found.optimum), {r: tuple(t) for r, t in replies.items()}))
    return tuple(out)


__all__ = ["Found", "choose", "cost", "demonstrations", "label", "plans", "turns"]
