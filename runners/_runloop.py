"""What every runner shares: run-directory set-up, the run loop with progress and Ctrl-C, the end."""

from __future__ import annotations

import argparse
import shlex
import signal
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import anyio
from rich.console import Console

from engine import PolicyFactory, RunDir, RunDirError
from engine.session.giveup import SameFailure
from engine.records.rundir import Plan, StorageError
from engine.spending.budget import Spending
from engine.executors import make_executor
from engine.records.ids import IdSet
from engine.session.playing import counted_keys, finish, models_play, new_progress, play_plan, read_usage, recorded_games

from ._args import bounded
from engine.session.collector import tuned_collector
from ._display import ProgressDisplay, counters_section, summary_table
from ._models import add_model_arguments, settings_from_args
from ._spending import add_spending_arguments, caps, check_prices, make_forecast, print_forecast, spending_line
from ._humans import HUMAN_FLAGS, add_human_arguments, check_humans, humans_play, seats_for

EXIT_INTERRUPTED = 130
EXIT_LOST_GAMES = 3  # the run finished, but some games were lost to the infrastructure
EXIT_STORAGE = 4  # the run stopped because its files could not be written
EXIT_CAPPED = 5  # the run stopped starting games at a spending cap; --resume continues it
DEFAULT_CONCURRENCY = 256
RUNS_ROOT = Path("runs")


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments give one line naming the argument and exit status 2."""

    command_forms: dict[str, str] = {}  # "python -m runners.X" -> how the console command spells it, when it runs

    def __init__(self, *args: Any, prog: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, prog=self.command_forms.get(prog, prog) if prog else None, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def integer(minimum: int) -> Callable[[str], int]:
    return bounded(int, minimum, what=f"an integer >= {minimum}")


def choice(choices: list[str]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        key = text.strip().lower().replace("-", "_")
        if key not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(choices)}")
        return key

    return parse


def add_running_arguments(parser: argparse.ArgumentParser) -> None:
    run = parser.add_argument_group("running")
    run.add_argument("--concurrency", type=integer(1), metavar="C", help=f"games in flight at once (default {DEFAULT_CONCURRENCY}; 1 when a person plays a seat)")
    run.add_argument("--out", type=Path, metavar="RUN_DIR", help="run directory (default runs/<UTC time>)")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR, skipping recorded games")
    run.add_argument("--repair", action="store_true", help="with --resume: move damaged lines and records of games outside the plan aside (results.damaged.jsonl) first")
    run.add_argument("--no-dashboard", action="store_true", help="no live display: a summary line every few seconds")
    run.add_argument("--transcripts", action="store_true", help="full transcripts: every turn's view, prompt and raw reply too (transcripts.jsonl)")
    run.add_argument("--no-messages", action="store_true", help="keep no transcripts at all (by default transcripts.jsonl keeps every game's messages and actions)")
    run.add_argument("--log-level", type=choice(["debug", "info", "warning", "error"]), default="info", metavar="LEVEL", help="level of the run's JSON log (default info)")
    run.add_argument("--executor", type=choice(["local", "ray"]), default="local", metavar="KIND", help="local (this process, default) or ray (workers on a Ray cluster: pip install -e '.[ray]')")
    run.add_argument("--workers", type=integer(1), default=2, metavar="W", help="with --executor ray: worker processes (default 2)")
    run.add_argument("--ray-address", metavar="ADDR", help="with --executor ray: an existing cluster (auto, or HOST:PORT); default: a local cluster started for the run")
    add_human_arguments(run)
    add_model_arguments(parser)
    add_spending_arguments(parser)


def concurrency(args: argparse.Namespace, plan: Plan) -> int:
    """Games in flight: as given, else one at a time when a person plays (a terminal shows one form)."""
    if args.concurrency is not None:
        return args.concurrency
    return 1 if humans_play(plan) else DEFAULT_CONCURRENCY


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
    command: str  # the complete command that continues the run


def open_run(
    parser: OneLineParser,
    args: argparse.Namespace,
    *,
    new_plan: Callable[[], Plan] | None,
    check_saved: Callable[[Plan], None],
    factory: PolicyFactory,
    out_name: str = "",
) -> Prepared:
    """Create the run directory for ``new_plan()``, or open ``args.resume`` and check its saved plan
    with ``check_saved``; lock it and read what is recorded. The model settings (the flags, on a
    resume over the saved ones) configure ``factory`` and are saved with the run. Exits with status
    2 on any problem."""
    if args.executor == "local" and args.ray_address is not None:
        parser.error("argument --ray-address: give it with --executor ray")
    try:
        if args.resume is not None:
            if args.out is not None and args.out != args.resume:
                parser.error("argument --out: cannot be combined with --resume of another directory")
            run = RunDir.open(args.resume)
            factory.configure(settings_from_args(args, run.model_settings()))
            plan = run.config()
            check_saved(plan)
            check_humans(parser, args, plan)
            check_prices(parser, args, plan, factory.hub)
            if args.dry_run:
                dry_run(plan, recorded_games(run, plan.total), factory, args, read_usage(run))
        else:
            assert new_plan is not None
            factory.configure(settings_from_args(args))
            plan = new_plan()
            check_humans(parser, args, plan)
            check_prices(parser, args, plan, factory.hub)
            if args.dry_run:
                dry_run(plan, IdSet(), factory, args, None)
            run = RunDir.create(args.out or default_out(out_name), plan)
        lock = run.lock()
        run.save_model_settings(factory.hub.settings)
        run.upgrade()  # results of an earlier format are rewritten before any is added
        if args.repair:
            if args.resume is None:
                parser.error("argument --repair: it repairs a run being resumed; give --resume RUN_DIR")
            moved, aside = run.repair(plan.total)
            print(f"Repaired: {moved} damaged line{'s' * (moved != 1)} moved to {aside}" if moved else "Repaired: no damaged line.")
        recorded = recorded_games(run, plan.total)
    except (RunDirError, ValueError) as exc:
        parser.error(str(exc))
    except OSError as exc:
        flag = "--resume" if args.resume else "--out"
        where = args.resume or args.out or "the run directory"
        parser.error(f"argument {flag}: cannot use {where}: {exc.strerror or exc}")
    return Prepared(args, plan, run, lock, recorded, resume_command(parser.prog, args, run))


def cluster_sections(executor) -> list:
    """The dashboard's sections for a run on a cluster: each model summed over the workers, and a
    row per worker."""
    sections = []
    models = executor.model_rows()
    if models:
        sections.append(counters_section("model", "Models (all workers)", models, priority=2))
    sections.append(counters_section("worker", "Workers", executor.worker_rows(), priority=3))
    return sections


def transcripts_kept(args: argparse.Namespace) -> bool | str:
    """What ``play_plan`` keeps of each game: full transcripts, messages only (the default) or nothing."""
    if args.transcripts:
        return True
    return False if args.no_messages else "messages"


def wide_console() -> Console:
    """The terminal's console; elsewhere (a file, a pipe) one wide enough for the tables."""
    console = Console()
    return console if console.is_terminal else Console(width=max(console.width, 132))


def dry_run(plan: Plan, recorded: IdSet, factory: PolicyFactory, args: argparse.Namespace, earlier: dict | None) -> NoReturn:
    """Print the forecast and exit: nothing written, no call made."""
    print_forecast(wide_console(), make_forecast(plan, recorded, factory.hub, args, earlier), plan)
    raise SystemExit(0)


def resume_command(prog: str, args: argparse.Namespace, run: RunDir) -> str:
    """The command that continues this run as it was started: the plan and the model settings are
    saved with the run; the running flags that change what is written or how fast are repeated."""
    parts = [*prog.split(), "--resume", str(run.path)]
    if args.transcripts:
        parts.append("--transcripts")
    if args.no_messages:
        parts.append("--no-messages")
    if args.concurrency is not None:
        parts += ["--concurrency", str(args.concurrency)]
    for field, name in HUMAN_FLAGS.items():
        value = getattr(args, field, None)
        if value is not None:
            parts += [name, f"{value:g}" if field == "human_timeout" else str(value)]
    if args.log_level != "info":
        parts += ["--log-level", args.log_level]
    if args.no_dashboard:
        parts.append("--no-dashboard")
    if args.executor != "local":
        parts += ["--executor", args.executor, "--workers", str(args.workers)]
        if args.ray_address:
            parts += ["--ray-address", args.ray_address]
    return shlex.join(parts)


def first_leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


class Interrupt:
    """Cancels ``scope`` at the first SIGINT or SIGTERM (Ctrl-C, a kill); ``caught`` says whether one came."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.scope = scope
        self.caught = False

    async def watch(self) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                self.caught = True
                self.scope.cancel()
                return


class Stopped(Exception):
    """The run stopped because its files could not be written; the message says which and why."""


class GaveUp(Exception):
    """The run's first games were all lost to the infrastructure the same way; the message says how."""


def spending_for(prepared: Prepared, factory: PolicyFactory, console: Console) -> Spending | None:
    """The run's spending when models play; with a cap, a forecast first gives the cost of a game
    until games finish (at most: to the turn limit)."""
    args, plan, run = prepared.args, prepared.plan, prepared.run
    if not models_play(plan):
        return None
    earlier = read_usage(run)
    prior = None
    if caps(args):
        fc = make_forecast(plan, prepared.recorded, factory.hub, args, earlier)
        prior = fc.per_game_at_most()
        console.print(
            f"Cap: until games finish, a game is counted at its forecast at most: ${prior.cost:.4f}, {prior.tokens:,.0f} tokens.",
            soft_wrap=True,
        )
    done = sum(1 for i in prepared.recorded if i < plan.total)
    return Spending(factory.hub, plan.total, done=done, earlier=earlier, prior=prior, caps=caps(args))


async def execute(prepared: Prepared, factory: PolicyFactory, console: Console, spending: Spending | None = None) -> bool:
    """Run the games not yet recorded, with the display and Ctrl-C; True if the run finished (or
    stopped at a cap: ``spending.stopped``), False if it was interrupted; Stopped if its files
    could not be written."""
    args, plan, run = prepared.args, prepared.plan, prepared.run
    # A person's form owns the terminal: no dashboard, no summary lines, until the run ends.
    seats = seats_for(args, factory, console) if humans_play(plan) else None
    interactive = console.is_terminal and not args.no_dashboard and seats is None
    progress = new_progress(plan, counted_keys(run), track_live=interactive)
    stopped: str | None = None
    gave_up: list[str] = []
    display = ProgressDisplay(console, progress, interactive=interactive, quiet=seats is not None)
    display.hub = factory.hub
    display.spending = spending
    executor = make_executor(args.executor, workers=args.workers, address=args.ray_address)
    if hasattr(executor, "worker_rows"):  # a cluster: its models' limiters and a row per worker
        display.extra = lambda: cluster_sections(executor)
    async with anyio.create_task_group() as outer:

        signals = Interrupt(outer.cancel_scope)

        def give_up(reason: str) -> None:
            gave_up.append(reason)
            outer.cancel_scope.cancel()

        outer.start_soon(signals.watch)
        outer.start_soon(display.run)
        try:
            await play_plan(
                run, plan, factory, recorded=prepared.recorded, concurrency=concurrency(args, plan), progress=progress,
                log_level=args.log_level, transcripts=transcripts_kept(args),
                observers=[SameFailure(give_up), *([seats] if seats is not None else [])],
                spending=spending, executor=executor,
            )
        except* OSError as group:  # a full disk, a run directory gone: every record before it is kept
            failure = first_leaf(group)
            stopped = str(failure) if isinstance(failure, StorageError) else f"cannot write the run's files: {failure}"
        outer.cancel_scope.cancel()
    display.close()
    if stopped is not None:
        raise Stopped(stopped)
    if gave_up:
        raise GaveUp(gave_up[0])
    return not signals.caught


def run_and_report(prepared: Prepared, factory: PolicyFactory) -> int:
    """Play the run, then print the summary table and where the results are. Returns the exit status."""
    try:
        return _run_and_report(prepared, factory)
    finally:
        prepared.lock.close()


def _run_and_report(prepared: Prepared, factory: PolicyFactory) -> int:
    plan, run = prepared.plan, prepared.run
    console = wide_console()
    spending = spending_for(prepared, factory, console)
    started = time.perf_counter()
    try:
        with tuned_collector():
            finished = anyio.run(execute, prepared, factory, console, spending)
        elapsed = time.perf_counter() - started
        capped = spending is not None and spending.stopped is not None
        tally, summaries = finish(run, plan, complete=finished and not capped)
        if summaries:
            console.print(summary_table(summaries))
        if spending is not None:
            console.print(f"Models: {spending_line(spending)}", soft_wrap=True)
    except KeyboardInterrupt:  # outside the games: every finished record is already on disk
        finished = False
        tally = None
    except GaveUp as stop:
        console.print(
            f"Stopped early: {stop}. Fix that, then continue with: {prepared.command}",
            soft_wrap=True,
        )
        return EXIT_LOST_GAMES
    except Stopped as stop:
        console.print(
            f"Stopped: {stop}. Every game finished before it is in {run.results_path}; "
            f"free the space, then continue with: {prepared.command}",
            soft_wrap=True,
        )
        return EXIT_STORAGE
    if finished and capped:
        console.print(
            f"Stopped starting games at {spending.stopped}. {tally.games} of {plan.total} games recorded in "
            f"{run.results_path}; continue with a higher cap: {prepared.command}",
            soft_wrap=True,
        )
        return EXIT_CAPPED
    if finished:
        console.print(
            f"{tally.games} games in {elapsed:.1f}s: {tally.scored} scored, {tally.lost} lost to the infrastructure, "
            f"{tally.other_errors} ended in other errors. Results: {run.results_path}",
            soft_wrap=True,
        )
        if tally.lost:
            console.print(f"Play the lost games again with: {prepared.command}", soft_wrap=True)
            return EXIT_LOST_GAMES
        return 0
    count = f"{tally.games} of {plan.total} games" if tally is not None else "finished games"
    console.print(
        f"Interrupted: {count} recorded in {run.results_path}. "
        f"Continue with: {prepared.command}",
        soft_wrap=True,
    )
    return EXIT_INTERRUPTED
