"""The flags of a person's seat at this terminal (``--agent ROLE=human``) and their checks: such a
plan runs here, one game at a time (``runners.seats.terminal`` sets the seats up)."""

from __future__ import annotations

import argparse
from typing import Any

from engine.policies import DEFAULT_ABSENT_AFTER, DEFAULT_TURN_SECONDS, is_human, participant_id
from engine.records import Plan

from runners.args import bounded, checked


def add_seat_arguments(group: Any) -> None:
    group.add_argument("--human-timeout", type=bounded(float, 0, above=True, what="a number of seconds > 0"), metavar="SECONDS", help=f"a person's seat (ROLE=human, answered on this terminal's stdin): seconds for a turn (default {DEFAULT_TURN_SECONDS:g})")
    group.add_argument("--human-absent-after", type=bounded(int, 1, what="an integer >= 1"), metavar="N", help=f"a person's seat: turns in a row with no answer that end the game as human_absent (default {DEFAULT_ABSENT_AFTER})")
    group.add_argument("--participant", type=checked(participant_id), metavar="ID", help="a person's seat: the participant's study code (such as P07, never a name), written with each record")


SEAT_FLAGS = {"human_timeout": "--human-timeout", "human_absent_after": "--human-absent-after", "participant": "--participant"}


def people_play(plan: Plan) -> bool:
    """Some seat of the plan is played by a person."""
    return any(is_human(name) for names in plan.agents for name in names)


def check_seats(parser: argparse.ArgumentParser, args: argparse.Namespace, plan: Plan) -> None:
    """The flags of a person's seat go with a plan that has one, and such a plan runs here."""
    if not people_play(plan):
        for field, name in SEAT_FLAGS.items():
            if getattr(args, field, None) is not None:
                parser.error(f"argument {name}: no seat of this run is played by a person (--agent ROLE=human)")
    elif args.executor != "local":
        parser.error("argument --executor: a person plays a seat of this run at this terminal; use --executor local")
