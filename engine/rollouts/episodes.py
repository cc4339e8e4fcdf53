"""Episodes for a trainer that plays one seat itself: one game, the client's seat turn by turn, the
other seats played by the engine (scripted policies or models, as in any run).

The client's seat is a model policy (``engine.policies.llm.LLMPolicy``) whose model is the client:
each model call the seat makes waits, as a ``Prompt``, until the client sends the reply text
(``SeatBackend``). So the prompt a client sees is word for word the one a model in that seat is sent
(the system prompt, the seat's earlier turns where the game keeps the chat, the turn's prompt), and
its reply is read, ruled and recorded by the agent actor exactly as a model's.

An ``Episode`` starts a game and hands out ``Shown``: the seat's next prompt as chat messages, the
reward of the seat's turn just played (the change of its progress over the game's scale, as
``engine.rollouts.rewards.turn_rewards`` gives it from the record; the last turn's from the record
itself) and, once the game has ended, its outcome and the seat's named rewards. ``EpisodeHost``
holds the run directory every episode is recorded in (the record and its full transcript, as any
run writes them, so that ``trajectories`` and the reports read them) and the episodes a client named.
A client that leaves mid-episode ends its game: the seat's waiting turn raises ``ClientLeft``, and the
game is recorded with that error and what was played before.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskGroup

from bus import Act, TurnStart, Usage
from puzzles import GAMES, Game, Policy

from engine.backends import Completion, Request, Tokenizer
from engine.backends.limiter import Limiter
from engine.plan import GameSpec, game_seed
from engine.play import play_game
from engine.policies import PolicyFactory
from engine.policies.llm import LLMPolicy
from engine.records import GameRecord, TranscriptWriter
from engine.rollouts.rewards import rewards_of, seat_rewards, turn_rewards
from engine.rollouts.trajectory import ChatMessage
from engine.session import Session

CLIENT = "env:client"  # the policy of the client's seat, as the records name it


class ClientLeft(RuntimeError):
    """The client left the episode before the game ended: the game ends with this error."""

    kind = "client_left"


class EpisodeError(ValueError):
    """A request no episode can answer: a step before a reset, an episode unknown or over, two steps at once."""


class Shown(msgspec.Struct, frozen=True):
    """What the client is shown after a reset or a step: the seat's next prompt (``messages``, empty
    once ``done``), the reward of the seat's turn just played (None after a reset) and its progress
    as a share, and why the game could not read that turn's reply (``format_error``); once done, the game's ``outcome``, the seat's named ``rewards`` and any ``error``."""

    episode_id: str
    game_id: int
    seed: int
    role: str
    turn: int
    messages: list[ChatMessage]
    reward: float | None = None
    progress: float = 0.0
    format_error: str | None = None
    done: bool = False
    outcome: str | None = None
    rewards: dict[str, float] = {}
    error: str | None = None


class Prompt:
    """One model call of the client's seat, waiting for the client's reply."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.text: str | None = None
        self.answered = anyio.Event()

    def messages(self) -> list[ChatMessage]:
        """The call as chat messages, as the model policy's call is sent to a chat model."""
        r = self.request
        out = [ChatMessage("system", r.system)]
        for user, reply in r.history:
            out += [ChatMessage("user", user), ChatMessage("assistant", reply)]
        return [*out, ChatMessage("user", r.user)]

    def answer(self, text: str | None) -> None:
        """The client's reply; None: the client left."""
        self.text = text
        self.answered.set()


class SeatBackend:
    """The client's seat as a model backend: each call is a ``Prompt`` the client answers."""

    name = CLIENT

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.limiter = Limiter(CLIENT, max_in_flight=1 << 20, learn_limits=False, adaptive=False)
        self.send, self.calls = anyio.create_memory_object_stream[Prompt](math.inf)
        self.left = False

    async def complete(self, request: Request) -> Completion:
        if self.left:
            raise ClientLeft("the client left the episode")
        prompt = Prompt(request)
        self.send.send_nowait(prompt)
        await prompt.answered.wait()
        if prompt.text is None:
            raise ClientLeft("the client left the episode")
        return Completion(prompt.text, Usage(model=CLIENT))


class SeatFactory(PolicyFactory):
    """The run's factory, with the client in the episode's seat."""

    def __init__(self, base: PolicyFactory, role: str, backend: SeatBackend) -> None:
        super().__init__(own=base.own)
        self.hub = base.hub
        self._base, self._role, self._backend = base, role, backend

    def make(self, name: str, role: str, seed: int, game: Game) -> Policy:
        if role == self._role:
            return LLMPolicy(self._backend, game.faces.prompter)
        return self._base.make(name, role, seed, game)


class Episode:
    """One game with the client in seat ``role``: ``start`` it, then ``shown()`` after the reset and
    ``step(text)`` for each reply; ``leave()`` ends it where it stands."""

    def __init__(self, host: EpisodeHost, spec: GameSpec, episode_id: str) -> None:
        self.host, self.spec, self.episode_id, self.role = host, spec, episode_id, host.role
        self.game = host.game
        self.backend = SeatBackend(host.factory.hub.tokenizer)
        self.record: GameRecord | None = None
        self.ended = anyio.Event()
        self.steps = 0
        self._prompt: Prompt | None = None
        self._busy = False
        self._turn = 0
        self._scale = rewards_of(self.game).progress_scale(spec.params)
        state = self.game.rules.new(spec.params, spec.seed, tuple(spec.agents), spec.max_turns)
        self._before = self._after = float(state.progress(self.role))
        self._acted = False
        self._format_error: str | None = None

    def start(self, tg: TaskGroup) -> None:
        tg.start_soon(self._play)

    async def _play(self) -> None:
        host = self.host
        transcript = host.transcripts.game_started(self.spec)
        try:
            record = await play_game(self.spec, SeatFactory(host.factory, self.role, self.backend), [transcript, self._tap], games=host.games)
            host.recorded(self.spec, record)
            self.record = record
        finally:
            host.running.discard(self)
            self.backend.send.close()
            self.ended.set()

    def _tap(self, address: str, message: Any) -> None:
        """The seat's turn number, and its progress right after each of its turns."""
        if isinstance(message, TurnStart):
            if self._acted:
                self._after, self._acted = float(message.progress.get(self.role, self._after)), False
            if message.role == self.role:
                self._turn = message.turn
        elif isinstance(message, Act) and message.role == self.role:
            self._acted, self._format_error = True, message.format_error

    @property
    def done(self) -> bool:
        return self.record is not None

    async def shown(self, played: bool = False) -> Shown:
        """The seat's next prompt, or the end of the game; ``played``: after a reply of the seat."""
        turn = self._turn
        try:
            prompt = await self.backend.calls.receive()
        except anyio.EndOfStream:
            return await self._end(turn if played else None)
        reward = None
        if played:
            reward, self._before = (self._after - self._before) / self._scale, self._after
        self._prompt = prompt
        return self._show(prompt.messages(), reward, self._after / self._scale)

    async def step(self, text: str) -> Shown:
        """Play ``text`` as the seat's reply to the waiting prompt; what the client is shown next."""
        if self._busy:
            raise EpisodeError(f"episode {self.episode_id} is playing a step already: send one step at a time")
        prompt, self._prompt = self._prompt, None
        if prompt is None:
            raise EpisodeError(f"episode {self.episode_id} is over: reset to start another")
        self._busy = True
        self.steps += 1
        try:
            prompt.answer(text)
            return await self.shown(played=True)
        finally:
            self._busy = False

    def leave(self) -> None:
        """The client left: a waiting turn, or the next, ends the game with ``ClientLeft``."""
        self.backend.left = True
        prompt, self._prompt = self._prompt, None
        if prompt is not None:
            prompt.answer(None)

    async def _end(self, turn: int | None) -> Shown:
        await self.ended.wait()
        record = self.record
        if record is None:  # the game was cancelled (the server stops)
            return self._show([], None, self._before / self._scale, done=True, outcome="error", error="the server stopped")
        reward = None
        progress = self._before / self._scale
        if turn is not None:
            reward, progress = turn_rewards(record, self.game).get((turn, self.role), (0.0, progress))
        error = None if record.error is None else f"{record.error.kind}: {record.error.message}"
        return self._show([], reward, progress, done=True, outcome=record.outcome,
                          rewards=seat_rewards(record, self.game).get(self.role, {}), error=error)

    def _show(self, messages: list[ChatMessage], reward: float | None, progress: float, **end: Any) -> Shown:
        return Shown(episode_id=self.episode_id, game_id=self.spec.game_id, seed=self.spec.seed, role=self.role,
                     turn=self._turn, messages=messages, reward=reward, progress=progress,
                     format_error=None if reward is None else self._format_error, **end)


class EpisodeHost:
    """The episodes of one open run ``session``, whose plan's first condition is every episode's game
    with the client in seat ``role``; each episode's game is recorded in the run directory. Episodes
    a client named are kept here (``named``) until they end, or until ``idle`` seconds pass without
    a step; others belong to whoever holds them."""

    def __init__(self, session: Session, factory: PolicyFactory, role: str, *, idle: float | None = None,
                 games: Mapping[str, Game] = GAMES) -> None:
        self.session, self.factory, self.role, self.idle, self.games = session, factory, role, idle, games
        plan = session.plan
        self.template = plan.spec(0, games)
        if role not in self.template.agents:
            raise ValueError(f"{role!r} is not a seat of {plan.game} ({', '.join(self.template.agents)})")
        agents = {r: CLIENT if r == role else name for r, name in self.template.agents.items()}
        self.template = msgspec.structs.replace(self.template, agents=agents)
        self.game = plan.the_game(games)
        rewards_of(self.game)
        run = session.run
        self.next_id = max((r.game_id for r in run.iter_records()), default=-1) + 1
        self.episodes: dict[str, Episode] = {}  # those a client named
        self.running: set[Episode] = set()  # every episode whose game is going on
        self.started = 0
        self._tg: TaskGroup | None = None
        self.writer: Any = None
        self.transcripts: Any = None

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[EpisodeHost]:
        """Episodes may start inside; leaving ends the games still going (each recorded as it stands)."""
        run = self.session.run
        self.writer = run.writer()
        self.transcripts = TranscriptWriter(run.path, full=True, at_once=True)
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                reaping = anyio.CancelScope()
                if self.idle is not None:
                    tg.start_soon(self._reap, reaping)
                try:
                    yield self
                finally:
                    reaping.cancel()
                    for episode in list(self.running):
                        episode.leave()
                    self._tg = None
        finally:
            self.writer.close()
            self.transcripts.close()

    async def reset(self, seed: int | None = None, episode_id: str | None = None, *, keep: bool = False) -> tuple[Episode, Shown]:
        """A new episode on the game of ``seed`` (None: one drawn from the plan's seed and the
        episode's number), kept under ``episode_id`` when one is given, or with ``keep`` under the
        id it is shown with (``game-N``); its first prompt."""
        if self._tg is None:
            raise EpisodeError("the server is not serving episodes")
        name = episode_id if episode_id is not None else f"game-{self.next_id}"
        if (episode_id is not None or keep) and name in self.episodes:
            raise EpisodeError(f"episode {name} is being played: give another episode_id")
        game_id = self.next_id
        self.next_id += 1
        seed = game_seed(self.session.plan.seed, game_id) if seed is None else seed
        spec = msgspec.structs.replace(self.template, game_id=game_id, seed=seed)
        episode = Episode(self, spec, name)
        if episode_id is not None or keep:
            self.episodes[name] = episode
        self.started += 1
        self.running.add(episode)
        episode.start(self._tg)
        return episode, await episode.shown()

    def named(self, episode_id: str) -> Episode:
        """The episode kept under ``episode_id``; EpisodeError if there is none."""
        episode = self.episodes.get(episode_id)
        if episode is None:
            raise EpisodeError(f"no episode {episode_id!r} is being played: reset one first (an episode is forgotten when it ends)")
        return episode

    def recorded(self, spec: GameSpec, record: GameRecord) -> None:
        """A game ended: its transcript and record written, the episode forgotten."""
        self.transcripts.game_finished(spec, record)
        self.writer.write(record)
        self.episodes = {name: episode for name, episode in self.episodes.items() if episode.spec.game_id != spec.game_id}

    async def _reap(self, scope: anyio.CancelScope) -> None:
        """End the named episodes that waited ``idle`` seconds without a step (until ``scope`` is cancelled)."""
        assert self.idle is not None
        seen: dict[str, tuple[int, float]] = {}
        with scope:
            while True:
                await anyio.sleep(min(self.idle / 4, 5.0))
                now = anyio.current_time()
                for name, episode in list(self.episodes.items()):
                    steps, since = seen.get(name, (-1, now))
                    if steps != episode.steps:
                        seen[name] = (episode.steps, now)
                    elif now - since >= self.idle:
                        episode.leave()
                seen = {name: seen[name] for name in self.episodes if name in seen}
