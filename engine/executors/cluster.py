"""Games played by workers on a Ray cluster.

Each worker is an async Ray actor that runs the engine's own loop (``run_games`` over a stream it is
fed) with its own model clients. The driver sends games in batches of ids (not one Ray call per game,
not one actor per game) and keeps two batches outstanding per worker, so a worker never waits for the
driver; each batch comes back as its records, encoded, which the driver decodes, shows and writes.
A worker that dies mid-batch has its batch played again by the others: a batch's records arrive all
together or not at all, so no game is lost or recorded twice. Transcripts are made where the games
are played and come back with their records; the driver writes both. A spending cap is checked as
each game is put in a batch, with the games in flight counted at the expected cost of a game; what
a worker that died had spent beyond the records it returned is counted too, from its last report.

Model limits are the cluster's: every worker draws on one budget per limit, held by a ledger actor
(``leases``), which learns what any worker learns from the rate-limit headers and 429s. The same
actor, on the driver's node, keeps the usage each worker reports as its calls end, before their
replies reach the games (``tally``), so the calls of a worker that dies still count, once, in
``usage.json``.

A game's routes (``engine.backends.routes``: the weights a trainer swapped in, which the driver's
observers pin as the game is put in a batch) go with its batch, and the worker sets them as the
game starts, so its calls go where they would in one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import time
from collections import deque
from typing import Any

from collections.abc import Callable, Iterator, Mapping, Sequence

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
import msgspec

from puzzles import GAMES, Game

from engine.backends import BackendSettings, HubContext
from engine.backends.routes import ROUTES
from engine.plan.spec import GameSpec
from engine.play.collector import tune_collector
from engine.play.run import GameObserver, RunProgress, run_games
from engine.policies.factory import PolicyFactory, models_play
from engine.records.record import GameRecord, decode_record, encode_record
from engine.records.rundir import Plan
from engine.records.transcribe import TranscriptMaker, TranscriptWriter
from engine.spending.budget import Spending
from engine.executors.leases import Leases, LimitLedger
from engine.executors.startup import Startup
from engine.executors.tally import UsageReports, UsageTally

BATCHES_PER_WORKER = 2  # outstanding, so that a worker has the next batch when one ends
MAX_BATCH = 256
USAGE_WAIT = 10.0  # seconds to wait for the workers' usage at the end
SNAPSHOT_EVERY = 1.0  # seconds between the dashboard's reads of each worker


class _Batch:
    def __init__(self, size: int) -> None:
        self.size = size
        self.records: list[tuple[bytes, bytes | None]] = []  # (record, transcript line)
        self.done = asyncio.Event()


Routes = dict[str, dict[str, Any]]  # a game's routes, as they travel to its worker


class GameRoutes:
    """A worker's observer: as each game starts, its routes as the driver sent them (none: the
    model's own), in the context the game's calls inherit."""

    def __init__(self) -> None:
        self.of: dict[int, Routes] = {}  # game id -> its routes, until it starts

    def game_started(self, spec: GameSpec) -> None:
        ROUTES.set(self.of.pop(spec.game_id, {}))

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        return None


class GameWorker:
    """A Ray actor (made remote by ``RayExecutor``): plays the batches it is given, ``concurrency``
    games at a time, with one model hub for its life."""

    def __init__(
        self, plan: bytes, settings: bytes, concurrency: int, ledger: Any = None, transcripts: str | None = None, worker: int = 0,
    ) -> None:
        self.worker = worker
        self.plan = msgspec.json.decode(plan, type=Plan)
        self.factory = PolicyFactory(msgspec.json.decode(settings, type=BackendSettings))
        self.ledger = ledger
        self.transcripts = None if transcripts is None else TranscriptMaker(full=transcripts == "full")
        tune_collector()  # as the runner does in one process (``engine.play.collector``)
        self.concurrency = concurrency
        self.batch_of: dict[int, _Batch] = {}
        self.routes = GameRoutes()
        self.failure: BaseException | None = None
        self._send: MemoryObjectSendStream[GameSpec] | None = None
        self._serving: asyncio.Task | None = None

    async def _serve(self, specs: MemoryObjectReceiveStream[GameSpec]) -> None:
        try:
            async with anyio.create_task_group() as leasing:
                if self.ledger is not None:  # the cluster's limits; no reply reaches a game before the tally counts it
                    reports = UsageReports(self.ledger, self.worker)
                    limits = Leases(self.ledger, self.factory.hub.settings, leasing)
                    self.factory.hub = self.factory.hub.for_run(HubContext(limits=limits, after_call=reports.after_call))
                    leasing.start_soon(reports.keep_sending, self.factory.hub.summary)
                async with self.factory:
                    await run_games(
                        specs, factory=self.factory, concurrency=self.concurrency, on_record=self._record,
                        observers=[self.routes, *([self.transcripts] if self.transcripts is not None else [])],
                    )
                leasing.cancel_scope.cancel()
        except BaseException as exc:  # every batch waiting learns of it
            self.failure = exc
            for batch in self.batch_of.values():
                batch.done.set()
            raise

    def _record(self, record: GameRecord) -> None:
        batch = self.batch_of.pop(record.game_id)
        transcript = self.transcripts.take(record.game_id) if self.transcripts is not None else None
        batch.records.append((encode_record(record), transcript))
        if len(batch.records) == batch.size:
            batch.done.set()

    async def play(self, ids: list[int], routes: Mapping[int, Routes] | None = None) -> list[tuple[bytes, bytes | None]]:
        """The encoded records of the games ``ids``, each with its transcript line when asked for;
        ``routes``: the routes of those of the games that have any."""
        self.routes.of.update(routes or {})
        if self._send is None:
            self._send, specs = anyio.create_memory_object_stream[GameSpec](math.inf)
            self._serving = asyncio.get_running_loop().create_task(self._serve(specs))
        batch = _Batch(len(ids))
        for spec in self.plan.specs_for(ids):
            self.batch_of[spec.game_id] = batch
            self._send.send_nowait(spec)
        await batch.done.wait()
        if self.failure is not None:
            raise RuntimeError(f"the worker stopped: {type(self.failure).__name__}: {self.failure}")
        return batch.records

    def node(self) -> tuple[str, str]:
        """(id, address) of the node this worker runs on."""
        import ray

        return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()

    def snapshot(self) -> dict[str, Any]:
        """What the driver's dashboard shows of this worker: games in flight and each model's limiter."""
        now = time.monotonic()
        models = {}
        for backend in self.factory.hub.backends():
            limiter, stats = backend.limiter, backend.limiter.stats
            models[limiter.name] = {
                "in flight": limiter.running, "cap": limiter.cap, "rpm": round(stats.rate(now)),
                "429": stats.rate_limited, "failed": stats.failed, "calls": stats.calls,
                "cost": stats.cost_usd,
            }
        return {"in flight": len(self.batch_of), "models": models}

    def usage(self) -> dict[str, Any] | None:
        """How this worker called the models (``ModelHub.summary``), None if it called none."""
        hub = self.factory.hub
        return hub.summary() if hub.backends() else None


class Ledger(LimitLedger, UsageTally):
    """The run's one actor beside the workers: the cluster's limits and the workers' usage."""

    def __init__(self, settings: bytes) -> None:
        LimitLedger.__init__(self, settings)
        UsageTally.__init__(self)


class RayExecutor:
    name = "ray"

    def __init__(self, *, workers: int = 2, address: str | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.address = address
        self.startup = Startup(workers, address)  # under way while the driver gets ready
        self.worker_stats: dict[int, list[int]] = {}  # worker -> [batches, games]
        self.actors: list[Any] = []
        self.ledger: Any = None
        self.usage: list[dict[str, Any]] = []  # each worker's ``ModelHub.summary``, after ``play``
        self.snapshots: dict[int, dict[str, Any]] = {}  # worker -> its last ``GameWorker.snapshot``
        self.dead: set[int] = set()
        self.nodes: dict[int, tuple[str, str]] = {}  # worker -> (node id, address), once it played a batch

    async def play(
        self, plan: Plan, ids: Iterator[int], *, factory: PolicyFactory, concurrency: int,
        on_record: Callable[[GameRecord], None], progress: RunProgress | None = None,
        observers: Sequence[GameObserver] = (), games: Mapping[str, Game] = GAMES,
        transcripts: TranscriptWriter | None = None, spending: Spending | None = None,
    ) -> None:
        # The event loop (dashboard, signals) runs on meanwhile; Ctrl-C leaves the start to the exit.
        ray = await anyio.to_thread.run_sync(self.startup.wait, abandon_on_cancel=True)
        from ray.exceptions import RayActorError
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        per_call = max(1, math.ceil(concurrency / (self.workers * BATCHES_PER_WORKER)))
        batch_size = min(MAX_BATCH, 2 * per_call)
        actor_class = ray.remote(num_cpus=1, max_restarts=0)(GameWorker)
        plan_bytes, settings_bytes = msgspec.json.encode(plan), msgspec.json.encode(factory.hub.settings)
        ledger = self.ledger = None
        if models_play(plan):  # scripted games need none: one process less to start
            # On the driver's node: it outlives any worker's node, and the run ends with the driver anyway.
            here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
            ledger = self.ledger = ray.remote(num_cpus=0, scheduling_strategy=here)(Ledger).remote(settings_bytes)
        watchers = [*([progress] if progress is not None else []), *observers, *([spending] if spending is not None else [])]
        # Transcripts are made by the workers, which see the games' buses; the driver writes them.
        made = None if transcripts is None else "full" if transcripts.full else "messages"
        retry: deque[list[GameSpec]] = deque()  # batches (specs) of workers that died
        routes_of: dict[int, Routes] = {}  # game id -> the routes its observers set as it was put in a batch
        pending = iter(ids)
        outstanding = 0  # batches sent and not yet back
        changed = anyio.Event()
        returned: dict[int, list[float]] = {}  # per worker: the cost and tokens of the records it returned
        written_off: set[int] = set()  # dead workers whose spending beyond their records the caps were told

        async def write_off(worker: int) -> None:
            """Tell the caps what a dead worker spent beyond the records it returned (its usage as it
            last reported it to the ledger): its games are played again, its calls were billed."""
            if ledger is None or spending is None or worker in written_off:
                return
            written_off.add(worker)
            try:
                reported = (await ledger.usage.remote()).get(worker) or {}
            except Exception:  # noqa: BLE001 - a ledger gone too: nothing more to learn
                return
            models = reported.get("models", {}).values()
            cost = sum(m.get("cost_usd") or 0.0 for m in models)
            tokens = sum((m.get("prompt_tokens") or 0) + (m.get("completion_tokens") or 0) for m in models)
            spent_cost, spent_tokens = returned.get(worker, (0.0, 0))
            spending.spent_elsewhere(max(0.0, cost - spent_cost), max(0, int(tokens - spent_tokens)))

        def within_caps() -> Iterator[int]:
            """The games to start, while the caps allow another (a refusal is final; games in flight finish)."""
            while (spending is None or spending.allows_another()) and (game_id := next(pending, None)) is not None:
                yield game_id

        def next_batch() -> list[GameSpec]:
            """The specs of the next batch: one a dead worker left (its games shown as started already), or
            new games, each shown as started (and so counted in flight by the caps) before the next is weighed."""
            if retry:
                return retry.popleft()
            batch = []
            for spec in plan.specs_for(itertools.islice(within_caps(), batch_size), games):
                ROUTES.set({})  # what the observers set for this game alone (``engine.rollouts.weights``)
                for w in watchers:
                    w.game_started(spec)
                if routes := ROUTES.get():
                    routes_of[spec.game_id] = {model: dict(fields) for model, fields in routes.items()}
                batch.append(spec)
            return batch

        async def feed(worker: int, actor: Any) -> None:
            nonlocal outstanding, changed
            stats = self.worker_stats.setdefault(worker, [0, 0])
            while True:
                batch = next_batch()
                if not batch:
                    if not outstanding:
                        return
                    await changed.wait()  # a batch may come back unplayed from a worker that died
                    continue
                specs = {spec.game_id: spec for spec in batch}
                outstanding += 1
                try:
                    encoded = await actor.play.remote(list(specs), {i: routes_of[i] for i in specs if i in routes_of})
                except RayActorError:
                    retry.append(batch)  # the worker is gone: another plays these games
                    self.dead.add(worker)
                    await write_off(worker)
                    return
                finally:
                    outstanding -= 1
                    changed.set()
                    changed = anyio.Event()
                stats[0] += 1
                stats[1] += len(encoded)
                spent = returned.setdefault(worker, [0.0, 0])
                for data, transcript in encoded:
                    record = decode_record(data)
                    routes_of.pop(record.game_id, None)
                    for usage in (record.usage or {}).values():
                        spent[0] += usage.cost_usd or 0.0
                        spent[1] += usage.prompt_tokens + usage.completion_tokens
                    for w in watchers:
                        w.game_finished(specs[record.game_id], record)
                    if transcript is not None and transcripts is not None:
                        transcripts.write(transcript)  # before its record, as in one process
                    on_record(record)
                if worker not in self.nodes:
                    self.nodes[worker] = ("", "-")  # asked once
                    with contextlib.suppress(RayActorError):  # a worker gone now is found out by its next batch
                        self.nodes[worker] = await actor.node.remote()

        actors = self.actors = [
            actor_class.remote(plan_bytes, settings_bytes, per_call, ledger, made, worker) for worker in range(self.workers)
        ]
        try:
            async with anyio.create_task_group() as watching:
                watching.start_soon(self._watch, actors, RayActorError)
                async with anyio.create_task_group() as tg:
                    for worker, actor in enumerate(actors):
                        for _ in range(BATCHES_PER_WORKER):
                            tg.start_soon(feed, worker, actor)
                watching.cancel_scope.cancel()
            if retry:
                raise RuntimeError(f"every worker stopped; {sum(map(len, retry))} games were not played")
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(USAGE_WAIT):
                self.usage = await _usage(actors, ledger)
            for actor in actors:
                ray.kill(actor)
            if ledger is not None:
                ray.kill(ledger)

    def summaries(self, factory) -> list[dict[str, Any]]:
        return self.usage

    async def _watch(self, actors: list[Any], gone: type[Exception]) -> None:
        """Keep each live worker's snapshot for the dashboard, once a second."""
        while True:
            for worker, actor in enumerate(actors):
                if worker not in self.dead:
                    try:
                        self.snapshots[worker] = await actor.snapshot.remote()
                    except gone:
                        self.dead.add(worker)
            await anyio.sleep(SNAPSHOT_EVERY)

    def worker_rows(self) -> list[tuple[str, dict[str, object]]]:
        """A row per worker: batches and games back, games in flight, and its calls over every model."""
        rows = []
        for worker in range(self.workers):
            batches, games = self.worker_stats.get(worker, (0, 0))
            snapshot = self.snapshots.get(worker, {})
            models = snapshot.get("models", {}).values()
            rows.append((f"worker {worker}", {
                "state": "lost" if worker in self.dead else "up", "node": self.nodes.get(worker, ("", "-"))[1],
                "batches": batches, "games": games,
                "in flight": snapshot.get("in flight", 0), "calls": sum(m["calls"] for m in models),
                "rpm": sum(m["rpm"] for m in models), "429": sum(m["429"] for m in models),
            }))
        return rows

    def model_rows(self) -> list[tuple[str, dict[str, object]]]:
        """A row per model, summed over the workers: calls in flight and the caps, rate, refusals, cost."""
        totals: dict[str, dict[str, Any]] = {}
        for snapshot in self.snapshots.values():
            for name, figures in snapshot.get("models", {}).items():
                total = totals.setdefault(name, {"in flight": 0, "cap": 0, "rpm": 0, "429": 0, "failed": 0, "calls": 0, "cost": 0.0})
                for key, value in figures.items():
                    total[key] = None if value is None or total[key] is None else total[key] + value
        for total in totals.values():
            total["cost"] = "-" if total["cost"] is None else f"${total['cost']:.2f}"
        return sorted(totals.items())


async def _usage(actors: list[Any], ledger: Any) -> list[dict[str, Any]]:
    """The model usage of every worker that called a model: a live worker's from itself, a dead one's
    as it last reported it to the ledger (``tally``)."""
    found = await asyncio.gather(*(actor.usage.remote() for actor in actors), return_exceptions=True)
    reported: dict[int, dict[str, Any]] = {}
    if ledger is not None and any(isinstance(answer, BaseException) for answer in found):
        told = (await asyncio.gather(ledger.usage.remote(), return_exceptions=True))[0]
        reported = told if isinstance(told, dict) else {}  # a ledger gone too took the reports with it
    summaries = [reported.get(worker) if isinstance(answer, BaseException) else answer for worker, answer in enumerate(found)]
    return [summary for summary in summaries if summary is not None]
