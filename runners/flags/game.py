"""The flags of a game and its conditions: the game, its parameters (its ``Params`` fields) and roles,
feedback, turn limit, history, and the channels; the plan they make (a one-condition ``Grid``) and
their check against a run being resumed."""

from __future__ import annotations

import argparse
import contextlib
import typing
from typing import Any

import msgspec
from msgspec import UNSET

from bus.channel import ChannelSpec
from engine.plan import Grid
from engine.policies import PolicyFactory
from engine.records import Plan, RunDir, RunDirError
from puzzles import DEFAULT_GAME, GAMES, Game, InvalidParameter
from runners.args import OneLineParser, bounded, choice, integer, pair, probability, whole, yes_no

DEFAULT_GAMES = 1000
ENGINE_FLAGS = {"feedback": "--feedback", "max_turns": "--max-turns", "history": "--history"}
EXTENSION_FLAGS = {
    "topology": "--topology", "turn_order": "--turn-order", "max_actions": "--max-actions", "memory": "--memory",
}
# Flags that together describe every channel (a ChannelSpec field each).
CHANNEL_FLAGS = {
    "max_message_chars": "max_chars", "max_message_tokens": "max_tokens", "over_budget": "over_budget",
    "game_chars": "game_chars", "game_tokens": "game_tokens", "drop": "drop", "noise": "noise", "delay": "delay",
}
# The flag named when the plan refuses one of its fields that no flag of the same name sets.
FIELD_FLAGS = {"agents": "--agent", "roster": "--agent", "seeds": "--games", "channel": "--max-message-chars"}

def _history(text: str) -> int | str:
    if text.strip().lower() in ("full", "all"):
        return "full"
    return integer(0)(text)


role_assignment = pair("ROLE=POLICY", lambda role, policy: (role.lower(), policy))


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _param_type(annotation: Any):
    """An argparse type for a parameter field: integers, numbers, choices, text."""
    if typing.get_origin(annotation) is typing.Literal:
        return choice([str(v) for v in typing.get_args(annotation)])
    if annotation is bool:
        return yes_no
    if annotation is int:
        return whole
    if annotation is float:
        return bounded(float)
    return str


def add_game_parameters(parser: argparse.ArgumentParser, game: Game) -> None:
    group = parser.add_argument_group(f"{game.name} parameters (saved with the run)")
    defaults = game.rules.Params()
    help_texts = game.rules.Params.HELP
    for field in msgspec.structs.fields(game.rules.Params):
        if field.name == "game":
            continue
        default = getattr(defaults, field.name)
        text = help_texts.get(field.name, field.name.replace("_", " "))
        group.add_argument(
            flag(field.name), dest=f"param_{field.name}", type=_param_type(field.type), metavar=field.name.upper(),
            help=f"{text} (default {default})",
        )


def add_game_arguments(p: argparse.ArgumentParser, game: Game, factory: PolicyFactory) -> None:
    """The games group (saved with the run), the game's parameters, and the channels and other knobs."""
    policies = ", ".join(factory.names(game))
    g = p.add_argument_group("games (saved with the run)")
    g.add_argument("--game", type=choice(list(GAMES)), metavar="NAME", help=f"the game: {', '.join(GAMES)} (default {DEFAULT_GAME})")
    g.add_argument("--games", type=integer(1), metavar="G", help=f"number of games (default {DEFAULT_GAMES})")
    g.add_argument("--seed", type=int, metavar="S", help="run seed; game i gets a seed derived from it and i (default 0)")
    modes = list(game.rules.feedback)
    g.add_argument("--feedback", type=choice(modes), metavar="MODE", help=f"feedback mode: {', '.join(modes)} (default {game.rules.default_feedback})")
    g.add_argument("--max-turns", type=integer(1), metavar="T", help="turn limit T: rounds in which every agent acts (default: the game's)")
    g.add_argument("--history", type=_history, metavar="H", help="latest messages of each sender shown to an agent: 0, 1, 2, ... or full (default 1); a partner's newest is always shown")
    g.add_argument("--agent", type=role_assignment, action="append", default=[], metavar="ROLE=POLICY", help=f"the policy of one role: {policies} (default {game.default_policy}); roles: {', '.join(game.roles)}")
    for role in game.roles:
        g.add_argument(flag(role), dest=f"role_{role}", metavar="POLICY", help=f"same as --agent {role}=POLICY")
    g.add_argument("--model", metavar="POLICY", help="the policy of every seat that --agent or --ROLE does not name, for example openai:gpt-4o (provider/model is read as provider:model)")
    add_game_parameters(p, game)
    more = p.add_argument_group("channels and other knobs (saved with the run; unset by default)")
    more.add_argument("--topology", type=choice(["all", "directed", "chain"]), help="who talks to whom: all (default), directed (one named partner per message), chain (neighbours)")
    more.add_argument("--turn-order", type=choice(["round_robin", "simultaneous"]), help="round_robin (default) or simultaneous (all act on the previous round's messages)")
    more.add_argument("--max-actions", type=integer(0), metavar="A", help="actions applied per agent turn; the rest are rejected")
    more.add_argument("--memory", type=choice(["reinject", "scratchpad"]), help="reinject (private information every turn, default) or scratchpad (once, then the agent's own notes)")
    more.add_argument("--leak-audit", action="store_const", const=True, help="end a game with a 'leak' error if an agent is shown another's private facts")
    more.add_argument("--max-message-chars", type=integer(0), metavar="C", help="channel: characters per message")
    more.add_argument("--max-message-tokens", type=integer(0), metavar="K", help="channel: tokens (words) per message")
    more.add_argument("--over-budget", type=choice(["truncate", "reject"]), help="channel: cut a message over budget (default) or reject it and tell the sender")
    more.add_argument("--game-chars", type=integer(0), metavar="C", help="channel: characters per sender for the whole game")
    more.add_argument("--game-tokens", type=integer(0), metavar="K", help="channel: tokens per sender for the whole game")
    more.add_argument("--drop", type=probability, metavar="P", help="channel: probability a message is lost")
    more.add_argument("--noise", type=probability, metavar="P", help="channel: per character, probability of a dropped and of an inserted character")
    more.add_argument("--delay", type=integer(0), metavar="R", help="channel: rounds before a message is delivered")


def _named_agents(args: argparse.Namespace, game: Game, factory: PolicyFactory) -> dict[str, tuple[str, str]]:
    """Role -> (policy as saved, the flag that named it), for the roles named one by one."""
    named: dict[str, tuple[str, str]] = {}
    for role, policy in args.agent:
        named[role] = (factory.canonical(policy), "--agent")
    for role in game.roles:
        policy = getattr(args, f"role_{role}")
        if policy is not None:
            named[role] = (factory.canonical(policy), flag(role))
    return named


def _with_model(named: dict[str, tuple[str, str]], roster: tuple[str, ...], args: argparse.Namespace,
                factory: PolicyFactory) -> dict[str, tuple[str, str]]:
    """``named`` with ``--model`` in every other seat of ``roster``."""
    if args.model is None:
        return named
    model = factory.canonical(args.model)
    return {role: named.get(role, (model, "--model")) for role in roster}


def given_params(args: argparse.Namespace, game: Game) -> dict[str, Any]:
    return {
        f.name: getattr(args, f"param_{f.name}")
        for f in msgspec.structs.fields(game.rules.Params)
        if getattr(args, f"param_{f.name}", None) is not None
    }


def config_from_args(parser: OneLineParser, args: argparse.Namespace, game: Game, factory: PolicyFactory) -> Grid:
    named = _named_agents(args, game, factory)
    try:
        roster = game.roster_for(list(named)) if named else game.rules.rosters[0]
    except InvalidParameter as exc:
        parser.error(f"argument --agent: {exc}")
    named = _with_model(named, roster, args, factory)
    agents = [named[r][0] if r in named else game.default_policy for r in roster]
    # Every setting is saved as it is used, defaults included, so that config.json says it all.
    params = {**msgspec.to_builtins(game.rules.Params()), **given_params(args, game)}
    params.pop("game", None)
    try:
        turns = args.max_turns or game.rules.default_max_turns(msgspec.convert(params, game.rules.Params), roster)
    except (msgspec.ValidationError, InvalidParameter, ValueError) as exc:
        parser.error(f"argument {flag(next(iter(given_params(args, game)), 'game'))}: {exc}")
    grid: dict[str, Any] = {
        "name": "run", "game": game.name, "seeds": args.games or DEFAULT_GAMES, "seed": args.seed or 0,
        "agents": [agents], "params": {k: [v] for k, v in params.items()},
        "feedback": [args.feedback or game.rules.default_feedback], "max_turns": [turns],
        "history": [1 if args.history is None else args.history],
    }
    for field in EXTENSION_FLAGS:
        if getattr(args, field) is not None:
            grid[field] = [getattr(args, field)]
    channel = {field: getattr(args, name) for name, field in CHANNEL_FLAGS.items() if getattr(args, name) is not None}
    if channel:
        grid["channel"] = [ChannelSpec(**channel)]
    if args.leak_audit:
        grid["leak_audit"] = True
    plan = msgspec.convert(grid, Grid)
    check_plan(parser, plan, game, factory, named, calls=not args.dry_run)
    return plan


def check_plan(parser: OneLineParser, plan: Grid, game: Game, factory: PolicyFactory, named: dict[str, tuple[str, str]] | None = None,
               *, calls: bool = True) -> None:
    """Exit naming the first bad parameter or policy; ``calls=False`` for a forecast, which calls no model."""
    try:
        plan.validate()
    except InvalidParameter as exc:
        parser.error(f"argument {FIELD_FLAGS.get(exc.field) or flag(exc.field)}: {exc}")
    named = named or {}
    for names in plan.agents:
        for role, name in zip(game.roster(len(names)), names):
            try:
                factory.check(name, game, role, calls=calls)
            except ValueError as exc:
                parser.error(f"argument {named.get(role, (None, flag(role)))[1]}: {exc}")


def check_saved(parser: OneLineParser, args: argparse.Namespace, saved: Plan, game: Game, factory: PolicyFactory) -> None:
    """Flags given with --resume must agree with every condition of the saved run."""
    if args.game is not None and args.game != saved.game:
        parser.error(f"argument --game: the run being resumed plays {saved.game}, got {args.game}")
    try:
        conditions = saved.conditions()
    except InvalidParameter as exc:
        parser.error(f"argument --resume: the saved run cannot be read: {exc}")

    def differ(name: str, given: Any, have: Any) -> None:
        shown = lambda v: "full" if name == "--history" and v is None else v  # noqa: E731
        parser.error(f"argument {name}: the run being resumed has {name} {shown(have)}, got {shown(given)}")

    if args.games is not None and args.games != saved.seeds:
        differ("--games", args.games, saved.seeds)
    if args.seed is not None and args.seed != saved.seed:
        differ("--seed", args.seed, saved.seed)
    named = _named_agents(args, game, factory)
    params = given_params(args, game)
    for p, agents, options in conditions:
        for role, (policy, name) in _with_model(named, tuple(agents), args, factory).items():
            if agents.get(role) != policy:
                differ(name if name != "--agent" else f"--agent {role}=", policy, agents.get(role))
        for field, value in params.items():
            if getattr(p, field) != value:
                differ(flag(field), value, getattr(p, field))
        for field, name in {**ENGINE_FLAGS, **EXTENSION_FLAGS}.items():
            given = getattr(args, field)
            if given is None:
                continue
            if field == "history" and given == "full":
                given = None
            if options.get(field) != given:
                differ(name, given, options.get(field))
        saved_channel = options.get("channel") or ChannelSpec()
        for name, field in CHANNEL_FLAGS.items():  # each channel flag against its own field
            given = getattr(args, name)
            if given is not None and given != getattr(saved_channel, field):
                differ(flag(name), given, getattr(saved_channel, field))
        if args.leak_audit and options.leak_audit is UNSET:
            parser.error("argument --leak-audit: the run being resumed has no leak audit")
    check_plan(parser, saved, game, factory, calls=not args.dry_run)


def chosen_game(argv: list[str] | None) -> Game:
    """The game the command line is about: --game, else the resumed run's, else the default (also
    for a name no game has: the parser then says so)."""
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--game")
    pre.add_argument("--resume")
    known, _ = pre.parse_known_args(argv)
    name = known.game.strip().lower() if known.game is not None else DEFAULT_GAME
    if known.game is None and known.resume is not None:
        with contextlib.suppress(RunDirError, OSError, ValueError):  # reported properly once the whole command line is read
            name = RunDir.open(known.resume).config().game
    return GAMES.get(name) or GAMES[DEFAULT_GAME]
