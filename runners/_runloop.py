"""What every runner shares: run-directory set-up, the run loop with progress and Ctrl-C, the end."""

from __future__ import annotations

import argparse
import signal
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TextIO

import anyio
import msgspec
import structlog
from rich.console import Console

from engine import PolicyFactory, RunDir, RunDirError, RunProgress, run_games, summarize
from bus import Act
from engine.records import GameRecord
from engine.results import Plan
from engine.spec import GameSpec
from engine.transcripts import TranscriptWriter

from ._display import ProgressDisplay, summary_table
from ._models import add_model_arguments

EXIT_INTERRUPTED = 130
DEFAULT_CONCURRENCY = 256
RUNS_ROOT = Path("runs")


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments give one line naming the argument and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def integer(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return value

    return parse


def choice(choices: list[str]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        key = text.strip().lower().replace("-", "_")
        if key not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(choices)}")
        return key

    return parse


def add_running_arguments(parser: argparse.ArgumentParser) -> None:
    run = parser.add_argument_group("running")
    run.add_argument("--concurrency", type=integer(1), default=DEFAULT_CONCURRENCY, metavar="C", help=f"games in flight at once (default {DEFAULT_CONCURRENCY})")
    run.add_argument("--out", type=Path, metavar="RUN_DIR", help="run directory (default runs/<UTC time>)")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR, skipping recorded games")
    run.add_argument("--no-dashboard", action="store_true", help="no live display: a summary line every few seconds")
    run.add_argument("--transcripts", action="store_true", help="also write every game's full transcript (transcripts.jsonl)")
    run.add_argument("--log-level", type=choice(["debug", "info", "warning", "error"]), default="info", metavar="LEVEL", help="level of the run's JSON log (default info)")
    add_model_arguments(parser)


def default_out(name: str = "") -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = f"{name}-{stamp}" if name else stamp
    path = RUNS_ROOT / base
    n = 2
    while path.exists():
        path = RUNS_ROOT / f"{base}-{n}"
        n += 1
    return path


class Prepared(NamedTuple):
    args: argparse.Namespace
    plan: Plan
    run: RunDir
    lock: Any  # held until the run ends
    recorded: dict[int, Any]  # game id -> RecordKey of what is already recorded
    command: str  # how to run this runner, for the resume hint


def open_run(
    parser: OneLineParser,
    args: argparse.Namespace,
    *,
    new_plan: Callable[[], Plan] | None,
    check_saved: Callable[[Plan], None],
    out_name: str = "",
) -> Prepared:
    """Create the run directory for ``new_plan()``, or open ``args.resume`` and check its saved plan
    with ``check_saved``; lock it and read what is recorded. Exits with status 2 on any problem."""
    try:
        if args.resume is not None:
            if args.out is not None and args.out != args.resume:
                parser.error("argument --out: cannot be combined with --resume of another directory")
            run = RunDir.open(args.resume)
            plan = run.config()
            check_saved(plan)
        else:
            assert new_plan is not None
            plan = new_plan()
            run = RunDir.create(args.out or default_out(out_name), plan)
        lock = run.lock()
        # Games lost to the infrastructure (provider or network) are played again.
        recorded = {i: key for i, key in run.recorded().items() if not is_infra_error(key)}
    except (RunDirError, ValueError) as exc:
        parser.error(str(exc))
    except OSError as exc:
        flag = "--resume" if args.resume else "--out"
        where = args.resume or args.out or "the run directory"
        parser.error(f"argument {flag}: cannot use {where}: {exc.strerror or exc}")
    return Prepared(args, plan, run, lock, recorded, parser.prog)


def is_infra_error(key: Any) -> bool:
    return key.error is not None and key.error.kind == "infra_error"


class GameLog:
    """Logs each game's end (info), its errors (error) and, at debug level, every agent turn.
    Every line carries the game id; turn lines carry the agent."""

    def __init__(self, log: Any, *, debug: bool) -> None:
        self.log = log
        self.debug = debug

    def game_started(self, spec: GameSpec):
        if not self.debug:
            return None
        log = self.log.bind(game_id=spec.game_id)

        def tap(address: str, message: Any) -> None:
            if isinstance(message, Act):
                log.debug(
                    "turn", agent=message.role, turn=message.turn, message_chars=len(message.message),
                    actions=len(message.actions), rejected=len(message.rejected), format_error=message.format_error,
                )

        return tap

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        if record.error is not None:
            self.log.error("game_error", game_id=record.game_id, **msgspec.to_builtins(record.error))
        else:
            self.log.info("game_finished", game_id=record.game_id, outcome=record.outcome, turns=record.turns)


def write_usage(path: Path, hub: Any, log: Any) -> None:
    """Per model: calls, retries by cause, tokens and cost (``usage.json``); nothing when no model played."""
    if not hub.backends():
        return
    summary = hub.summary()
    (path / "usage.json").write_bytes(msgspec.json.format(msgspec.json.encode(summary)) + b"\n")
    log.info("model_usage", **summary)


def make_logger(stream: TextIO, level: str):
    return structlog.wrap_logger(
        structlog.WriteLogger(stream),
        wrapper_class=structlog.make_filtering_bound_logger(level),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(),
        ],
    )


def make_progress(prepared: Prepared, track_live: bool) -> RunProgress:
    """The run's counters, with the games already recorded counted in (when resuming)."""
    plan, keys = prepared.plan, prepared.recorded
    recorded = sorted(i for i in keys if i < plan.total)
    progress = RunProgress(total=plan.total, already_done=len(recorded), track_live=track_live)
    progress.know_conditions(plan.condition_specs())
    for spec in plan.specs_for(recorded):
        key = keys[spec.game_id]
        progress.count_recorded(spec, key.outcome, key.error.kind if key.error else None)
    return progress


async def execute(prepared: Prepared, factory: PolicyFactory, console: Console) -> bool:
    """Run the games not yet recorded; True if the run finished, False if it was interrupted."""
    args, plan, run = prepared.args, prepared.plan, prepared.run
    todo = [i for i in range(plan.total) if i not in prepared.recorded]
    interactive = console.is_terminal and not args.no_dashboard
    progress = make_progress(prepared, interactive)
    interrupted = False

    with run.log_path.open("a", encoding="utf-8") as log_stream, run.writer() as writer:
        log = make_logger(log_stream, args.log_level)
        log.info("run_started", run_dir=str(run.path), config=msgspec.to_builtins(plan), to_play=len(todo))
        observers: list = [GameLog(log, debug=args.log_level == "debug")]
        transcripts = TranscriptWriter(run.path) if args.transcripts else None
        if transcripts is not None:
            observers.append(transcripts)

        display = ProgressDisplay(console, progress, interactive=interactive)
        async with anyio.create_task_group() as outer:

            async def watch_signals() -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        interrupted = True
                        outer.cancel_scope.cancel()
                        return

            outer.start_soon(watch_signals)
            outer.start_soon(display.run)
            async with factory:
                display.hub = factory.hub
                try:
                    await run_games(
                        plan.specs_for(todo),
                        factory=factory,
                        concurrency=args.concurrency,
                        on_record=writer.write,
                        progress=progress,
                        observers=observers,
                    )
                finally:
                    write_usage(run.path, factory.hub, log)
            outer.cancel_scope.cancel()
        display.close()
        if transcripts is not None:
            transcripts.close()
        log.info(
            "run_interrupted" if interrupted else "run_finished",
            games_recorded=progress.done, games_total=plan.total,
        )
    return not interrupted


def run_and_report(prepared: Prepared, factory: PolicyFactory) -> int:
    """Play the run, then print the summary table and where the results are. Returns the exit status."""
    try:
        return _run_and_report(prepared, factory)
    finally:
        prepared.lock.close()


def _run_and_report(prepared: Prepared, factory: PolicyFactory) -> int:
    plan, run = prepared.plan, prepared.run
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 132))
    started = time.perf_counter()
    try:
        finished = anyio.run(execute, prepared, factory, console)
        elapsed = time.perf_counter() - started
        if finished:
            run.finalize(plan.total)
        records = run.records()
        summaries = summarize(records)
        if summaries:
            console.print(summary_table(summaries))
        (run.path / "summary.json").write_bytes(msgspec.json.format(msgspec.json.encode(summaries)) + b"\n")
    except KeyboardInterrupt:  # outside the games: every finished record is already on disk
        finished = False
        records = None
    if finished:
        console.print(f"{len(records)} games in {elapsed:.1f}s. Results: {run.results_path}")
        return 0
    count = f"{len(records)} of {plan.total} games" if records is not None else "finished games"
    console.print(
        f"Interrupted: {count} recorded in {run.results_path}. "
        f"Continue with: {prepared.command} --resume {run.path}"
    )
    return EXIT_INTERRUPTED
