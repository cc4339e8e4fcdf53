"""Many games at once under a cap on concurrent games, and the live counters a display reads."""

from __future__ import annotations

import itertools
import os
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

import anyio

from bus import Chat, Tap, TapOn, TurnStart
from puzzles import GAMES, Game

from engine.backends.admission import CALL_PRIORITY
from engine.backends.settings import CALL_GAME
from engine.play.game import play_game
from engine.play.recorded import RecordedGames
from engine.play.pacing import GameStarts
from engine.policies.factory import PolicyFactory
from engine.records.record import GameRecord
from engine.plan.spec import GameSpec
from engine.analysis.stats import ScoreTally, tally_scores

LAST_MESSAGE_CHARS = 160
RECENT_GAMES = 10


class GameObserver(Protocol):
    """Sees each game start (and may return a tap for its bus, of every message or by kind) and end."""

    def game_started(self, spec: GameSpec) -> Tap | TapOn | None: ...

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None: ...


_LIVE = frozenset((TurnStart, Chat))  # what a live game's tap is shown


class LiveGame:
    """What a display shows of a game in flight; kept up to date by a tap on the game's bus."""

    __slots__ = ("game_id", "condition", "turn", "max_turns", "role", "last_message", "last_sender", "progress")

    def __init__(self, spec: GameSpec) -> None:
        self.game_id = spec.game_id
        self.condition = spec.condition()
        self.turn = 0
        self.max_turns = spec.max_turns
        self.role = ""
        self.last_message = ""
        self.last_sender = ""
        self.progress: dict[str, float] = {}  # each role's progress, in the game's own measure

    def tap(self, address: str, message: Any) -> None:  # noqa: ARG002
        if message.__class__ is TurnStart:
            self.turn, self.role, self.progress = message.turn, message.role, message.progress
        else:
            self.last_sender = message.sender
            self.last_message = message.text[:LAST_MESSAGE_CHARS]


class RunProgress:
    """Counters the engine keeps as it goes. Displays read them; nothing walks the finished games.

    ``live`` holds the games in flight (at most the concurrency cap), ``recent`` the last finished
    ones, ``by_condition`` [successes, failures, errors] per condition label, ``scores`` and
    ``scores_by_condition`` a tally of every score of the games that ended without error.

    Games that fail often take longer, so a rate over the games finished so far leans towards
    success. ``prefix`` (games, successes, scored) counts only the longest run of games, in the
    order they are started (``place`` gives a game's place in it), that have all finished: an
    unbiased estimate while the run goes on.
    """

    def __init__(
        self, total: int, already_done: int = 0, *, track_live: bool = False, place: Callable[[int], int] | None = None,
    ) -> None:
        self.total = total
        self.done = already_done
        self.running = 0
        self.successes = 0
        self.failures = 0
        self.errors = 0
        self.finished_now = 0  # games finished by this process (not counting resumed ones)
        self.track_live = track_live
        self.live: dict[int, LiveGame] = {}
        self.recent: deque[GameRecord] = deque(maxlen=RECENT_GAMES)
        self.by_condition: dict[str, list[int]] = {}
        self.condition_fields: dict[str, dict[str, str]] = {}  # label -> its fields, as first seen
        self.error_kinds: Counter[str] = Counter()
        self.scores: dict[str, ScoreTally] = {}
        self.scores_by_condition: dict[str, dict[str, ScoreTally]] = {}
        self.place = place or (lambda game_id: game_id)
        self._next = 0  # the place of the first game, in play order, not finished yet
        self._ahead: dict[int, str] = {}  # games finished beyond it: place -> outcome
        self.prefix_successes = 0
        self.prefix_scored = 0
        self.first_finished_at: float | None = None  # time.monotonic() when this process finished its first game

    @property
    def queued(self) -> int:
        return self.total - self.done - self.running

    def game_started(self, spec: GameSpec) -> TapOn | None:
        self.running += 1
        if not self.track_live:
            return None
        game = LiveGame(spec)
        if game.condition not in self.condition_fields:
            self.condition_fields[game.condition] = spec.condition_fields()
        self.live[spec.game_id] = game
        return TapOn(game.tap, _LIVE)

    def know_conditions(self, specs: Iterable[GameSpec]) -> None:
        """Every condition of the run, one spec each, so that labels are right from the start."""
        for spec in specs:
            label = spec.condition()
            self.condition_fields.setdefault(label, spec.condition_fields())
            self.by_condition.setdefault(label, [0, 0, 0])

    def count_recorded(self, spec: GameSpec, outcome: str, error_kind: str | None, scores: dict | None = None) -> None:
        """Count a game recorded by an earlier process (when resuming)."""
        self._count(spec.condition(), outcome, error_kind, scores or {})
        self._in_order(spec.game_id, outcome)

    @property
    def prefix(self) -> tuple[int, int, int]:
        """(games in the finished prefix, its successes, its scored games)."""
        return self._next, self.prefix_successes, self.prefix_scored

    def _in_order(self, game_id: int, outcome: str) -> None:
        self._ahead[self.place(game_id)] = outcome
        while self._next in self._ahead:
            outcome = self._ahead.pop(self._next)
            self._next += 1
            self.prefix_successes += outcome == "success"
            self.prefix_scored += outcome in ("success", "failure")

    def _count(self, condition: str, outcome: str, error_kind: str | None, scores: dict) -> None:
        if outcome != "error" and scores:
            by_condition = self.scores_by_condition.setdefault(condition, {})
            tally_scores(self.scores, scores)
            tally_scores(by_condition, scores)
        counts = self.by_condition.setdefault(condition, [0, 0, 0])
        if outcome == "success":
            self.successes += 1
            counts[0] += 1
        elif outcome == "failure":
            self.failures += 1
            counts[1] += 1
        else:
            self.errors += 1
            counts[2] += 1
            self.error_kinds[error_kind or "unknown"] += 1

    def eta(self, now: float) -> float | None:
        """Seconds to the end at the rate games have finished since the first one did (the time
        before it is a game's length, not the rate); None before two have finished."""
        if self.first_finished_at is None or self.finished_now < 2 or now <= self.first_finished_at:
            return None
        rate = (self.finished_now - 1) / (now - self.first_finished_at)
        return (self.total - self.done) / rate

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        if self.first_finished_at is None:
            self.first_finished_at = time.monotonic()
        self.running -= 1
        self.done += 1
        self.finished_now += 1
        self._count(spec.condition(), record.outcome, record.error.kind if record.error else None, record.scores)
        self._in_order(spec.game_id, record.outcome)
        if self.track_live:
            self.live.pop(spec.game_id, None)
            self.recent.append(record)


async def run_games(
    specs: Iterable[GameSpec] | AsyncIterator[GameSpec],
    *,
    factory: PolicyFactory,
    concurrency: int,
    on_record: Callable[[GameRecord], None],
    progress: RunProgress | None = None,
    observers: Iterable[GameObserver] = (),
    games: Mapping[str, Game] = GAMES,
    starts: GameStarts | None = None,
) -> None:
    """Play every spec, at most ``concurrency`` at a time, handing each record to ``on_record`` as
    soon as its game ends. ``specs`` may also be a stream (an anyio receive stream) that others feed
    while the games run; the run then ends when the stream is closed. With ``starts``, each game waits for its turn to start (see
    ``engine.play.pacing``), and no game starts once it says no more may. Cancelling the caller's scope
    stops the run; games in flight are dropped."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    stream = specs if isinstance(specs, AsyncIterator) else None  # a stream that others feed while the games run
    pending: Iterator[GameSpec] = iter(()) if isinstance(specs, AsyncIterator) else iter(specs)
    watchers = ([progress] if progress is not None else []) + list(observers)
    preparing = anyio.CapacityLimiter(1)  # the games' slow set-up: one worker thread for the run
    recorded = RecordedGames.of(factory.settings)  # a branch run: the run whose transcripts replay its model seats

    admitted = itertools.count()
    run_token = os.urandom(4).hex()  # tells this run's games from another's at a shared model server

    async def next_spec() -> GameSpec | None:
        """The next game to play, None when there is none (or no more may start). It returns before
        the game is played: no frame of it is held while the game goes on."""
        if stream is not None:
            return await anext(stream, None)
        spec = next(pending, None)  # one shared iterator: each game is taken by exactly one worker
        if spec is not None and starts is not None and not await starts.next():
            return None  # the spec taken is left unplayed, as are the rest
        return spec

    # asyncio's TaskGroup, as in actors.base.run_actors (anyio's costs about 3 KiB more a task, here
    # a game in flight). A worker's failure is kept and cancels the other workers, then raised in an
    # exception group, as anyio's group does; it does not reach the TaskGroup, which would cancel
    # the calling task itself and so confuse the anyio cancel scopes around it.
    from asyncio import TaskGroup, current_task

    failures: list[Exception] = []
    workers: list[Any] = []

    async def worker() -> None:
        """Play games until there are none left. One frame under each game in flight (the game's own
        coroutine is awaited here, not through a helper). A worker that takes a game starts the next
        worker, up to ``concurrency``: no more workers than games, however high the cap."""
        try:
            while (spec := await next_spec()) is not None:
                if len(workers) < concurrency and not failures:
                    workers.append(group.create_task(worker()))
                CALL_PRIORITY.set(next(admitted))  # its model calls go before those of games started later
                CALL_GAME.set(f"{run_token}-{spec.game_id};seed={spec.policy_seed}")  # the seed its seats' randomness is drawn from
                taps = [tap for w in watchers if (tap := w.game_started(spec)) is not None]
                record = await play_game(spec, factory, taps, games=games, preparing=preparing, recorded=recorded)
                if starts is not None:
                    starts.game_finished()
                for w in watchers:
                    w.game_finished(spec, record)
                on_record(record)
                del taps, record  # not held while the next game plays
        except Exception as exc:  # noqa: BLE001 - raised below, after the others have stopped
            if not failures:
                me = current_task()
                for task in workers:
                    if task is not me:
                        task.cancel()
            failures.append(exc)

    async with TaskGroup() as group:
        workers.append(group.create_task(worker()))
    if failures:
        raise ExceptionGroup("a worker of the run failed", failures)
