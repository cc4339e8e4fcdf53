"""Run a grid of conditions as one concurrent run, every condition on the same seeds.

    python -m runners.sweep examples/table1_feedback.toml
    python -m runners.sweep --resume runs/table1-20261121-101500
"""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from engine import PolicyFactory
from engine.plan import Grid, load_grid
from engine.records import Plan
from puzzles import GAMES

from runners.args import OneLineParser, choice, integer
from runners.flags.running import Prepared, add_running_arguments, open_run


PROG = "python -m runners.sweep"


def build_parser(prog: str = PROG) -> OneLineParser:
    p = OneLineParser(
        prog=prog,
        description="Run every condition of a grid (TOML) on the same seeds, as one concurrent run.",
    )
    p.add_argument("grid", nargs="?", type=Path, help="the grid file (not needed with --resume)")
    p.add_argument("--seeds", type=integer(1), metavar="K", help="games per condition, overriding the grid's seeds")
    p.add_argument("--game", type=choice(list(GAMES)), metavar="NAME", help=f"the game, overriding the grid's: {', '.join(GAMES)}")
    add_running_arguments(p)
    return p


def check_policies(parser: OneLineParser, grid: Grid, factory: PolicyFactory, calls: bool = True) -> Grid:
    """The grid with policy names in their saved spelling; exits naming a bad one (``calls=False``:
    a forecast, which calls no model)."""
    game = grid.the_game()
    for names in grid.agents:
        for role, name in zip(game.roster(len(names)), names):
            try:
                factory.check(name, game, role, calls=calls)
            except ValueError as exc:
                parser.error(f"argument grid: agents: {exc}")
    agents = [[factory.canonical(n) for n in names] for names in grid.agents]
    return msgspec.structs.replace(grid, agents=agents)


def prepare(argv: list[str] | None, factory: PolicyFactory, prog: str = PROG) -> Prepared:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    if args.resume is None and args.grid is None:
        parser.error("argument grid: a grid file is required (or --resume RUN_DIR)")
    if args.resume is not None and (args.grid is not None or args.seeds is not None or args.game is not None):
        parser.error("argument --resume: a resumed sweep uses its saved grid; give no grid file, --seeds or --game")

    def new_plan() -> Plan:
        try:
            grid = load_grid(args.grid, game=args.game)
        except ValueError as exc:
            parser.error(f"argument grid: {exc}")
        if args.seeds is not None:
            grid = msgspec.structs.replace(grid, seeds=args.seeds)
        return check_policies(parser, grid, factory, calls=not args.dry_run)

    def check_saved(saved: Plan) -> None:
        try:
            saved.validate()
        except ValueError as exc:
            parser.error(f"argument --resume: the saved grid cannot be played: {exc}")
        check_policies(parser, saved, factory, calls=not args.dry_run)

    out_name = args.grid.stem if args.grid is not None else ""
    return open_run(
        parser, args, new_plan=None if args.resume else new_plan, check_saved=check_saved, factory=factory, out_name=out_name,
    )


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    factory = PolicyFactory()
    prepared = prepare(argv, factory, prog)
    from runners.runloop import run_and_report  # after the flags are read: --help and bad flags stay fast

    return run_and_report(prepared, factory)


if __name__ == "__main__":
    sys.exit(main())
