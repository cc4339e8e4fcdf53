"""``asymgames dataset --out DIR``: training data from teachers' play (``engine.dataset``).

    asymgames dataset --game einstein --blocks 4 --games 250 --demonstrations 5 --out data/n4
    asymgames dataset --game einstein --actions ask --cot no --demonstrations 5 --sample 1000 \\
        --part blocks=4:250 --part blocks=5:500 --part blocks=6:500 --out data/ask-plain
    asymgames dataset --game tsp --games 200 --out data/tsp          # the scripted strategies teach

The game's parameters are its flags, as for ``asymgames run``; each ``--part`` changes some of them and
says how many training games to play with them. The held-out games are the first ``--holdout`` games
of run seed ``--seed``: play them with ``asymgames run --seed S --games E``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec

from engine.dataset import DEFAULT_HOLDOUT, DatasetError, DatasetPlan, Part, build, write_dataset
from engine.policies import PolicyFactory, is_human, is_model
from puzzles import GAMES, Game, InvalidParameter
from runners.args import OneLineParser, choice, integer
from runners.flags.game import add_game_parameters, chosen_game, flag, given_params, role_assignment

PROG = "python -m runners.dataset"
DEFAULT_GAMES = 100


def _part(text: str) -> tuple[dict[str, str], int]:
    settings, colon, games = text.rpartition(":")
    try:
        count = int(games)
    except ValueError:
        count = 0
    if not colon or count < 1:
        raise argparse.ArgumentTypeError(f"expected PARAM=VALUE[,PARAM=VALUE...]:GAMES, got {text!r}")
    found: dict[str, str] = {}
    for item in filter(None, settings.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise argparse.ArgumentTypeError(f"expected PARAM=VALUE, got {item!r}")
        found[key.strip().replace("-", "_")] = value.strip()
    return found, count


def parser_for(game: Game, prog: str) -> OneLineParser:
    p = OneLineParser(prog=prog, description="Training data from scripted or planned play: every turn as the chat the engine sends a model in that seat, and the reply played.")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="the dataset's folder (must not exist)")
    p.add_argument("--game", type=choice(list(GAMES)), metavar="NAME", help=f"the game: {', '.join(GAMES)}")
    p.add_argument("--games", type=integer(1), metavar="G", help=f"training games, without --part (default {DEFAULT_GAMES})")
    p.add_argument("--part", type=_part, action="append", default=[], metavar="PARAM=VALUE[,...]:GAMES",
                   help="a part of the dataset: these parameters changed, this many training games (repeat for more parts)")
    p.add_argument("--demonstrations", type=integer(1), metavar="K", help="K of the game's own demonstrations per game (its planner's optimal and near-optimal plays) instead of its scripted strategies")
    p.add_argument("--sample", type=integer(1), metavar="M", help="draw M trajectories of the pool at random (default: all)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="run seed of the held-out games, and of the draw (default 0)")
    p.add_argument("--holdout", type=integer(0), default=DEFAULT_HOLDOUT, metavar="E", help=f"the first E games of run seed S are held out (default {DEFAULT_HOLDOUT})")
    p.add_argument("--max-turns", type=integer(1), metavar="T", help="turn limit (default: the game's)")
    p.add_argument("--keep-failures", action="store_true", help="keep games the scripted strategies did not solve")
    p.add_argument("--agent", type=role_assignment, action="append", default=[], metavar="ROLE=POLICY", help=f"a seat's scripted strategy: {', '.join(game.rules.scripted)} (default {game.default_policy})")
    add_game_parameters(p, game)
    return p


def plan_from_args(parser: OneLineParser, args: argparse.Namespace, game: Game) -> DatasetPlan:
    factory = PolicyFactory()
    agents: dict[str, str] = {}
    for role, name in args.agent:
        if is_model(name) or is_human(name):
            parser.error(f"argument --agent: {name} cannot teach; name a scripted strategy")
        try:
            factory.check(name, game)
            game.roster_for([role])
        except (ValueError, InvalidParameter) as exc:
            parser.error(f"argument --agent: {exc}")
        agents[role] = factory.canonical(name)
    if args.part and args.games is not None:
        parser.error("argument --games: give the games of each --part instead")
    base = {**msgspec.to_builtins(game.rules.Params()), **given_params(args, game)}
    base.pop("game", None)
    parts = args.part or [({}, args.games or DEFAULT_GAMES)]
    built: list[Part] = []
    for changes, games in parts:
        unknown = [k for k in changes if k not in base]
        if unknown:
            parser.error(f"argument --part: {game.name} has no parameter {unknown[0]!r}")
        try:
            params: Any = msgspec.convert({**base, **changes}, game.rules.Params, strict=False)
            params.check()
        except (msgspec.ValidationError, InvalidParameter) as exc:
            where = getattr(exc, "field", None)
            parser.error(f"argument {'--part' if changes else flag(where or 'game')}: {exc}")
        built.append(Part(params, games))
    return DatasetPlan(
        game=game.name, parts=built, agents=agents, demonstrations=args.demonstrations or 0, sample=args.sample,
        seed=args.seed, holdout=args.holdout, max_turns=args.max_turns, keep_failures=args.keep_failures,
    )


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    game = chosen_game(argv)
    parser = parser_for(game, prog)
    args = parser.parse_args(argv)
    plan = plan_from_args(parser, args, game)
    try:
        built = anyio.run(build, plan)
        card = write_dataset(args.out, plan, built)
    except DatasetError as exc:
        parser.error(str(exc))
    counts = card["counts"]
    print(
        f"Wrote {args.out}: {counts['samples']} samples from {counts['trajectories']} trajectories "
        f"(a pool of {counts['pool']} from {counts['games']} training games; {counts['mean_steps']} steps each on average). "
        f"Held out: the first {plan.holdout} games of run seed {plan.seed}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
