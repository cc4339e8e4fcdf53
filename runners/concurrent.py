"""Run many AsymPuzl games concurrently and summarise them.

    python -m runners.concurrent --games 1000
    python -m runners.concurrent --resume runs/20261121-101500
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bus.channel import ChannelSpec
from engine import PolicyFactory, RunConfig
from engine.results import Plan
from feedback.modes import MODES
from puzzles.asympuzl import ROLES, InvalidParameter

from ._args import bounded
from ._models import settings_from_args
from ._runloop import OneLineParser, Prepared, add_running_arguments, choice, integer, open_run, run_and_report

# Flags that define the games; on --resume they must be absent or equal to the saved run's.
GAME_FLAGS = {
    "games": "--games", "size": "--size", "distractors": "--distractors",
    "distractors_in": "--distractors-in", "feedback": "--feedback", "max_turns": "--max-turns",
    "history": "--history", "alice": "--alice", "bob": "--bob", "seed": "--seed",
    "puzzle": "--puzzle", "carol": "--carol", "dave": "--dave", "topology": "--topology",
    "turn_order": "--turn-order", "max_actions": "--max-actions", "memory": "--memory",
    "leak_audit": "--leak-audit", "channel": "--max-message-chars",
}
# Flags that together describe every channel (a ChannelSpec field each).
CHANNEL_FLAGS = {
    "max_message_chars": "max_chars", "max_message_tokens": "max_tokens", "over_budget": "over_budget",
    "game_chars": "game_chars", "game_tokens": "game_tokens", "drop": "drop", "noise": "noise", "delay": "delay",
}


_probability = bounded(float, 0.0, 1.0, what="a probability between 0 and 1")


def _channel(args: argparse.Namespace) -> ChannelSpec | None:
    given = {field: getattr(args, flag) for flag, field in CHANNEL_FLAGS.items() if getattr(args, flag) is not None}
    return ChannelSpec(**given) if given else None


def _history(text: str) -> int | str:
    if text.strip().lower() in ("full", "all"):
        return "full"
    return integer(0)(text)


def build_parser(factory: PolicyFactory) -> OneLineParser:
    policies = ", ".join(factory.names())
    p = OneLineParser(
        prog="python -m runners.concurrent",
        description="Run AsymPuzl games concurrently (scripted agents offline) and summarise them.",
    )
    game = p.add_argument_group("games (saved with the run)")
    game.add_argument("--games", type=integer(1), metavar="G", help="number of games (default 1000)")
    game.add_argument("--size", type=integer(1), metavar="N", help="puzzle size N (default 5)")
    game.add_argument("--distractors", type=integer(0), metavar="D", help="distractor pieces D, 0 to 10 (default 0)")
    game.add_argument("--distractors-in", type=choice(list(ROLES)), metavar="ROLE", help="whose clues get the distractors (default alice)")
    game.add_argument("--feedback", type=choice(list(MODES)), metavar="MODE", help=f"feedback mode: {', '.join(MODES)} (default own_detailed)")
    game.add_argument("--max-turns", type=integer(1), metavar="T", help="turn limit T (default 2N)")
    game.add_argument("--history", type=_history, metavar="H", help="latest messages of each sender shown to an agent: 0, 1, 2, ... or full (default 1); the partner's newest is always shown")
    game.add_argument("--alice", metavar="POLICY", help=f"Alice's policy: {policies} (default share_everything)")
    game.add_argument("--bob", metavar="POLICY", help=f"Bob's policy: {policies} (default share_everything)")
    game.add_argument("--seed", type=int, metavar="S", help="run seed; game i gets a seed derived from it and i (default 0)")
    more = p.add_argument_group("more agents, channels and other knobs (saved with the run; unset by default)")
    more.add_argument("--puzzle", type=choice(["asympuzl", "chain"]), help="asympuzl (two agents, default) or chain (2 to 4 agents, each holding one link)")
    more.add_argument("--carol", metavar="POLICY", help="chain puzzle: the third agent's policy")
    more.add_argument("--dave", metavar="POLICY", help="chain puzzle: the fourth agent's policy")
    more.add_argument("--topology", type=choice(["all", "directed", "chain"]), help="who talks to whom: all (default), directed (one named partner per message), chain (neighbours)")
    more.add_argument("--turn-order", type=choice(["round_robin", "simultaneous"]), help="round_robin (default) or simultaneous (all act on the previous round's messages)")
    more.add_argument("--max-actions", type=integer(0), metavar="A", help="actions applied per agent turn; the rest are rejected")
    more.add_argument("--memory", type=choice(["reinject", "scratchpad"]), help="reinject (clues every turn, default) or scratchpad (clues once, then the agent's own notes)")
    more.add_argument("--leak-audit", action="store_const", const=True, help="end a game with a 'leak' error if an agent is shown another's private words")
    more.add_argument("--max-message-chars", type=integer(0), metavar="C", help="channel: characters per message")
    more.add_argument("--max-message-tokens", type=integer(0), metavar="K", help="channel: tokens (words) per message")
    more.add_argument("--over-budget", type=choice(["truncate", "reject"]), help="channel: cut a message over budget (default) or reject it and tell the sender")
    more.add_argument("--game-chars", type=integer(0), metavar="C", help="channel: characters per sender for the whole game")
    more.add_argument("--game-tokens", type=integer(0), metavar="K", help="channel: tokens per sender for the whole game")
    more.add_argument("--drop", type=_probability, metavar="P", help="channel: probability a message is lost")
    more.add_argument("--noise", type=_probability, metavar="P", help="channel: per character, probability of a dropped and of an inserted character")
    more.add_argument("--delay", type=integer(0), metavar="R", help="channel: rounds before a message is delivered")
    add_running_arguments(p)
    return p


def _given(args: argparse.Namespace, field: str, factory: PolicyFactory):
    """A game flag's value as it would be saved: policy names in one spelling, 'full' as None."""
    if field == "channel":
        return _channel(args)
    value = getattr(args, field)
    if field == "history" and value == "full":
        return None
    if field in ("alice", "bob", "carol", "dave"):
        return factory.canonical(value)
    return value


def _is_given(args: argparse.Namespace, field: str) -> bool:
    if field == "channel":
        return any(getattr(args, flag) is not None for flag in CHANNEL_FLAGS)
    return getattr(args, field) is not None


def config_from_args(args: argparse.Namespace, factory: PolicyFactory) -> RunConfig:
    return RunConfig(**{k: _given(args, k, factory) for k in GAME_FLAGS if _is_given(args, k)})


def check_config(parser: OneLineParser, config: RunConfig, factory: PolicyFactory) -> None:
    try:
        config.validate()
    except InvalidParameter as exc:
        parser.error(f"argument {GAME_FLAGS.get(exc.field, exc.field)}: {exc}")
    for role, name in config.roster.items():
        flag = f"--{role}"
        try:
            factory.check(name)
        except ValueError as exc:
            parser.error(f"argument {flag}: {exc}")


def prepare(argv: list[str] | None, factory: PolicyFactory) -> Prepared:
    """Parse and check everything before any game runs; exits with status 2 on bad input."""
    parser = build_parser(factory)
    args = parser.parse_args(argv)
    factory.configure(settings_from_args(args))

    def new_plan() -> Plan:
        config = config_from_args(args, factory)
        check_config(parser, config, factory)
        return config

    def check_saved(saved: Plan) -> None:
        if not isinstance(saved, RunConfig):
            parser.error(f"argument --resume: {args.resume} holds a sweep; resume it with python -m runners.sweep --resume")
        saved_channel = saved.channel or ChannelSpec()
        for flag, field in CHANNEL_FLAGS.items():  # each channel flag against its own field
            given = getattr(args, flag)
            if given is not None and given != getattr(saved_channel, field):
                name = "--" + flag.replace("_", "-")
                parser.error(f"argument {name}: the run being resumed has {name} {getattr(saved_channel, field)}, got {given}")
        for field, flag in GAME_FLAGS.items():
            if field == "channel" or not _is_given(args, field):
                continue
            given = _given(args, field, factory)
            have = saved.turn_limit if field == "max_turns" else getattr(saved, field)
            if given != have:
                shown = lambda v: "full" if field == "history" and v is None else v  # noqa: E731
                parser.error(f"argument {flag}: the run being resumed has {flag} {shown(have)}, got {shown(given)}")
        check_config(parser, saved, factory)

    return open_run(parser, args, new_plan=None if args.resume else new_plan, check_saved=check_saved)


def main(argv: list[str] | None = None) -> int:
    factory = PolicyFactory()
    return run_and_report(prepare(argv, factory), factory)


if __name__ == "__main__":
    sys.exit(main())
