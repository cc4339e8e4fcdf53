"""A dataset from teachers' play: its plan, its seeds, the trajectories, and the games that make them.

Seeds. The held-out games are the first ``holdout`` games of run seed ``seed`` (the games ``asymgames
run --seed S --games E`` and a sweep with ``seed = S`` and ``seeds = E`` play, for every part's
parameters). Training games are the games after them in the same sequence (game ``E``, ``E + 1``,
...), less any whose start is a held-out game's (every role's first view the same): disjoint by
construction, and by instance, not only by seed.

Trajectories. With ``demonstrations`` (K), each training game gives up to K of the game's own
demonstrations (``Rules.demonstrations``: its planner's optimal and near-optimal plays); without,
each game is one trajectory of the scripted strategies the seats name. ``sample`` then draws that
many trajectories of the pool, at random (seeded). Every trajectory is played through the engine
(``play_game``) with each seat a ``Teacher``, and each of its turns becomes a sample, checked.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

import anyio
import msgspec

from bus import Act, TapOn
from puzzles import AnyParams, Demonstration, Game, InvalidParameter, get_game

from engine.dataset.samples import DatasetError, Sample, SampleInfo, checked, messages
from engine.dataset.teacher import TeacherFactory
from engine.plan import GameSpec, Options
from engine.plan.spec import game_seed
from engine.play import play_game

DEFAULT_HOLDOUT = 100
CONCURRENCY = 32


class Part(msgspec.Struct, frozen=True):
    """One set of the game's parameters and how many training games to play with them."""

    params: AnyParams
    games: int


class DatasetPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What a dataset is made of. ``agents``: each role's scripted strategy (unused with
    ``demonstrations``); ``demonstrations``: K per game (0: scripted play); ``sample``: trajectories
    drawn from the pool (None: all); ``keep_failures``: keep games the teachers did not solve."""

    game: str
    parts: list[Part]
    agents: dict[str, str] = {}
    demonstrations: int = 0
    sample: int | None = None
    seed: int = 0
    holdout: int = DEFAULT_HOLDOUT
    max_turns: int | None = None
    keep_failures: bool = False


class Trajectory(NamedTuple):
    """One trajectory of the pool: its part, its game's seed, its label, a demonstration's replies
    (None: the scripted strategies play)."""

    part: int
    seed: int
    label: str
    replies: dict[str, tuple[str, ...]] | None


class Built(NamedTuple):
    """A dataset in memory: the samples and their infos (line by line), and the card's figures."""

    samples: list[Sample]
    infos: list[SampleInfo]
    seeds: list[dict[str, Any]]  # per part: the training and held-out seeds
    counts: dict[str, Any]


def _roster(game: Game, plan: DatasetPlan) -> tuple[str, ...]:
    return game.roster_for(list(plan.agents)) if plan.agents else game.rules.rosters[0]


def _turns(game: Game, plan: DatasetPlan, params: Any) -> int:
    return plan.max_turns or game.rules.default_max_turns(params, _roster(game, plan))


def _start(game: Game, params: Any, seed: int, roles: tuple[str, ...], turns: int) -> bytes:
    """What every role is first shown in the game of ``seed``: the same bytes, the same game."""
    state = game.rules.new(params, seed, roles, turns)
    return msgspec.json.encode([state.view(role) for role in roles])


def seeds(game: Game, plan: DatasetPlan, part: Part) -> tuple[list[int], list[int]]:
    """(training seeds, held-out seeds) of one part."""
    roles, turns = _roster(game, plan), _turns(game, plan, part.params)
    held = [game_seed(plan.seed, i) for i in range(plan.holdout)]
    starts = {_start(game, part.params, s, roles, turns) for s in held}
    held_set, index = set(held), plan.holdout
    train: list[int] = []
    while len(train) < part.games:
        seed = game_seed(plan.seed, index)
        index += 1
        if seed not in held_set and _start(game, part.params, seed, roles, turns) not in starts:
            train.append(seed)
        elif index > plan.holdout + 100 * part.games + 1000:
            raise DatasetError(
                f"only {len(train)} games of these parameters start unlike the {plan.holdout} held out, "
                f"{part.games} asked for: hold out fewer, or ask for fewer"
            )
    return train, held


def pool(game: Game, plan: DatasetPlan, train: Sequence[Sequence[int]]) -> list[Trajectory]:
    """Every trajectory the training games give, part by part, game by game."""
    out: list[Trajectory] = []
    for index, (part, seeds_) in enumerate(zip(plan.parts, train)):
        turns = _turns(game, plan, part.params)
        for seed in seeds_:
            if not plan.demonstrations:
                out.append(Trajectory(index, seed, "/".join(plan.agents.values()) or game.default_policy, None))
                continue
            assert game.rules.demonstrations is not None
            shown: Sequence[Demonstration] = game.rules.demonstrations(part.params, seed, plan.demonstrations, turns)
            out += [Trajectory(index, seed, d.label, d.replies) for d in shown]
    return out


def drawn(trajectories: list[Trajectory], plan: DatasetPlan) -> list[Trajectory]:
    if plan.sample is None or plan.sample >= len(trajectories):
        return trajectories
    picked = sorted(random.Random(f"dataset:{plan.seed}").sample(range(len(trajectories)), plan.sample))
    return [trajectories[i] for i in picked]


async def _play(game: Game, plan: DatasetPlan, number: int, trajectory: Trajectory) -> list[tuple[Sample, SampleInfo]] | None:
    """The samples of one trajectory (None: a game the teachers did not solve, not kept)."""
    part = plan.parts[trajectory.part]
    roles = _roster(game, plan)
    agents = {role: plan.agents.get(role, game.default_policy) for role in roles}
    options = Options(feedback=game.rules.default_feedback, max_turns=_turns(game, plan, part.params))
    spec = GameSpec(game_id=number, seed=trajectory.seed, params=part.params, agents=agents, options=options)
    factory = TeacherFactory(trajectory.replies)
    acts: list[Act] = []
    record = await play_game(spec, factory, [TapOn(lambda address, act: acts.append(act), frozenset((Act,)))], games={game.name: game})
    where = f"{game.name} seed {trajectory.seed} ({trajectory.label})"
    if record.error is not None:
        raise DatasetError(f"{where}: the game failed: {record.error.message}")
    if factory.unplayed():
        raise DatasetError(f"{where}: the game ended before the demonstration did")
    if record.outcome != "success" and (trajectory.replies is not None or not plan.keep_failures):
        if trajectory.replies is not None:
            raise DatasetError(f"{where}: the demonstration does not solve the game")
        return None
    taught = {role: list(turns) for role, turns in factory.taught.items()}
    out = []
    for step, act in enumerate(acts):
        mine = taught.get(act.role, [])
        if not mine:
            raise DatasetError(f"{where}: a turn of {act.role} was played without its teacher")
        turn = mine.pop(0)
        actions = checked(game, turn.text, turn.context, act, f"{where}, {act.role} turn {act.turn}")
        info = SampleInfo(number, trajectory.part, trajectory.seed, trajectory.label, act.role, act.turn, step, actions)
        out.append((Sample(messages(turn.request, turn.text)), info))
    if any(taught.values()):
        raise DatasetError(f"{where}: the seats were asked for more replies than turns were played (best of n); make the dataset without it")
    return out


async def build(plan: DatasetPlan) -> Built:
    """The dataset ``plan`` describes (DatasetError with a one-line reason if it cannot be made)."""
    game = get_game(plan.game)
    for part in plan.parts:
        if part.games < 1:
            raise DatasetError(f"a part needs at least one training game, got {part.games}")
        params: Any = part.params
        try:
            params.check()
        except InvalidParameter as exc:
            raise DatasetError(f"{exc.field}: {exc}") from None
    if plan.demonstrations and game.rules.demonstrations is None:
        raise DatasetError(f"{game.name} has no demonstrations; its scripted strategies teach (leave out the demonstrations)")
    if plan.holdout < 0:
        raise DatasetError(f"the held-out games must be 0 or more, got {plan.holdout}")
    split = [seeds(game, plan, part) for part in plan.parts]
    every = pool(game, plan, [train for train, _ in split])
    chosen = drawn(every, plan)
    results: list[list[tuple[Sample, SampleInfo]] | None] = [None] * len(chosen)
    limiter = anyio.CapacityLimiter(CONCURRENCY)
    errors: list[DatasetError] = []

    async def one(i: int) -> None:
        async with limiter:
            if not errors:
                try:
                    results[i] = await _play(game, plan, i, chosen[i])
                except DatasetError as exc:
                    errors.append(exc)

    async with anyio.create_task_group() as tg:
        for i in range(len(chosen)):
            tg.start_soon(one, i)
    if errors:
        raise errors[0]
    kept = [r for r in results if r is not None]
    samples = [s for r in kept for s, _ in r]
    infos = [i for r in kept for _, i in r]
    steps = [len(r) for r in kept]
    counts = {
        "games": sum(p.games for p in plan.parts),
        "pool": len(every),
        "trajectories": len(kept),
        "unsolved_dropped": len(chosen) - len(kept),
        "samples": len(samples),
        "mean_steps": round(sum(steps) / len(steps), 2) if steps else 0,
        "labels": dict(sorted(Counter(r[0][1].label for r in kept if r).items())),
        "per_part": [
            {"games": p.games, "pool": sum(t.part == i for t in every),
             "trajectories": sum(1 for r in kept if r and r[0][1].part == i),
             "samples": sum(len(r) for r in kept if r and r[0][1].part == i)}
            for i, p in enumerate(plan.parts)
        ],
    }
    seed_lists = [
        {"training": train, "held_out": {"run_seed": plan.seed, "games": plan.holdout, "seeds": held}}
        for train, held in split
    ]
    return Built(samples, infos, seed_lists, counts)


__all__ = ["Built", "DatasetPlan", "Part", "Trajectory", "build", "drawn", "pool", "seeds"]
