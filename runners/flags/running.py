"""The running flags (where the run goes, how many games at once, what is kept, which executor) and
the step from a command line to an open run session (``engine.session.opening``)."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from runners.args import OneLineParser, bounded, choice, integer
from runners.flags.models import add_model_arguments, settings_from_args
from runners.flags.seats import SEAT_FLAGS, add_seat_arguments, check_seats, people_play
from runners.flags.spending import add_spending_arguments, check_detect, check_prices, make_forecast

if TYPE_CHECKING:  # the session is opened after the flags are read: they alone load fast
    from engine.backends import BackendSettings
    from engine.policies import PolicyFactory
    from engine.records import IdSet, Plan
    from engine.session import Before, Session

DEFAULT_CONCURRENCY = 256
RUNS_ROOT = Path("runs")
LOG_LEVELS = ["debug", "info", "warning", "error"]
DEFAULT_GRACE = 5.0  # seconds: short, as a service manager's SIGKILL often follows SIGTERM within ten


def add_running_arguments(parser: argparse.ArgumentParser) -> None:
    run = parser.add_argument_group("running")
    run.add_argument("--concurrency", type=integer(1), metavar="C", help=f"games in flight at once (default {DEFAULT_CONCURRENCY}; 1 when a person plays a seat)")
    run.add_argument("--out", type=Path, metavar="RUN_DIR", help="run directory (default runs/<UTC time>)")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR, skipping recorded games")
    run.add_argument("--repair", action="store_true", help="with --resume: move damaged lines, records of games outside the plan and records that contradict it (another seed, game, parameters, options or agents) aside (results.damaged.jsonl) first")
    run.add_argument("--replay-errors", action="store_true", help="with --resume: play again the games that ended in an error not a player's (a policy of your own that failed, requests the provider refused), once its cause is fixed; their records are moved to results.replayed.jsonl first")
    run.add_argument("--no-dashboard", action="store_true", help="no live display: a summary line every few seconds")
    run.add_argument("--grace", type=bounded(float, 0, what="seconds >= 0"), default=DEFAULT_GRACE, metavar="SECONDS", help=f"on Ctrl-C or SIGTERM, start no game and give the games in flight SECONDS to finish and be recorded (default {DEFAULT_GRACE:g}; a second signal stops at once); those still playing then are played again by --resume")
    run.add_argument("--limit", type=integer(1), metavar="N", help="play at most N more games of the plan now (every condition fills at once), then stop; --resume plays the rest (not saved with the run)")
    add_keeping_arguments(run)
    run.add_argument("--executor", type=choice(["local", "ray"]), default="local", metavar="KIND", help="local (this process, default) or ray (workers on a Ray cluster: pip install -e '.[ray]')")
    run.add_argument("--workers", type=integer(1), default=2, metavar="W", help="with --executor ray: worker processes (default 2)")
    run.add_argument("--ray-address", metavar="ADDR", help="with --executor ray: an existing cluster (auto, or HOST:PORT); default: a local cluster started for the run")
    add_seat_arguments(run)
    add_model_arguments(parser)
    add_spending_arguments(parser)


def add_keeping_arguments(group: Any) -> None:
    """What the run keeps beside its records, and its log's level."""
    group.add_argument("--transcripts", action="store_true", help="full transcripts: every turn's view, prompt and raw reply too (transcripts.jsonl.gz)")
    group.add_argument("--no-messages", action="store_true", help="keep no transcripts at all (by default transcripts.jsonl.gz keeps every game's messages and actions)")
    group.add_argument("--log-level", type=choice(LOG_LEVELS), default="info", metavar="LEVEL", help="level of the run's JSON log (default info)")


def concurrency(args: argparse.Namespace, plan: Plan, batch_size: int | None = None) -> int:
    """Games in flight: as given, else one at a time when a person plays (a terminal shows one form),
    else, in batch mode (``batch_size``), as many as a batch holds calls, so that a batch carries a
    turn of every game in flight."""
    if args.concurrency is not None:
        return args.concurrency
    if people_play(plan):
        return 1
    return max(DEFAULT_CONCURRENCY, batch_size or 0)


def transcripts_kept(args: argparse.Namespace) -> bool | str:
    """What ``play_plan`` keeps of each game: full transcripts, messages only (the default) or nothing."""
    return True if args.transcripts else (False if args.no_messages else "messages")


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
    session: Session  # holds the run's lock until the run ends
    command: str  # the complete command that continues the run

    @property
    def plan(self) -> Plan:
        return self.session.plan

    @property
    def recorded(self) -> IdSet:
        return self.session.recorded


def open_run(
    parser: OneLineParser,
    args: argparse.Namespace,
    *,
    new_plan: Callable[[], Plan] | None,
    check_saved: Callable[[Plan], None],
    factory: PolicyFactory,
    out_name: str = "",
    model_settings: BackendSettings | None = None,
    check_plan: Callable[[Before], None] | None = None,
) -> Prepared:
    """The run session of the command line: ``new_plan()`` in a new directory, or ``args.resume``
    with its saved plan checked by ``check_saved``. ``model_settings``: what a new run's model flags
    change, as a resumed run's own (a branch run: those of the run it branches); ``check_plan``: more
    checks of the plan, new or resumed, with the model settings set. Exits with status 2
    on any problem; with ``--dry-run`` prints the forecast and exits before anything is written."""
    from engine.session import SessionError, open_session

    if args.executor == "local" and args.ray_address is not None:
        parser.error("argument --ray-address: give it with --executor ray")
    if args.resume is not None and args.out is not None and args.out != args.resume:
        parser.error("argument --out: cannot be combined with --resume of another directory")
    if args.repair and args.resume is None:
        parser.error("argument --repair: it repairs a run being resumed; give --resume RUN_DIR")
    if args.replay_errors and args.resume is None:
        parser.error("argument --replay-errors: it plays again games of a run being resumed; give --resume RUN_DIR")
    check_detect(parser, args)

    def check(before: Before) -> None:
        if before.resumed:
            check_saved(before.plan)
        if args.executor != "local" and factory.hub.settings.batch.enabled:
            parser.error("argument --batch: batches are sent by this process only; drop --executor ray")
        check_seats(parser, args, before.plan)
        if check_plan is not None:
            check_plan(before)
        check_prices(parser, args, before.plan, factory.hub)
        if args.dry_run:
            dry_run(before, factory, args)

    try:
        session = open_session(
            factory, plan=new_plan, resume=args.resume, out=args.out or default_out(out_name),
            settings=lambda saved: settings_from_args(args, saved or model_settings), check=check, repair=args.repair,
            replay_errors=args.replay_errors, transcripts=transcripts_kept(args) is not False,
        )
    except SessionError as exc:
        parser.error(f"argument --{exc.about}: {exc}" if exc.about else str(exc))
    if session.repaired is not None:
        moved, aside = session.repaired
        print(f"Repaired: {moved} damaged line{'s' * (moved != 1)} moved to {aside}" if moved else "Repaired: no damaged line.")
    for line in session.replays.lines():
        print(line)
    return Prepared(args, session, resume_command(parser.prog, args, session))


def dry_run(before: Before, factory: PolicyFactory, args: argparse.Namespace) -> NoReturn:
    """Print the forecast and exit: nothing written, no call made."""
    from runners.dashboard.display import wide_console
    from runners.dashboard.spending import print_detection, print_forecast

    forecast = make_forecast(before.plan, before.recorded(), factory.hub, args, before.earlier_usage)
    console = wide_console()
    print_forecast(console, forecast, before.plan)
    if args.detect is not None:
        difference, base = args.detect
        print_detection(console, difference, base, before.plan.seeds)
    raise SystemExit(0)


def resume_command(prog: str, args: argparse.Namespace, session: Session) -> str:
    """The command that continues this run as it was started: the plan and the model settings are
    saved with the run; the running flags that change what is written or how fast are repeated."""
    parts = [*prog.split(), "--resume", str(session.run.path)]
    if args.transcripts:
        parts.append("--transcripts")
    if args.no_messages:
        parts.append("--no-messages")
    if args.concurrency is not None:
        parts += ["--concurrency", str(args.concurrency)]
    for field, name in SEAT_FLAGS.items():
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
