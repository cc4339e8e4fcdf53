"""Run many games of one condition concurrently and summarise them.

    python -m runners.concurrent --games 1000
    python -m runners.concurrent --game NAME --agent ROLE=POLICY --topology chain
    python -m runners.concurrent --resume runs/20261121-101500
    python -m runners.concurrent --game NAME --agent ROLE=human --participant P07

``--game NAME`` picks the game (default: the registry's); the fields of its parameter struct become
flags, and every role it has gets a flag of its own (``--ROLE POLICY``) besides ``--agent ROLE=POLICY``.
A role played by ``human`` is played by a person at this terminal (``runners.seats.terminal``), who
answers on stdin; such a run plays one game at a time and shows no dashboard.
"""

from __future__ import annotations

import sys

from engine.policies import PolicyFactory
from puzzles import Game
from runners.args import OneLineParser
from runners.flags.game import add_game_arguments, check_saved, chosen_game, config_from_args
from runners.flags.running import Prepared, add_running_arguments, open_run

PROG = "python -m runners.concurrent"


def build_parser(factory: PolicyFactory, game: Game, prog: str = PROG) -> OneLineParser:
    p = OneLineParser(
        prog=prog,
        description=(
            "Run games of one condition concurrently (scripted agents offline) and summarise them. "
            "A role given as 'human' is played by a person at this terminal, answering on stdin."
        ),
    )
    add_game_arguments(p, game, factory)
    add_running_arguments(p)
    return p


def prepare(argv: list[str] | None, factory: PolicyFactory, prog: str = PROG) -> Prepared:
    """Parse and check everything before any game runs; exits with status 2 on bad input."""
    game = chosen_game(argv)
    parser = build_parser(factory, game, prog)
    args = parser.parse_args(argv)  # an unknown --game is reported here
    return open_run(
        parser, args,
        new_plan=None if args.resume else (lambda: config_from_args(parser, args, game, factory)),
        check_saved=lambda saved: check_saved(parser, args, saved, game, factory), factory=factory,
    )


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    factory = PolicyFactory()
    prepared = prepare(argv, factory, prog)
    from runners.runloop import run_and_report  # after the flags are read: --help and bad flags stay fast

    return run_and_report(prepared, factory)


if __name__ == "__main__":
    sys.exit(main())
