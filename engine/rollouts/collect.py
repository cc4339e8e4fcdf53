"""Rollouts as a trainer takes them: the groups of a plan, yielded as each one's games are on disk.

    async with rollouts(grid, k=8, out=Path("runs/r1")) as groups:
        async for group in groups:
            ...                              # a Group: every seat's trajectory, with advantages

The games are a run like any other (``engine.session``): a run directory with the plan, the
records, full transcripts and the log, the response cache and the limits of the run's model
settings, and ``resume`` to go on with a run that was stopped or killed. A group is yielded once
every one of its games has a record that counts (the resume rule: a game lost to the
infrastructure waits for a resume to play it again), built from what is on disk, so that a group
yielded is a group a later reading of the run gives as well (``run_groups``). A resumed run first
yields the groups its earlier processes finished, unless ``skip`` names them.

The games are played in a task of their own (anyio's structured concurrency): leaving the ``async
with`` early stops them, and every game recorded before stays. That is why the API is a context
manager around an iterator rather than an async generator, which must not yield from inside a
task group.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream

from puzzles import GAMES, Game

from engine.backends import BackendSettings
from engine.plan import Grid
from engine.policies import PolicyFactory, is_model
from engine.records import GameRecord, RunDir, TranscriptIndex, is_infra_error
from engine.rollouts.groups import GroupIds, branch_groups, make_group
from engine.rollouts.rewards import rewards_of
from engine.rollouts.trajectory import Group, Weights
from engine.rollouts.weights import PolicyWeights, read_pins, with_weights
from engine.session import Session, open_session, play_plan


class Settings(msgspec.Struct, frozen=True):
    """What the trainer asked of the trajectories: the seats it trains (None: every model seat),
    which of the game's rewards is the reward, and whether model turns carry their tokens."""

    trained: tuple[str, ...] | None = None
    reward: str = "reward"
    tokens: bool = False

    def check(self, plan: Grid, games: Mapping[str, Game] = GAMES) -> None:
        """ValueError naming a seat that is not one, or is not a model's."""
        rewards_of(plan.the_game(games))
        for roster in plan.agent_rosters(games):
            for role in self.trained or ():
                if role not in roster:
                    raise ValueError(f"trained seat {role!r} is not a seat of the game ({', '.join(roster)})")
                if not is_model(roster[role]):
                    raise ValueError(f"trained seat {role!r} is played by {roster[role]}, not a model: only a model's seat is trained")


class GroupStream:
    """The groups of a rollout as they finish (``async for group in stream``); each is built from
    disk when it is taken, so a trajectory that cannot be made (``MissingTokens``) raises here."""

    def __init__(self, run: RunDir, game: Game, settings: Settings, receive: MemoryObjectReceiveStream[tuple[int, list[GameRecord]]],
                 weights: PolicyWeights | None = None) -> None:
        self.game, self.settings, self._receive = game, settings, receive
        self.weights = weights
        self._index = TranscriptIndex(run.path)

    def __aiter__(self) -> GroupStream:
        return self

    async def __anext__(self) -> Group:
        try:
            number, records = await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
        self._index.refresh()
        s = self.settings
        group = make_group(number, [(r, self._index.line(r.game_id)) for r in records], self.game,
                           trained=s.trained, reward=s.reward, tokens=s.tokens)
        return group if self.weights is None else with_weights(group, self.weights.pins)

    async def load_weights(self, adapter: Path | None) -> Weights:
        """Hand the running rollout new weights (a PEFT folder): loaded into the server, they play
        every game started from now on (``PolicyWeights.load``). Only for a rollout with weights."""
        if self.weights is None:
            raise ValueError("this rollout was started without weights to swap (rollouts(..., weights=PolicyWeights(...)))")
        return await self.weights.load(adapter)


class Assembler:
    """Gathers each group's records as they are written (``written``); hands a group on, as its
    number and its records in member order, when it is whole. Groups in ``skip`` are left out."""

    def __init__(self, ids: GroupIds, skip: Collection[int], send: Callable[[int, list[GameRecord]], None]) -> None:
        self.ids, self.skip, self.send = ids, skip, send
        self.pending: dict[int, dict[int, GameRecord]] = {}

    def written(self, record: GameRecord) -> None:
        if is_infra_error(record):
            return  # played again by a resume
        number = self.ids.of(record.game_id)
        if number in self.skip:
            return
        got = self.pending.setdefault(number, {})
        got[record.game_id] = record
        if len(got) == self.ids.k:
            del self.pending[number]
            self.send(number, [got[game_id] for game_id in self.ids.members(number)])


@asynccontextmanager
async def play_groups(
    session: Session, factory: PolicyFactory, *, settings: Settings = Settings(), skip: Collection[int] = (),
    concurrency: int = 256, games: Mapping[str, Game] = GAMES, weights: PolicyWeights | None = None, **play: Any,
) -> AsyncIterator[GroupStream]:
    """The groups of the open ``session``'s plan, played into its run directory with full
    transcripts: first those its earlier processes finished (but ``skip``), then each as it
    finishes. ``weights``: the trained model's weights, which the trainer swaps as the run plays
    (``engine.rollouts.weights``). ``play``: more of ``play_plan``'s arguments (``limit``, ``stop``,
    ``progress``, ``observers``, ``log_level``, ``spending``, ``executor``)."""
    plan = session.plan
    settings.check(plan, games)
    if weights is not None:
        if weights.current is None:
            raise ValueError(f"no weights of {weights.model} loaded: load the first version (PolicyWeights.load) before the games")
        weights.attach(session.run.path)
        play["observers"] = [*play.get("observers", ()), weights]
    ids = GroupIds(plan)
    send, receive = anyio.create_memory_object_stream[tuple[int, list[GameRecord]]](math.inf)
    assembler = Assembler(ids, set(skip), lambda number, records: send.send_nowait((number, records)))
    if session.recorded:
        for record in session.run.iter_records():
            if 0 <= record.game_id < plan.total:
                assembler.written(record)

    async def play_all() -> None:
        async with send:
            await play_plan(session.run, plan, factory, recorded=session.recorded, concurrency=concurrency,
                            transcripts=True, games=games, on_written=assembler.written, **play)

    async with anyio.create_task_group() as tg:
        tg.start_soon(play_all)
        try:
            yield GroupStream(session.run, plan.the_game(games), settings, receive, weights)
        finally:
            tg.cancel_scope.cancel()


@asynccontextmanager
async def rollouts(
    plan: Grid, *, k: int | None = None, out: Path | None = None, resume: Path | None = None,
    factory: PolicyFactory | None = None, models: BackendSettings | None = None, settings: Settings = Settings(),
    weights: PolicyWeights | None = None, **play: Any,
) -> AsyncIterator[GroupStream]:
    """The groups of ``plan`` with ``k`` games per seed and condition, played into a new run
    directory ``out`` (or the run in ``resume``, with its saved plan and model settings).
    ``models``: a new run's model settings (where the servers are, sampling, limits, cache);
    ``factory``: the policies' factory (a fresh one by default); with ``settings.tokens``, the
    models are asked for their tokens; ``weights``: the trained model's weights, which the trainer
    swaps while the run plays (``GroupStream.load_weights``). Raises ``SessionError`` where the run cannot be opened,
    ValueError for settings that do not fit the plan."""
    factory = factory or PolicyFactory()
    models = models or BackendSettings()
    if settings.tokens and not models.options.tokens:
        models = msgspec.structs.replace(models, options=msgspec.structs.replace(models.options, tokens=True))
    grouped = plan if k is None else msgspec.structs.replace(plan, group=k)
    if resume is None:
        grouped.validate()
        settings.check(grouped)
    session = open_session(factory, plan=lambda: grouped, resume=resume, out=out,
                           settings=lambda saved: saved or models)
    with session:
        async with play_groups(session, factory, settings=settings, weights=weights, **play) as groups:
            yield groups


def run_groups(path: Path, settings: Settings = Settings(), games: Mapping[str, Game] = GAMES) -> Iterator[Group]:
    """The finished groups of the run at ``path``, read from disk: a rollout's groups in order, or a
    branch run's points with two or more branches (``branch_groups``). The run needs full
    transcripts for the prompts and replies (without them, turns carry none). Where the trainer
    swapped weights as the run played, each model seat names its weights (``weights.jsonl``)."""
    run = RunDir.open(path)
    pins = read_pins(run.path)
    plan = run.config()
    game = plan.the_game(games)
    index = TranscriptIndex(run.path)
    index.refresh()
    kept = [record for record in run.iter_records() if not is_infra_error(record)]
    s = settings
    if plan.branch:
        yield from branch_groups([(r, index.line(r.game_id)) for r in kept], game, trained=s.trained, reward=s.reward, tokens=s.tokens)
        return
    ids = GroupIds(plan)
    by_group: dict[int, dict[int, GameRecord]] = {}
    for record in kept:
        by_group.setdefault(ids.of(record.game_id), {})[record.game_id] = record
    for number in sorted(by_group):
        got = by_group[number]
        if len(got) == ids.k:
            members = [got[game_id] for game_id in ids.members(number)]
            yield with_weights(make_group(number, [(r, index.line(r.game_id)) for r in members], game,
                                          trained=s.trained, reward=s.reward, tokens=s.tokens), pins)


def groups_in(lines: Iterable[bytes]) -> set[int]:
    """The group numbers of JSON lines of groups (a rollouts file), skipping damaged lines."""
    found = set()
    for line in lines:
        try:
            found.add(msgspec.json.decode(line, type=_Numbered).group)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return found


class _Numbered(msgspec.Struct):
    group: int
