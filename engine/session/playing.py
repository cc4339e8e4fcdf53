"""A run without a terminal: a plan and a run directory become records on disk.

The runners wrap this with flags, signals and a display; anything else (a notebook, a cluster
executor) can call it as it is. The rules live here once:
- resume: every game recorded counts, except games lost to the infrastructure (``infra_error``),
  which are played again;
- records are appended as games finish (``RecordWriter``), transcripts beside them on request;
- the run's log (structured JSON lines) and, when models played, ``usage.json``;
- when every game is recorded, the results are rewritten sorted by game id; ``summary.json`` and
  ``games.csv`` (one row per game, ``engine.analysis.games``) are written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec

from bus import Act, TapOn
from puzzles import GAMES, Game

from engine.backends.limiter import COUNTERS
from engine.spending.budget import Spending
from engine.executors import Executor, LocalExecutor
from engine.policies.factory import PolicyFactory, is_human, is_model, models_play
from engine.records.record import GameRecord, is_infra_error
from engine.records.ids import IdSet
from engine.records.rundir import Plan, RunDir, RunDirError
from engine.play.run import RunProgress
from engine.plan.spec import GameSpec
from engine.analysis.games import GAMES_FILE, write_games_csv
from engine.analysis.stats import ConditionSummary
from engine.analysis.totals import RunTotals, condition_summary
from engine.records.transcribe import TranscriptWriter
from engine.records.transcripts import NO_TRANSCRIPTS_FILE
from engine.session.runlog import FLUSH_SECONDS, RunLog
from engine.session.stopping import StopStarting

SUMMARY_FILE = "summary.json"
USAGE_FILE = "usage.json"


def counted_keys(run: RunDir) -> Iterator[Any]:
    """The record keys of the games that count as recorded (the resume rule), one at a time."""
    return (key for key in run.recorded_keys() if not is_infra_error(key))


def recorded_games(run: RunDir, total: int) -> IdSet:
    """The ids of the games that count as recorded (the resume rule). A record of a game the plan
    does not have (of ``total``) is a RunDirError: the results belong to another run."""
    ids = IdSet()
    for key in counted_keys(run):
        if not 0 <= key.game_id < total:
            raise RunDirError(
                f"{run.results_path} holds game {key.game_id}, which the run's plan of {total} games does not have; "
                f"move it aside with --resume {run.path} --repair"
            )
        ids.add(key.game_id)
    return ids


_ACTS = frozenset((Act,))


class GameLog:
    """Logs each game's end (info), its errors (error) and, at debug level, every agent turn.
    Every line carries the game id; turn lines carry the agent."""

    def __init__(self, log: Any, *, debug: bool) -> None:
        self.log = log
        self.debug = debug

    def game_started(self, spec: GameSpec) -> TapOn | None:
        if not self.debug:
            return None
        log = self.log.bind(game_id=spec.game_id)

        def turn(address: str, message: Act) -> None:
            log.debug(
                "turn", agent=message.role, turn=message.turn, message_chars=len(message.message),
                actions=len(message.actions), rejected=len(message.rejected), format_error=message.format_error,
            )

        return TapOn(turn, _ACTS)

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        if record.error is not None:
            self.log.error("game_error", game_id=record.game_id, **msgspec.to_builtins(record.error))
        else:
            self.log.info("game_finished", game_id=record.game_id, outcome=record.outcome, turns=record.turns)


def merge_usage(earlier: dict[str, Any] | None, now: dict[str, Any]) -> dict[str, Any]:
    """The run's usage: this process's calls added to what earlier processes of the run made. Each
    process is kept under ``processes`` with how it called the models; ``models`` holds the totals."""
    processes = list((earlier or {}).get("processes", []))
    if earlier is not None and not processes:  # written before processes were kept: one process
        processes = [{"options": earlier.get("options"), "models": earlier.get("models", {})}]
    processes.append({"options": now.get("options"), "models": now.get("models", {})})
    models: dict[str, dict[str, Any]] = {}
    for process in processes:
        for name, figures in process["models"].items():
            total = models.setdefault(name, {k: 0 for k in COUNTERS} | {"cost_usd": 0.0, "latency_sum": 0.0})
            for k in COUNTERS:
                total[k] += figures.get(k) or 0
            cost = figures.get("cost_usd")
            total["cost_usd"] = None if cost is None or total["cost_usd"] is None else round(total["cost_usd"] + cost, 6)
            total["latency_sum"] += (figures.get("mean_latency") or 0) * (figures.get("calls") or 0)
            for k in ("in_flight_cap", "rpm_limit", "tpm_limit"):
                total[k] = figures.get(k)
    for total in models.values():
        latency = total.pop("latency_sum")
        total["mean_latency"] = round(latency / total["calls"], 4) if total["calls"] else None
    return {"tokenizer": now.get("tokenizer"), "options": now.get("options"), "models": models, "processes": processes}


def read_usage(run: RunDir) -> dict[str, Any] | None:
    """What earlier processes of the run called (``usage.json``), or None."""
    try:
        return msgspec.json.decode((run.path / USAGE_FILE).read_bytes())
    except (OSError, msgspec.DecodeError):
        return None


def play_order(plan: Plan, recorded: IdSet) -> Iterator[int]:
    """The ids of the games to play, seed by seed across the conditions (every condition fills at
    once, rather than one after another); lazily, so memory is set by the games in flight."""
    conditions = plan.total // plan.seeds
    for i in range(plan.seeds):
        for c in range(conditions):
            game_id = c * plan.seeds + i
            if game_id not in recorded:
                yield game_id


def play_place(plan: Plan) -> Callable[[int], int]:
    """A game's place in ``play_order`` (counting recorded games too)."""
    seeds, conditions = plan.seeds, plan.total // plan.seeds
    return lambda game_id: (game_id % seeds) * conditions + game_id // seeds


def write_usage(path: Path, summaries: list[dict[str, Any]], log: Any) -> None:
    """Per model: calls, retries by cause, tokens and cost over every process of the run
    (``usage.json``), from the summaries of this run's processes (``ModelHub.summary``: this one, or
    a cluster's workers); nothing when no model played."""
    if not summaries:
        return
    file = path / USAGE_FILE
    earlier = None
    if file.exists():
        try:
            earlier = msgspec.json.decode(file.read_bytes())
        except msgspec.DecodeError:
            log.warning("usage_unreadable", file=str(file))  # the earlier totals are lost, not the run
    summary = merge_usage(earlier, summaries[0])
    for process in summaries[1:]:
        summary = merge_usage(summary, process)
    file.write_bytes(msgspec.json.format(msgspec.json.encode(summary)) + b"\n")
    log.info("model_usage", models=summary["models"])


def new_progress(plan: Plan, keys: Iterable[Any], *, track_live: bool, games: Mapping[str, Game] = GAMES) -> RunProgress:
    """The run's counters, with the games already recorded (``keys``, from ``counted_keys``) counted
    in; one key in memory at a time."""
    total = plan.total
    progress = RunProgress(total=total, track_live=track_live, place=play_place(plan))
    progress.know_conditions(plan.condition_specs(games))
    pending: list[Any] = []

    def ids() -> Iterator[int]:
        for key in keys:
            if 0 <= key.game_id < total:
                pending.append(key)
                yield key.game_id

    for spec in plan.specs_for(ids(), games):  # one spec per id, the plan's conditions built once
        key = pending.pop()
        progress.done += 1
        progress.count_recorded(spec, key.outcome, key.error.kind if key.error else None, key.scores)
    return progress


async def play_plan(
    run: RunDir,
    plan: Plan,
    factory: PolicyFactory,
    *,
    recorded: IdSet,
    concurrency: int,
    progress: RunProgress | None = None,
    observers: Iterable[Any] = (),
    log_level: str = "info",
    transcripts: bool | str = False,
    games: Mapping[str, Game] = GAMES,
    spending: Spending | None = None,
    executor: Executor | None = None,
    limit: int | None = None,
    stop: StopStarting | None = None,
    on_written: Callable[[GameRecord], None] | None = None,
) -> None:
    """Play the games of ``plan`` not in ``recorded`` into ``run`` (in ``play_order``; the first
    ``limit`` of them, if given), in this process or on ``executor``. When models play here, games start as the limits serve them and
    within ``spending``'s caps (``engine.play.pacing``). After ``stop.stop()`` no game starts.
    Cancelling the caller's scope stops the run; every record written before stays, and the log
    says the run was interrupted. ``on_written`` is given each record once it is on disk, its
    transcript too (the rollouts build their groups from what is on disk)."""
    total = plan.total
    todo = play_order(plan, recorded) if limit is None else islice(play_order(plan, recorded), limit)
    if stop is not None:
        todo = stop.until_stopped(todo)
    finished = False
    with run.log_path.open("a", encoding="utf-8") as log_stream, run.writer() as writer:
        write = writer.write if on_written is None else _then(writer.write, on_written)
        # When models or people play, games end seconds apart, not thousands a second: each line is flushed at once.
        slow = any(is_model(name) or is_human(name) for names in plan.agents for name in names)
        log = RunLog(log_stream, log_level, flush_every=0 if slow else FLUSH_SECONDS)
        log.info("run_started", run_dir=str(run.path), config=msgspec.to_builtins(plan), to_play=total - sum(1 for i in recorded if i < total))
        executor = executor or LocalExecutor()
        if models_play(plan):
            from engine.backends import HubContext

            # The servers' logs and batch mode's batches go in the run; a resume answers the batched
            # calls of the games it plays again.
            factory.hub = factory.hub.for_run(HubContext(run_dir=run.path, replayed=lambda game_id: game_id not in recorded))
        # True (or "full"): full transcripts; "messages": messages-only transcripts (``engine.records.transcripts``)
        # Games against models or people are few and dear: each transcript is written as its game ends.
        # A record is written once its game's transcript is on disk: a kill never leaves one without the other.
        transcript_writer = (TranscriptWriter(run.path, full=transcripts != "messages", at_once=slow, records=write)
                             if transcripts else None)
        if not transcripts:
            (run.path / NO_TRANSCRIPTS_FILE).touch()
        try:
            async with factory:
                try:
                    await executor.play(
                        plan, todo, factory=factory, concurrency=concurrency, progress=progress,
                        on_record=write if transcript_writer is None else transcript_writer.record,
                        observers=[GameLog(log, debug=log_level == "debug"), *observers], games=games,
                        transcripts=transcript_writer, spending=spending if models_play(plan) else None,
                    )
                finally:
                    write_usage(run.path, executor.summaries(factory), log)
            finished = True
        finally:
            if transcript_writer is not None:
                transcript_writer.close()
            done = progress.done if progress is not None else None
            if spending is not None and spending.stopped is not None:
                log.warning("run_capped", reason=spending.stopped, cost_usd=round(spending.cost, 6), tokens=spending.tokens)
            if factory.hub.prices.missing:
                log.warning("no_price", models=sorted(factory.hub.prices.missing))
            interrupted = not finished or (stop is not None and stop.stopped)
            log.info("run_interrupted" if interrupted else "run_finished", games_recorded=done, games_total=plan.total)


def _then(write: Callable[[GameRecord], None], after: Callable[[GameRecord], None]) -> Callable[[GameRecord], None]:
    def both(record: GameRecord) -> None:
        write(record)
        after(record)

    return both


class Tally(msgspec.Struct):
    """How the games of a run ended: counts only."""

    games: int = 0
    lost: int = 0  # to the infrastructure
    other_errors: int = 0

    @property
    def scored(self) -> int:
        return self.games - self.lost - self.other_errors


def finish(run: RunDir, plan: Plan, *, complete: bool) -> tuple[Tally, list[ConditionSummary]]:
    """After playing: sort the results if every game is recorded (``complete``), and write the
    summary; one record in memory at a time."""
    if complete:
        run.finalize(plan.total)
    totals, tally = RunTotals(), Tally()
    for record in run.iter_records():
        totals.add(record)
        tally.games += 1
        if is_infra_error(record):
            tally.lost += 1
        elif record.outcome == "error":
            tally.other_errors += 1
    summaries = [condition_summary(c) for c in totals.conditions]
    (run.path / SUMMARY_FILE).write_bytes(msgspec.json.format(msgspec.json.encode(summaries)) + b"\n")
    write_games_csv(run.iter_records, run.path / GAMES_FILE)
    return tally, summaries
