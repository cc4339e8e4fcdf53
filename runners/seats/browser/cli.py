"""The command line of ``runners.seats.browser``: which game, which seats people take, who plays the other
roles, and the run directory, checked before anything is served.

    python -m runners.play --game tsp --seat light --partner openai:gpt-4o
    python -m runners.play --game NAME --seat ROLE --seat ROLE2          (two people, two pages)
    python -m runners.play --game NAME --seat ROLE --games 5 --participant P07   (a study: 5 games in a row)
    python -m runners.play --resume runs/play-20261121-101500

The plan is a normal run's (``runners.concurrent`` builds it; the seats are the policy ``human``),
so reports and the viewer read the run and ``--resume`` continues it.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any, NamedTuple

from engine import PolicyFactory
from engine.policies import DEFAULT_ABSENT_AFTER, DEFAULT_TURN_SECONDS, HUMAN, participant_id
from engine.records import Plan
from puzzles import DEFAULT_GAME, GAMES, Game, InvalidParameter
from runners.args import OneLineParser, bounded, choice, integer, key_value
from runners.flags.game import CHANNEL_FLAGS, EXTENSION_FLAGS, add_game_parameters, check_saved, chosen_game, config_from_args, role_assignment
from runners.flags.models import add_model_arguments
from runners.flags.running import Prepared, add_keeping_arguments, open_run
from runners.flags.spending import add_spending_arguments

PROG = "python -m runners.play"
DEFAULT_PORT = 8765


class Setup(NamedTuple):
    prepared: Prepared
    seats: tuple[str, ...]  # the roles people play
    participants: dict[str, str]  # role -> participant id given on the command line
    port: int
    command: str  # the command that continues the run


def build_parser(factory: PolicyFactory, game: Game, prog: str = PROG) -> OneLineParser:
    roles = list(game.roles)
    p = OneLineParser(prog=prog, description="A person plays a seat of a game in the browser (a page on 127.0.0.1).")
    g = p.add_argument_group("games (saved with the run)")
    g.add_argument("--game", type=choice(list(GAMES)), metavar="NAME", help=f"the game: {', '.join(GAMES)} (default {DEFAULT_GAME})")
    g.add_argument("--seat", type=choice(roles), action="append", default=[], metavar="ROLE", help=f"a role a person plays at a page; repeat for two people (roles: {', '.join(roles)})")
    g.add_argument("--partner", metavar="POLICY", help=f"the policy of every other role: {', '.join(factory.names(game))} (default {game.default_policy})")
    g.add_argument("--agent", type=role_assignment, action="append", default=[], metavar="ROLE=POLICY", help="the policy of one other role, over --partner")
    g.add_argument("--games", type=integer(1), metavar="N", help="games played one after another, by the same people (a study; default 1)")
    g.add_argument("--seed", type=int, metavar="S", help="run seed; game i gets a seed derived from it and i (default 0)")
    modes = list(game.rules.feedback)
    g.add_argument("--feedback", type=choice(modes), metavar="MODE", help=f"feedback mode: {', '.join(modes)} (default {game.rules.default_feedback})")
    g.add_argument("--max-turns", type=integer(1), metavar="T", help="turn limit T (default: the game's)")
    g.add_argument("--history", type=integer(0), metavar="H", help="latest messages of each sender shown to a model partner (default 1); a person sees the whole conversation")
    add_game_parameters(p, game)
    people = p.add_argument_group("people (not saved with the run)")
    people.add_argument("--participant", action="append", default=[], metavar="[ROLE=]ID", help="the participant id (a study code, never a name) of every seat, or of one; default: the page asks for it")
    people.add_argument("--port", type=integer(0), default=DEFAULT_PORT, metavar="P", help=f"the pages' port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free port)")
    people.add_argument("--human-timeout", type=bounded(float, 0, above=True, what="seconds > 0"), default=DEFAULT_TURN_SECONDS, metavar="S", help=f"seconds a person has for a turn; then the turn is played without them and recorded as timed out (default {DEFAULT_TURN_SECONDS:g})")
    people.add_argument("--human-absent-after", type=integer(1), default=DEFAULT_ABSENT_AFTER, metavar="N", help=f"timeouts in a row that end the game as 'human_absent' (default {DEFAULT_ABSENT_AFTER})")
    run = p.add_argument_group("running")
    run.add_argument("--out", type=Path, metavar="RUN_DIR", help="run directory (default runs/play-<UTC time>)")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR, skipping recorded games")
    run.add_argument("--repair", action="store_true", help="with --resume: move damaged lines aside first")
    add_keeping_arguments(run)
    add_model_arguments(p)
    add_spending_arguments(p)
    # What the shared run set-up and plan building read that this command does not offer: games
    # run here, one at a time, on plain channels.
    p.set_defaults(
        concurrency=None, replay_errors=False, executor="local", workers=1, ray_address=None, no_dashboard=False, leak_audit=None,
        **{f"role_{r}": None for r in roles}, **dict.fromkeys(EXTENSION_FLAGS), **dict.fromkeys(CHANNEL_FLAGS),
    )
    return p


def seats_of(plan: Plan) -> tuple[str, ...]:
    """The roles a person plays in any game of ``plan``, in turn order."""
    seated: dict[str, None] = {}
    for _, agents, _ in plan.conditions():
        seated.update((role, None) for role, name in agents.items() if name == HUMAN)
    return tuple(seated)


def participants(parser: OneLineParser, given: list[str], seats: tuple[str, ...]) -> dict[str, str]:
    """Role -> participant id, from ``--participant [ROLE=]ID``; a bare id is every seat's."""
    out: dict[str, str] = {}
    for text in given:
        try:
            role, code = key_value(text, "[ROLE=]ID", optional_key=True, last=True)
            code = participant_id(code)
        except ValueError as exc:
            parser.error(f"argument --participant: {exc}")
        role = role.lower() if role is not None else None
        if role is not None and role not in seats:
            parser.error(f"argument --participant: {role!r} is not a seat a person plays here ({', '.join(seats)})")
        for seat in [role] if role is not None else seats:
            out[seat] = code
    return out


def _new_plan(parser: OneLineParser, args: argparse.Namespace, game: Game, factory: PolicyFactory) -> Plan:
    if not args.seat:
        parser.error("argument --seat: name the role a person plays (roles: " + ", ".join(game.roles) + ")")
    named = {role: HUMAN for role in args.seat}
    for role, policy in args.agent:
        if role in named:
            parser.error(f"argument --agent: {role} is a seat a person plays (--seat {role})")
        named[role] = policy
    try:
        roster = game.roster_for(list(named))
    except InvalidParameter as exc:
        parser.error(f"argument --seat: {exc}")
    partner = args.partner or game.default_policy
    agents = [(role, named.get(role, partner)) for role in roster]
    grid_args = argparse.Namespace(**{**vars(args), "agent": agents, "games": args.games or 1, "model": None})
    plan = config_from_args(parser, grid_args, game, factory)
    plan.name = "play"
    return plan


def _check_resumed(parser: OneLineParser, args: argparse.Namespace, saved: Plan, game: Game, factory: PolicyFactory) -> None:
    seated = seats_of(saved)
    if not seated:
        parser.error(f"argument --resume: no person plays in that run; continue it with python -m runners.concurrent --resume {args.resume}")
    if args.seat and set(args.seat) != set(seated):
        parser.error(f"argument --seat: the run being resumed seats people at {', '.join(seated)}, got {', '.join(args.seat)}")
    agents = list(args.agent)
    if args.partner is not None:
        roster = game.roster(len(saved.agents[0]))
        agents += [(role, args.partner) for role in roster if role not in seated and role not in dict(args.agent)]
    check_saved(parser, argparse.Namespace(**{**vars(args), "agent": agents, "model": None}), saved, game, factory)


def _command(prog: str, prepared: Prepared, args: argparse.Namespace) -> str:
    """The command that continues the run: the plan and the model settings are saved with it; the
    flags for people and for what is written are repeated."""
    parts = [*prog.split(), "--resume", str(prepared.session.run.path)]
    parts += [flag for flag, on in (("--transcripts", args.transcripts), ("--no-messages", args.no_messages)) if on]
    if args.log_level != "info":
        parts += ["--log-level", args.log_level]
    if args.port != DEFAULT_PORT:
        parts += ["--port", str(args.port)]
    if args.human_timeout != DEFAULT_TURN_SECONDS:
        parts += ["--human-timeout", f"{args.human_timeout:g}"]
    if args.human_absent_after != DEFAULT_ABSENT_AFTER:
        parts += ["--human-absent-after", str(args.human_absent_after)]
    for given in args.participant:
        parts += ["--participant", given]
    return shlex.join(parts)


def prepare(argv: list[str] | None, factory: PolicyFactory, prog: str = PROG) -> Setup:
    """Parse and check everything, create (or open) the run directory; exits with status 2 on bad input."""
    game = chosen_game(argv)
    parser = build_parser(factory, game, prog)
    args = parser.parse_args(argv)
    found: dict[str, Any] = {}

    def new_plan() -> Plan:
        plan = _new_plan(parser, args, game, factory)
        found["participants"] = participants(parser, args.participant, seats_of(plan))
        return plan

    def check(saved: Plan) -> None:
        _check_resumed(parser, args, saved, game, factory)
        found["participants"] = participants(parser, args.participant, seats_of(saved))

    prepared = open_run(parser, args, new_plan=None if args.resume else new_plan, check_saved=check, factory=factory, out_name="play")
    factory.turn_seconds = args.human_timeout
    factory.absent_after = args.human_absent_after
    return Setup(prepared, seats_of(prepared.plan), found["participants"], args.port, _command(prog, prepared, args))
