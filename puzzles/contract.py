"""The check every game passes once, when the registry registers it: ``check_contract(game)`` raises
``ContractError`` naming the game and the first member that is missing or of the wrong kind.

It looks at what a game declares and never plays it (playing is the conformance check,
``puzzles.testing``): the parts of ``Rules``, ``Faces``, ``Records`` and ``ResultsFormat``
(``puzzles.base``), the state class against ``GameState``, the prompter against ``Prompter``, the
seat against ``puzzles.seat.Seat``, the replay against ``puzzles.common.replay.Replay``, and every optional
protocol, which an object implements whole or not at all: ``Secrets`` and ``BestOfN`` for the state,
``AgentModules`` for the prompter, ``IdleActions`` for the seat, ``BoardReplay`` for the replay.
Because of it, the engine can ask ``isinstance(obj, Protocol)`` and never needs to look for a member.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

from .analyses import Analysis
from .base import AgentModules, BestOfN, Format1Reader, Game, GameState, Prompter, ReplyGrammar, Rewards, Secrets
from .common.replay import BoardReplay, Replay
from .seat import IdleActions, Seat


class ContractError(TypeError):
    """A game breaks the contract; the message names the game and the member."""

    def __init__(self, game: str, message: str) -> None:
        super().__init__(f"game {game!r}: {message}")
        self.game = game


Fail = Callable[[str], ContractError]  # the error for one message about the game being checked


@functools.cache
def methods(protocol: type) -> tuple[str, ...]:
    """The methods a protocol declares, in order."""
    return tuple(name for name, value in vars(protocol).items() if not name.startswith("_") and callable(value))


@functools.cache
def attributes(protocol: type) -> tuple[str, ...]:
    """The attributes (not methods) a protocol declares."""
    return tuple(name for name in vars(protocol).get("__annotations__", {}) if not name.startswith("_"))


def registered(*games: Game) -> dict[str, Game]:
    """The games by name, each checked against the contract; ContractError for the first that breaks it."""
    found: dict[str, Game] = {}
    for game in games:
        check_contract(game)
        if game.name in found:
            raise ContractError(game.name, "two games have this name")
        found[game.name] = game
    return found


def check_contract(game: Game) -> Game:
    """``game`` if it keeps the contract; ContractError naming the first member it lacks."""
    name = getattr(game, "name", None)
    if not isinstance(game, Game) or not isinstance(name, str) or not name:
        raise ContractError(str(name), f"not a puzzles.base.Game with a name: {game!r}")

    def fail(message: str) -> ContractError:
        return ContractError(name, message)

    _check_rules(game, fail)
    _check_faces(game, fail)
    _check_records(game, fail)
    _check_results_format(game, fail)
    return game


def _check_rules(game: Game, fail: Fail) -> None:
    rules = game.rules
    params = rules.Params
    if not (isinstance(params, type) and issubclass(params, msgspec.Struct)):
        raise fail(f"rules.Params must be a msgspec Struct class, got {params!r}")
    config = params.__struct_config__
    if config.tag_field != "game" or config.tag != game.name:
        raise fail(f"rules.Params must be tagged game={game.name!r} (tag_field=\"game\", tag={game.name!r})")
    for member in ("check", "labels", "normal"):
        _need_callable(getattr(params, member, None), f"rules.Params has no method {member}()", fail)
    if not isinstance(getattr(params, "HELP", None), Mapping):
        raise fail("rules.Params has no HELP (field -> help text for the command line)")
    state = rules.State
    if not isinstance(state, type):
        raise fail(f"rules.State must be the class new() returns, got {state!r}")
    for member in methods(GameState):
        _need_callable(getattr(state, member, None), f"the state ({state.__name__}) has no method {member}()", fail)
    _optional(state, f"the state ({state.__name__})", (Secrets, BestOfN), fail)
    if not rules.rosters or not all(
        isinstance(roster, tuple) and roster and all(isinstance(r, str) for r in roster) for roster in rules.rosters
    ):
        raise fail("rules.rosters must be one or more tuples of role names")
    _need_callable(rules.new, "rules.new is not callable", fail)
    _need_callable(rules.default_max_turns, "rules.default_max_turns is not callable", fail)
    if rules.Action is None:
        raise fail("rules.Action is missing (the type actions decode to)")
    _callables(rules.feedback, "rules.feedback", fail)
    if rules.default_feedback not in rules.feedback:
        raise fail(f"rules.default_feedback {rules.default_feedback!r} is not one of rules.feedback")
    if not rules.scripted:
        raise fail("rules.scripted has no strategy (the first is the default)")
    _callables(rules.scripted, "rules.scripted", fail)
    for member in ("invalid_examples", "prepare", "demonstrations"):
        _maybe_callable(getattr(rules, member), f"rules.{member}", fail)


def _check_faces(game: Game, fail: Fail) -> None:
    faces = game.faces
    prompter = faces.prompter
    _members(prompter, "the prompter", Prompter, fail)
    if not isinstance(prompter.chat_memory, bool):
        raise fail("the prompter's chat_memory must be True or False")
    _optional(prompter, "the prompter", (AgentModules, ReplyGrammar), fail)
    prepare = getattr(prompter, "prepare", None)
    if prepare is not None and not inspect.iscoroutinefunction(prepare):
        raise fail("the prompter's prepare() must be async (AgentModules)")
    if faces.seat is not None:
        seat = faces.seat
        _members(seat, "the seat", Seat, fail)
        if seat.max_actions is not None and not (isinstance(seat.max_actions, int) and seat.max_actions >= 1):
            raise fail("the seat's max_actions must be None or a number from 1")
        if not isinstance(seat.messages, bool):
            raise fail("the seat's messages must be True or False")
        _optional(seat, "the seat", (IdleActions,), fail)
    if faces.replay is not None:
        _members(faces.replay, "the replay", Replay, fail)
        _optional(faces.replay, "the replay", (BoardReplay,), fail)
    if not isinstance(faces.description, str):
        raise fail("faces.description must be text")


def _check_records(game: Game, fail: Fail) -> None:
    records = game.records
    for member in ("score_labels", "human_study", "score_words", "score_notes"):
        labels = getattr(records, member)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
            raise fail(f"records.{member} must map score keys to labels (text to text)")
    _callables(records.sort_keys, "records.sort_keys", fail)
    _maybe_callable(records.instance, "records.instance", fail)
    _maybe_callable(records.analyses, "records.analyses", fail)
    _maybe_callable(records.message_kinds, "records.message_kinds", fail)
    if records.analyses is not None:
        analysis = records.analyses()
        _members(analysis, "records.analyses()", Analysis, fail)
        if analysis.tables() != []:
            raise fail("records.analyses() must make an empty analysis: tables() of no games is []")
    _params_named(game, records.table_rows, "records.table_rows", fail)
    if records.rewards is not None:
        if not isinstance(records.rewards, Rewards):
            raise fail("records.rewards must be a Rewards")
        for member in ("seat", "progress_scale"):
            if not callable(getattr(records.rewards, member)):
                raise fail(f"records.rewards.{member} must be callable")
        scale = records.rewards.progress_scale(game.rules.Params())
        if not (isinstance(scale, int | float) and scale > 0):
            raise fail(f"records.rewards.progress_scale of the default parameters must be above 0, got {scale!r}")


def _check_results_format(game: Game, fail: Fail) -> None:
    past = game.results_format
    if not (isinstance(past.version, int) and past.version >= 1):
        raise fail(f"results_format.version must be a whole number from 1, got {past.version!r}")
    changed = [m for m in ("upgrade", "saved_before", "default_was") if getattr(past, m)]
    if changed and past.version == 1:
        raise fail(f"results_format.{changed[0]} is given, so results_format.version must be above 1")
    _maybe_callable(past.upgrade, "results_format.upgrade", fail)
    if past.format_1 is not None:
        _members(past.format_1, "results_format.format_1", Format1Reader, fail)
    for member in ("saved_before", "default_was"):
        _params_named(game, getattr(past, member), f"results_format.{member}", fail)


def _params_named(game: Game, names: Iterable[str], what: str, fail: Fail) -> None:
    unknown = [name for name in names if name not in game.rules.Params.__struct_fields__]
    if unknown:
        raise fail(f"{what} names {unknown[0]!r}, which is not a field of rules.Params")


def _members(obj: Any, what: str, protocol: type, fail: Fail) -> None:
    """Every member of ``protocol`` on ``obj``: its methods callable, its attributes present."""
    for member in methods(protocol):
        if not callable(getattr(obj, member, None)):
            raise fail(f"{what} has no method {member}() ({_named(protocol)})")
    for member in attributes(protocol):
        if not hasattr(obj, member):
            raise fail(f"{what} has no {member} ({_named(protocol)})")


def _optional(obj: Any, what: str, protocols: Iterable[type], fail: Fail) -> None:
    """Each optional protocol whole (every method there and callable) or not at all."""
    for protocol in protocols:
        wanted = methods(protocol)
        there = [m for m in wanted if getattr(obj, m, None) is not None]
        if there and len(there) < len(wanted):
            missing = [m for m in wanted if m not in there]
            raise fail(
                f"{what} has {', '.join(there)}() but no {', '.join(missing)}(): {_named(protocol)} is "
                f"{' and '.join(wanted)}, all or none"
            )
        for member in there:
            if not callable(getattr(obj, member)):
                raise fail(f"{what}'s {member} is not callable ({_named(protocol)})")


def _named(protocol: type) -> str:
    return f"{protocol.__module__}.{protocol.__qualname__}"


def _need_callable(value: Any, message: str, fail: Fail) -> None:
    if not callable(value):
        raise fail(message)


def _maybe_callable(value: Any, what: str, fail: Fail) -> None:
    if value is not None and not callable(value):
        raise fail(f"{what} must be callable or None")


def _callables(mapping: Mapping[str, Any], what: str, fail: Fail) -> None:
    for key, value in mapping.items():
        if not (isinstance(key, str) and callable(value)):
            raise fail(f"{what}[{key!r}] is not callable")
