"""Run many AsymPuzl games concurrently and summarise them.

    python -m runners.concurrent --games 1000
    python -m runners.concurrent --resume runs/20261121-101500
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TextIO

import anyio
import msgspec
import structlog
from rich.console import Console

from engine import PolicyFactory, RunConfig, RunDir, RunDirError, RunProgress, run_games, summarize
from engine.records import GameRecord
from feedback.modes import MODES
from puzzles.asympuzl import ROLES, InvalidParameter

from ._display import ProgressDisplay, summary_table

EXIT_INTERRUPTED = 130
DEFAULT_CONCURRENCY = 256
RUNS_ROOT = Path("runs")

# Flags that define the games; on --resume they must be absent or equal to the saved run's.
GAME_FLAGS = {
    "games": "--games", "size": "--size", "distractors": "--distractors",
    "distractors_in": "--distractors-in", "feedback": "--feedback", "max_turns": "--max-turns",
    "history": "--history", "alice": "--alice", "bob": "--bob", "seed": "--seed",
}


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments give one line naming the argument and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _integer(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return value

    return parse


_positive = _integer(1)
_count = _integer(0)


def _history(text: str) -> int | str:
    if text.strip().lower() in ("full", "all"):
        return "full"
    return _count(text)


def _choice(choices: list[str]):
    def parse(text: str) -> str:
        key = text.strip().lower().replace("-", "_")
        if key not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(choices)}")
        return key

    return parse


def build_parser(factory: PolicyFactory) -> OneLineParser:
    policies = ", ".join(factory.names())
    p = OneLineParser(
        prog="python -m runners.concurrent",
        description="Run AsymPuzl games concurrently (scripted agents offline) and summarise them.",
    )
    game = p.add_argument_group("games (saved with the run)")
    game.add_argument("--games", type=_positive, metavar="G", help="number of games (default 1000)")
    game.add_argument("--size", type=_positive, metavar="N", help="puzzle size N (default 5)")
    game.add_argument("--distractors", type=_count, metavar="D", help="distractor pieces D, 0 to 10 (default 0)")
    game.add_argument("--distractors-in", type=_choice(list(ROLES)), metavar="ROLE", help="whose clues get the distractors (default alice)")
    game.add_argument("--feedback", type=_choice(list(MODES)), metavar="MODE", help=f"feedback mode: {', '.join(MODES)} (default own_detailed)")
    game.add_argument("--max-turns", type=_positive, metavar="T", help="turn limit T (default 2N)")
    game.add_argument("--history", type=_history, metavar="H", help="messages of each agent kept in the prompt: 0, 1, 2, ... or full (default 1)")
    game.add_argument("--alice", metavar="POLICY", help=f"Alice's policy: {policies} (default share_everything)")
    game.add_argument("--bob", metavar="POLICY", help=f"Bob's policy: {policies} (default share_everything)")
    game.add_argument("--seed", type=int, metavar="S", help="run seed; game i gets a seed derived from it and i (default 0)")
    run = p.add_argument_group("running")
    run.add_argument("--concurrency", type=_positive, metavar="C", default=DEFAULT_CONCURRENCY, help=f"games in flight at once (default {DEFAULT_CONCURRENCY})")
    run.add_argument("--out", type=Path, metavar="RUN_DIR", help="run directory (default runs/<UTC time>)")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR, skipping recorded games")
    run.add_argument("--no-dashboard", action="store_true", help="no live display: a summary line every few seconds")
    run.add_argument("--log-level", type=_choice(["debug", "info", "warning", "error"]), metavar="LEVEL", default="info", help="level of the run's JSON log (default info)")
    return p


def config_from_args(args: argparse.Namespace, factory: PolicyFactory) -> RunConfig:
    values = {k: _given(args, k, factory) for k in GAME_FLAGS if getattr(args, k) is not None}
    return RunConfig(**values)


def _given(args: argparse.Namespace, field: str, factory: PolicyFactory):
    """A game flag's value as it would be saved: policy names in one spelling, 'full' as None."""
    value = getattr(args, field)
    if field == "history" and value == "full":
        return None
    if field in ("alice", "bob"):
        return factory.canonical(value)
    return value


def _given_differs(args: argparse.Namespace, saved: RunConfig, factory: PolicyFactory) -> str | None:
    for field, flag in GAME_FLAGS.items():
        if getattr(args, field) is None:
            continue
        given = _given(args, field, factory)
        have = saved.turn_limit if field == "max_turns" else getattr(saved, field)
        if given != have:
            shown = lambda v: "full" if field == "history" and v is None else v  # noqa: E731
            return f"argument {flag}: the run being resumed has {flag} {shown(have)}, got {shown(given)}"
    return None


def check_config(parser: OneLineParser, config: RunConfig, factory: PolicyFactory) -> None:
    try:
        config.validate()
    except InvalidParameter as exc:
        parser.error(f"argument {GAME_FLAGS.get(exc.field, exc.field)}: {exc}")
    for flag, name in (("--alice", config.alice), ("--bob", config.bob)):
        try:
            factory.check(name)
        except ValueError as exc:
            parser.error(f"argument {flag}: {exc}")


def default_out() -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    path = RUNS_ROOT / stamp
    n = 2
    while path.exists():
        path = RUNS_ROOT / f"{stamp}-{n}"
        n += 1
    return path


class Prepared(NamedTuple):
    args: argparse.Namespace
    config: RunConfig
    run: RunDir
    lock: Any  # held until the process ends
    recorded: set[int]


def prepare(argv: list[str] | None, factory: PolicyFactory) -> Prepared:
    """Parse and check everything before any game runs; exits with status 2 on bad input."""
    parser = build_parser(factory)
    args = parser.parse_args(argv)
    try:
        if args.resume is not None:
            if args.out is not None and args.out != args.resume:
                parser.error("argument --out: cannot be combined with --resume of another directory")
            run = RunDir.open(args.resume)
            config = run.config()
            problem = _given_differs(args, config, factory)
            if problem:
                parser.error(problem)
            check_config(parser, config, factory)
        else:
            config = config_from_args(args, factory)
            check_config(parser, config, factory)
            run = RunDir.create(args.out or default_out(), config)
        lock = run.lock()
        recorded = run.recorded_ids()
    except (RunDirError, ValueError) as exc:
        parser.error(str(exc))
    except OSError as exc:
        where = args.resume or args.out or "the run directory"
        parser.error(f"argument {'--resume' if args.resume else '--out'}: cannot use {where}: {exc.strerror or exc}")
    return Prepared(args, config, run, lock, recorded)


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


async def execute(prepared: Prepared, factory: PolicyFactory, console: Console) -> bool:
    """Run the games not yet recorded; True if the run finished, False if it was interrupted."""
    args, config, run = prepared.args, prepared.config, prepared.run
    todo = [i for i in range(config.games) if i not in prepared.recorded]
    progress = RunProgress(total=config.games, already_done=config.games - len(todo))
    interactive = console.is_terminal and not args.no_dashboard
    interrupted = False

    with run.log_path.open("a", encoding="utf-8") as log_stream, run.writer() as writer:
        log = make_logger(log_stream, args.log_level)
        log.info("run_started", run_dir=str(run.path), config=msgspec.to_builtins(config), to_play=len(todo))

        def on_record(record: GameRecord) -> None:
            writer.write(record)
            if record.error is not None:
                log.error("game_error", game_id=record.game_id, **msgspec.to_builtins(record.error))

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
            await run_games(
                (config.spec(i) for i in todo),
                factory=factory,
                concurrency=args.concurrency,
                on_record=on_record,
                progress=progress,
            )
            outer.cancel_scope.cancel()
        display.close()
        log.info(
            "run_interrupted" if interrupted else "run_finished",
            games_recorded=progress.done, games_total=config.games,
        )
    return not interrupted


def main(argv: list[str] | None = None) -> int:
    factory = PolicyFactory()
    prepared = prepare(argv, factory)
    try:
        return _run(prepared, factory)
    finally:
        prepared.lock.close()


def _run(prepared: Prepared, factory: PolicyFactory) -> int:
    config, run = prepared.config, prepared.run
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 132))
    started = time.perf_counter()
    try:
        finished = anyio.run(execute, prepared, factory, console)
        elapsed = time.perf_counter() - started
        if finished:
            run.finalize(config.games)
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
    count = f"{len(records)} of {config.games} games" if records is not None else "finished games"
    console.print(
        f"Interrupted: {count} recorded in {run.results_path}. "
        f"Continue with: python -m runners.concurrent --resume {run.path}"
    )
    return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
