"""Play a run's games again with one message changed at a time: a branch run.

    python -m runners.branch runs/first --alternative drop --alternative truncate:8 --turns 1-4
    python -m runners.branch --resume runs/first-branches-20261201-101500

The branch run is a sweep of the first run's grid with a ``branch`` axis (``engine.plan.branching``):
every turn of every role (or those chosen) with every alternative, on the same seeds, so each branch
pairs with the game it branches. It runs like any sweep (limits, cache, resume, transcripts) with
the model settings of the run it branches (its sampling, its response cache; other model flags given
here change the rest), and its report compares each branch with its original (``asymgames report``).

Before its point, a branch is the recorded game: a model seat replays its recorded calls from the
first run's full transcripts (``--transcripts``; ``engine.play.recorded``), else from the response
cache, else asks its model again, which answers the same only where the request fixes the reply
(temperature 0, or a model seed: the cache's rule). A first run whose models sample and that kept
neither is refused in one line (``check_rebuilt``). The first run is read once (``Origin``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from engine import PolicyFactory, RunDir, RunDirError
from engine.backends import BackendSettings, sampled, split_name
from engine.plan import ALTERNATIVES, Grid, Resample, branch_points, read_alternative
from engine.policies import is_model, models_play
from engine.records import Plan, full_transcripts

from runners.args import OneLineParser, integer
from runners.flags.running import Prepared, add_running_arguments, open_run
from runners.sweep import check_policies

PROG = "python -m runners.branch"


def turn_range(text: str) -> range:
    """``3`` or ``1-4``: the turns (rounds) to branch at."""
    first, _, last = text.partition("-")
    if not first.isdigit() or (last and not last.isdigit()):
        raise ValueError(f"turns are N or FIRST-LAST, got {text!r}")
    start, stop = int(first), int(last or first)
    if start < 1 or stop < start:
        raise ValueError(f"turns count from 1 and FIRST <= LAST, got {text!r}")
    return range(start, stop + 1)


@dataclass(frozen=True)
class Origin:
    """What a branch run needs of the run it branches, read once."""

    path: Path
    grid: Grid
    settings: BackendSettings | None  # its model settings (None: saved before they were)
    finished: dict[int, int]  # the games that ended without error: game id -> turns played
    transcribed: set[int]  # the games whose last transcript is full (``--transcripts``)

    @classmethod
    def read(cls, path: Path) -> Origin:
        """RunDirError or OSError where the run cannot be read."""
        run = RunDir.open(path)
        finished = {record.game_id: record.turns for record in run.iter_records() if record.outcome != "error"}
        return cls(path, run.config(), run.model_settings(), finished, full_transcripts(path))

    def replayed_settings(self) -> BackendSettings | None:
        """Its model settings, naming it as the run whose full transcripts the model seats replay
        (``BackendSettings.replay``) where models play it and it kept some."""
        if models_play(self.grid) and self.transcribed:
            return msgspec.structs.replace(self.settings or BackendSettings(), replay=str(self.path.resolve()))
        return self.settings


def finished_seeds(grid: Grid, finished: list[int]) -> dict[str, Any]:
    """The grid's seeds cut to those every condition of the run finished (``finished``: the ids of its
    games that ended without error; a run stopped early:
    ``seeds`` and ``seed_indices``); nothing when it finished them all. ValueError when it
    finished no seed in every condition."""
    conditions = grid.total // grid.seeds
    done = Counter(game_id % grid.seeds for game_id in finished if 0 <= game_id < grid.total)
    numbers = [i for i in range(grid.seeds) if done[i] == conditions]
    if len(numbers) == grid.seeds:
        return {}
    if not numbers:
        raise ValueError("it finished no seed in every condition, so no game pairs with its branches")
    indices = [grid.seed_indices[i] if grid.seed_indices else i for i in numbers]
    return {"seeds": len(indices), "seed_indices": indices}


def build_parser(prog: str = PROG) -> OneLineParser:
    p = OneLineParser(prog=prog, description="Play a run's games again with one message changed at a time (a branch run).")
    p.add_argument("origin", nargs="?", type=Path, help="the run to branch (not needed with --resume)")
    p.add_argument("--alternative", action="append", metavar="ALT", help=f"what is said instead: {', '.join(ALTERNATIVES)} (repeatable; default drop)")
    p.add_argument("--turns", metavar="N|FIRST-LAST", help="the turns (rounds) to branch at (default: every turn a game of the run played)")
    p.add_argument("--role", action="append", metavar="ROLE", help="the seats whose messages change (repeatable; default every seat)")
    p.add_argument("--k", type=integer(1), default=1, metavar="K", help="branches of each point for the alternatives that draw (resample, noise; default 1)")
    add_running_arguments(p)
    return p


def branch_grid(parser: OneLineParser, origin: Origin, args: argparse.Namespace) -> Grid:
    """The origin's grid with the branch axis; exits naming what is wrong."""
    grid = origin.grid
    if grid.branch:
        parser.error(f"argument origin: {origin.path} is itself a branch run; branch the run it branches")
    played = max(origin.finished.values(), default=0)
    if played == 0:
        parser.error(f"argument origin: {origin.path} has no finished games to branch")
    alternatives = args.alternative or ["drop"]
    for alternative in alternatives:
        try:
            read_alternative(alternative)
        except ValueError as exc:
            parser.error(f"argument --alternative: {exc}")
    try:
        turns = turn_range(args.turns) if args.turns else range(1, played + 1)
    except ValueError as exc:
        parser.error(f"argument --turns: {exc}")
    roles = tuple(args.role or grid.the_game().roster(len(grid.agents[0])))
    if any(isinstance(read_alternative(a), Resample) for a in alternatives):
        for roster in grid.agent_rosters():
            scripted = [role for role in roles if role in roster and not is_model(roster[role])]
            if scripted:
                parser.error(f"argument --alternative: resample needs a model in the seat; {scripted[0]} plays {roster[scripted[0]]}")
    points = branch_points(turns, roles, alternatives, args.k)
    try:
        seeds = finished_seeds(grid, list(origin.finished))
    except ValueError as exc:
        parser.error(f"argument origin: {origin.path}: {exc}")
    branched = msgspec.structs.replace(grid, name=f"{grid.name}-branches", branch=points, branch_from=str(origin.path), **seeds)
    try:
        branched.validate()
    except ValueError as exc:
        parser.error(f"argument --role: {exc}" if "role" in str(exc) else str(exc))
    return branched


def sampling_models(plan: Plan, settings: BackendSettings) -> list[str]:
    """The models of ``plan`` whose replies the request does not fix: temperature above 0 with no
    model seed, or an API that takes neither (the response cache's rule, ``engine.backends.sampled``)."""
    found = []
    for name in sorted({name for names in plan.agents for name in names if is_model(name)}):
        try:
            kind = settings.endpoint(split_name(name)[0]).kind
        except ValueError:
            continue  # not a model this run can call: said where the policies are checked
        if sampled(kind, settings.options):
            found.append(name)
    return found


def check_rebuilt(parser: OneLineParser, origin: Origin | Path, plan: Plan, settings: BackendSettings, about: str = "origin") -> None:
    """Exit in one line, before any game, where a model seat of ``plan`` samples (``settings``: the
    branch run's) and the run branched (read here where given as a path) kept neither full transcripts
    of its games nor those replies in the response cache (on, with --cache-sampled, then and now): the
    turns before a branch point could not be played as they were."""
    models = sampling_models(plan, settings)
    if not models:
        return
    options = settings.options
    how = f"temperature {options.temperature:g}, no model seed" if options.temperature > 0 and options.seed is None else "an API that takes no seed"
    sampling = f"{models[0]} sampled ({how})"
    if isinstance(origin, Path):
        try:
            origin = Origin.read(origin)
        except (RunDirError, OSError) as exc:
            if settings.cache.mode == "off" or not settings.cache.sampled:
                parser.error(f"argument {about}: the run branched, {origin}, cannot be read ({exc}), and {sampling}: its full "
                             "transcripts play the model seats' turns before each branch point as they were")
            return
    kept = origin.settings or BackendSettings()
    missing = len(origin.finished.keys() - origin.transcribed)
    if missing == 0 or (kept.cache.mode == "on" and kept.cache.sampled and settings.cache.mode != "off"):
        return
    parser.error(f"argument {about}: in {origin.path}, {sampling}, and it kept no full transcript of {missing} of its "
                 f"{len(origin.finished)} finished games nor their replies in the response cache, so no branch could play the "
                 "turns before its point as they were; play it again with --transcripts (or --cache on --cache-sampled)")


def prepare(argv: list[str] | None, factory: PolicyFactory, prog: str = PROG) -> Prepared:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.resume is None and args.origin is None:
        parser.error("argument origin: the run to branch is required (or --resume RUN_DIR)")
    if args.resume is not None and args.origin is not None:
        parser.error("argument --resume: a resumed branch run uses its saved grid; give no origin")

    origin: Origin | None = None
    if args.origin is not None:
        try:
            origin = Origin.read(args.origin)
        except (RunDirError, OSError) as exc:
            parser.error(f"argument origin: {exc}")

    def new_plan() -> Plan:
        assert origin is not None  # a new branch run has an origin, read above
        plan = check_policies(parser, branch_grid(parser, origin, args), factory)
        check_rebuilt(parser, origin, plan, factory.settings)
        return plan

    def check_saved(saved: Plan) -> None:
        if not saved.branch:
            parser.error(f"argument --resume: {args.resume} is not a branch run (resume it with asymgames sweep)")
        check_policies(parser, saved, factory)
        settings = factory.settings
        check_rebuilt(parser, Path(settings.replay or saved.branch_from), saved, settings, about="--resume")

    out_name = f"{args.origin.name}-branches" if args.origin is not None else ""
    return open_run(
        parser, args, new_plan=None if args.resume else new_plan, check_saved=check_saved, factory=factory,
        out_name=out_name, model_settings=origin.replayed_settings() if origin is not None else None,
    )


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    factory = PolicyFactory()
    prepared = prepare(argv, factory, prog)
    from runners.runloop import run_and_report

    return run_and_report(prepared, factory)


if __name__ == "__main__":
    sys.exit(main())
