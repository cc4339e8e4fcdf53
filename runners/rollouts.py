"""Play rollouts for training: K games of each seed and condition at once, every seat's trajectory
with the game's rewards and group-relative advantages, one group a line in ``RUN/rollouts.jsonl``.

    python -m runners.rollouts --game NAME --agent ROLE=vllm:policy --train ROLE --group 8 --games 100
    python -m runners.rollouts --resume runs/rollouts-20261201-101500
    python -m runners.rollouts ... --vllm-url URL --weights-dir adapters/   # a trainer renames each new adapter in

The games are a run like ``asymgames run`` plays (the same game, model, limit and spending flags,
the dashboard, Ctrl-C, ``--resume``), kept with full transcripts, from which each group is written
as its last game is recorded (``engine.rollouts``). The seats trained, the reward and whether turns
carry their tokens are saved with the run (``rollouts.json``); a resume writes the groups the file
lacks and plays on. ``--weights-dir``: the trained model's new weights while the run plays
(``runners.flags.weights``, ``engine.rollouts.weights_dir``).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import msgspec

from engine.plan import Grid
from engine.policies import PolicyFactory
from engine.rollouts import GroupFile, GroupIds, PolicyWeights, Settings, save_settings, saved_settings
from puzzles import Game
from runners.args import OneLineParser, integer
from runners.flags.game import add_game_arguments, check_saved, chosen_game, config_from_args
from runners.flags.running import Prepared, add_running_arguments, open_run
from runners.flags.weights import add_weights_argument, policy_weights, weights_model

if TYPE_CHECKING:
    from rich.console import Console

    from engine.records import GameRecord
    from engine.rollouts import Weights
    from engine.session import Before
    from engine.spending import Spending
    from runners.ending import Ending

PROG = "python -m runners.rollouts"
DEFAULT_GROUP = 8


def build_parser(factory: PolicyFactory, game: Game, prog: str = PROG) -> OneLineParser:
    p = OneLineParser(prog=prog, description=(
        "Play rollouts for training: K games of each seed at once, every seat's trajectory with the game's rewards "
        "and group-relative advantages, one group a line in RUN/rollouts.jsonl."))
    add_game_arguments(p, game, factory)
    group = p.add_argument_group("rollouts")
    group.add_argument("--group", type=integer(1), metavar="K", help=f"games of each seed and condition, a group (default {DEFAULT_GROUP})")
    group.add_argument("--train", action="append", metavar="ROLE", help="a seat the trainer trains (repeatable; default every seat a model plays); other seats are marked untrainable")
    group.add_argument("--reward", metavar="NAME", help="which of the game's rewards is a trajectory's reward (default: the game's first, reward)")
    add_weights_argument(group)
    add_running_arguments(p)
    return p


def prepare(argv: list[str] | None, factory: PolicyFactory, prog: str = PROG) -> tuple[Prepared, Settings]:
    """Parse and check everything before any game runs; exits with status 2 on bad input."""
    game = chosen_game(argv)
    parser = build_parser(factory, game, prog)
    args = parser.parse_args(argv)
    if args.no_messages:
        parser.error("argument --no-messages: a rollout keeps full transcripts, which its trajectories are read from")
    if args.resume is not None and (args.group or args.train or args.reward or args.tokens):
        parser.error("argument --resume: a rollout resumes with its saved group, seats, reward and tokens; give none of them")
    if args.weights_dir is not None and not args.weights_dir.is_dir():
        parser.error(f"argument --weights-dir: {args.weights_dir} is not a folder")
    settings = Settings(trained=tuple(args.train) if args.train else None, reward=args.reward or "reward", tokens=bool(args.tokens))  # --tokens: a model flag

    def new_plan() -> Grid:
        plan = msgspec.structs.replace(config_from_args(parser, args, game, factory), name="rollouts", group=args.group or DEFAULT_GROUP)
        try:
            settings.check(plan)
        except ValueError as exc:
            parser.error(f"argument --train: {exc}")
        return plan

    def check_resumed(saved: Grid) -> None:
        if saved.group < 1:
            parser.error(f"argument --resume: {args.resume} is not a rollout (its plan has no groups)")
        check_saved(parser, args, saved, game, factory)

    def check_weights(before: Before) -> None:
        if args.weights_dir is None:
            return
        try:
            weights_model(before.plan, (saved_settings(before.run) if before.run else None) or settings, factory)
        except ValueError as exc:
            parser.error(f"argument --weights-dir: {exc}")

    prepared = open_run(parser, args, new_plan=None if args.resume else new_plan, check_saved=check_resumed,
                        factory=factory, out_name="rollouts", check_plan=check_weights)
    if args.weights_dir is not None:  # the command that continues the run takes its weights from the same folder
        prepared = prepared._replace(command=f"{prepared.command} --weights-dir {shlex.quote(str(args.weights_dir))}")
    run = prepared.session.run
    if args.resume is None:
        save_settings(run, settings)
        return prepared, settings
    try:
        return prepared, saved_settings(run) or settings
    except ValueError as exc:
        prepared.session.close()
        parser.error(f"argument --resume: {exc}")


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    factory = PolicyFactory()
    prepared, settings = prepare(argv, factory, prog)
    from runners.runloop import run_and_report  # after the flags are read: --help and bad flags stay fast

    plan, run = prepared.plan, prepared.session.run
    weights = None
    if prepared.args.weights_dir is not None:
        weights = policy_weights(weights_model(plan, settings, factory), factory, run)
    groups = GroupFile(run, plan.total, GroupIds(plan), plan.the_game(), settings,
                       recorded=run.iter_records() if prepared.recorded else (), pins=None if weights is None else weights.pins)
    try:
        status = run_and_report(prepared, factory, partial(play, prepared, factory, groups.written, weights))
    finally:
        groups.close()
    print(f"Groups: {groups.count} written now to {groups.path}")
    if groups.failed is not None:
        print(f"Stopped writing groups: {groups.failed}", file=sys.stderr)
        return 1
    return status


async def play(prepared: Prepared, factory: PolicyFactory, written: Callable[[GameRecord], None],
               weights: PolicyWeights | None, console: Console, spending: Spending | None) -> Ending:
    """The games, their records handed to ``written``; with ``weights``, the versions a trainer puts
    in ``--weights-dir`` loaded as they appear, and the games pinned to them."""
    from engine.rollouts import WeightsFolder
    from engine.serving import ServeError
    from runners.ending import Ending
    from runners.runloop import execute

    if weights is None:
        return await execute(prepared, factory, console, spending, on_written=written)
    folder = WeightsFolder(prepared.args.weights_dir, weights)

    def say(loaded: Weights) -> None:
        console.print(f"Weights: version {loaded.version} ({loaded.served}) for the games starting now", highlight=False)

    try:
        say(await folder.start())
    except ServeError as exc:
        return Ending("gave_up", reason=f"the first weights did not load: {exc}")

    async def watch(give_up: Callable[[str], None]) -> None:
        try:
            await folder.watch(say)
        except ServeError as exc:
            give_up(f"new weights did not load: {exc}")
        except OSError as exc:
            give_up(f"cannot read --weights-dir: {exc}")

    return await execute(prepared, factory, console, spending, on_written=written, observers=[weights], beside=watch)


if __name__ == "__main__":
    sys.exit(main())
