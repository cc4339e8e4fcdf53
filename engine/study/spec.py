"""A study file: which games people play, in which conditions, with whom, for how long, and the texts
they read. TOML, read with ``tomllib`` into typed structs; every mistake is one line naming the key.

    name = "pilot"
    seed = 0
    model = "openai:gpt-4o"      # the partner "model" plays with
    completion_code = ""         # one code for everyone (a recruiting platform's); empty: one per participant
    trust_proxy = false          # behind a reverse proxy: read the joiner's address from X-Forwarded-For

    [time]                       # seconds
    turn = 300                   # a person's turn (its clock starts when their page shows it)
    absent_after = 2             # turns in a row without an answer that end the game as human_absent
    pair_wait = 60               # in the waiting room for a person partner; then a model partner
    gone_after = 45              # without the page open before a person counts as having left
    session_limit = 0            # a participant's whole session (0: no limit); then their game in play ends, unfinished

    [texts]
    welcome = "..."
    consent = "..."
    end = "Thank you! Your completion code is {code}."

    block_order = "fixed"        # "fixed": everyone plays the blocks in this order; "balanced": orders counterbalanced

    [[blocks]]
    game = "NAME"
    rounds = 2                   # games each participant plays of this block
    seats = ["ROLE1", "ROLE2"]   # the roles a person takes, counterbalanced (default: every role)
    max_turns = 10
    instructions = "..."
    params = { PARAMETER = "VALUE" }

    [[blocks.conditions]]
    name = "model"
    partner = "model"            # "model", "person", or a policy name (a scripted strategy: tests only)
    games = 20                   # games wanted in this condition

A scripted partner reads only its own phrases, not a person's free text, so a study pairs people
with a model (or each other); a scripted partner is refused unless ``allow_scripted = true``, which
is for tests and dry runs of the study's set-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from puzzles import GAMES, Game, InvalidParameter

from engine.backends.tomlfile import read_toml

BALANCED = "balanced"  # block_order: each participant's order of blocks from a balanced Latin square
FIXED = "fixed"  # block_order: the blocks in the study file's order
MODEL = "model"  # a condition's partner: the study's model
PERSON = "person"  # a condition's partner: another participant
CODE = re.compile(r"[A-Za-z0-9_-]{1,40}")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


class Time(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    turn: float = 300.0
    absent_after: int = 2
    pair_wait: float = 60.0
    gone_after: float = 45.0
    session_limit: float = 0.0  # seconds from joining to the end of a participant's session; 0: none


class Texts(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    title: str = "A study of cooperative games"
    welcome: str = "Welcome. In this study you play short games with a partner."
    consent: str = "Your answers are recorded under a code, never your name. You may stop at any time."
    waiting: str = "Waiting for a partner to join…"
    end: str = "Thank you for taking part. Your completion code is {code}."
    left: str = "You left the study. Thank you for your time."
    full: str = "The study has all the participants it needs. Thank you for your interest."
    time_up: str = "The time for your session is up; a game you were playing was stopped and is recorded as unfinished."


class Join(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    per_minute: int = 30  # join attempts a minute from one address
    all_per_minute: int = 300  # and from everyone


class Condition(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    name: str
    partner: str = MODEL
    games: int = 10
    params: dict[str, Any] = {}
    feedback: str | None = None
    max_turns: int | None = None
    fallback: str | None = None  # a person condition: the condition played when no partner comes


class Block(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    game: str
    conditions: list[Condition]
    rounds: int = 1
    seats: list[str] = []
    instructions: str = ""
    params: dict[str, Any] = {}
    feedback: str | None = None
    max_turns: int | None = None
    history: int | None = None  # latest messages of each sender a model partner is shown (None: all)


class Study(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    name: str
    blocks: list[Block]
    seed: int = 0
    model: str = ""
    allow_scripted: bool = False
    completion_code: str = ""
    block_order: str = FIXED
    trust_proxy: bool = False  # the join rate limit reads the address from X-Forwarded-For (set by a reverse proxy)
    time: Time = Time()
    texts: Texts = Texts()
    join: Join = Join()

    def game(self, block: int) -> Game:
        return GAMES[self.blocks[block].game]

    def roles(self, block: int) -> tuple[str, ...]:
        """The roster a block's games are played with: the game's first of two roles, else its first."""
        rosters = self.game(block).rules.rosters
        return next((r for r in rosters if len(r) == 2), rosters[0])

    def seats(self, block: int) -> tuple[str, ...]:
        """The roles a person takes in a block, counterbalanced."""
        return tuple(self.blocks[block].seats) or self.roles(block)

    def condition(self, block: int, name: str) -> Condition:
        return next(c for c in self.blocks[block].conditions if c.name == name)


class StudyError(ValueError):
    """The study file cannot be used; the message says why in one line."""


def _where(exc: msgspec.ValidationError) -> str:
    """msgspec's message with its ``$.a[0].b`` path written as the key ``a[0].b`` first."""
    text = str(exc)
    found = re.search(r" - at `\$\.?([^`]*)`$", text)
    message, key = (text, "") if found is None else (text[: found.start()], found[1])
    message = re.sub(r"Object contains unknown field `([^`]+)`", r"unknown key '\1'", message)
    message = re.sub(r"Object missing required field `([^`]+)`", r"missing key '\1'", message)
    return f"{key}: {message}" if key else message


def study_from_dict(data: Mapping[str, Any], games: Mapping[str, Game] = GAMES) -> Study:
    """A study from a parsed TOML document, checked; StudyError with a one-line reason."""
    try:
        study = msgspec.convert(dict(data), Study)
    except msgspec.ValidationError as exc:
        raise StudyError(_where(exc)) from None
    check(study, games)
    return study


def load_study(path: Path | str, games: Mapping[str, Game] = GAMES) -> Study:
    """Read and check a study file; StudyError naming the file and the key."""
    try:
        data = read_toml(path, "study file")
    except ValueError as exc:
        raise StudyError(str(exc)) from None
    try:
        return study_from_dict(data, games)
    except StudyError as exc:
        raise StudyError(f"{path}: {exc}") from None


def _fail(key: str, why: str) -> None:
    raise StudyError(f"{key}: {why}")


def check(study: Study, games: Mapping[str, Game] = GAMES) -> None:
    """Everything a study needs that the types do not say; StudyError naming the key."""
    if not NAME.fullmatch(study.name):
        _fail("name", f"{study.name!r} is not a name for a run directory (letters, digits, '_.-', at most 40)")
    if study.completion_code and not CODE.fullmatch(study.completion_code):
        _fail("completion_code", "letters, digits, '_' and '-' only, at most 40")
    if study.block_order not in (FIXED, BALANCED):
        _fail("block_order", f"{FIXED!r} or {BALANCED!r}, got {study.block_order!r}")
    if "{code}" not in study.texts.end:
        _fail("texts.end", "the end page must show the completion code: put {code} in it")
    t = study.time
    for key, value in (("turn", t.turn), ("pair_wait", t.pair_wait), ("gone_after", t.gone_after)):
        if not value > 0:
            _fail(f"time.{key}", f"give seconds > 0, got {value}")
    if not t.session_limit >= 0:
        _fail("time.session_limit", f"give seconds >= 0 (0: no limit), got {t.session_limit}")
    if t.absent_after < 1:
        _fail("time.absent_after", f"give 1 or more, got {t.absent_after}")
    if study.join.per_minute < 1 or study.join.all_per_minute < 1:
        _fail("join", "give 1 or more join attempts a minute")
    if not study.blocks:
        _fail("blocks", "list at least one block of games ([[blocks]])")
    for b, block in enumerate(study.blocks):
        _check_block(study, b, block, games)


def _check_block(study: Study, b: int, block: Block, games: Mapping[str, Game]) -> None:
    where = f"blocks[{b}]"
    if block.game not in games:
        _fail(f"{where}.game", f"unknown game {block.game!r}; the games are {', '.join(games)}")
    game = games[block.game]
    roles = study.roles(b)
    for seat in block.seats:
        if seat not in roles:
            _fail(f"{where}.seats", f"{seat!r} is not a role of {block.game} ({', '.join(roles)})")
    if block.rounds < 1:
        _fail(f"{where}.rounds", f"give 1 or more games a participant plays, got {block.rounds}")
    if not block.conditions:
        _fail(f"{where}.conditions", "list at least one condition ([[blocks.conditions]])")
    names = [c.name for c in block.conditions]
    for c, condition in enumerate(block.conditions):
        key = f"{where}.conditions[{c}]"
        if not NAME.fullmatch(condition.name) or names.index(condition.name) != c:
            _fail(f"{key}.name", f"{condition.name!r}: give each condition its own name (letters, digits, '_.-')")
        if condition.games < 1:
            _fail(f"{key}.games", f"give 1 or more games, got {condition.games}")
        _check_partner(study, key, condition, game, roles)
        if condition.fallback is not None:
            if condition.partner != PERSON:
                _fail(f"{key}.fallback", "only a condition with a person partner falls back")
            if condition.fallback not in names or study.condition(b, condition.fallback).partner == PERSON:
                _fail(f"{key}.fallback", f"{condition.fallback!r} is not a condition of this block without a person partner")
        elif condition.partner == PERSON and not any(o.partner != PERSON for o in block.conditions):
            _fail(f"{key}.fallback", "a person partner needs a condition with a model partner to fall back on")
        try:
            params = msgspec.convert({**block.params, **condition.params}, game.rules.Params)
            params.check()
        except msgspec.ValidationError as exc:
            _fail(f"{key}.params", f"{block.game} parameters: {exc}")
        except InvalidParameter as exc:
            _fail(f"{key}.params.{exc.field}", str(exc))
        feedback = condition.feedback or block.feedback
        if feedback is not None and feedback not in game.rules.feedback:
            _fail(f"{key}.feedback", f"one of {', '.join(game.rules.feedback)}, got {feedback!r}")
        turns = condition.max_turns or block.max_turns
        if turns is not None and not 1 <= turns <= 1000:
            _fail(f"{key}.max_turns", f"from 1 to 1000, got {turns}")


def _check_partner(study: Study, key: str, condition: Condition, game: Game, roles: tuple[str, ...]) -> None:
    partner = condition.partner
    if partner == PERSON:
        if len(roles) != 2:
            _fail(f"{key}.partner", f"a person partner needs a game of two roles; {game.name} is played by {len(roles)}")
        return
    if partner == MODEL:
        if not study.model:
            _fail("model", f"{key} plays with the model: name it (model = \"ENDPOINT:MODEL\")")
        return
    if partner in game.rules.scripted and not study.allow_scripted:
        _fail(f"{key}.partner", (
            f"{partner!r} is a scripted strategy, which reads only its own phrases, not a person's free text; "
            "use \"model\" or \"person\" (allow_scripted = true is for tests and dry runs)"
        ))
    if ":" not in partner and partner not in game.rules.scripted:
        _fail(f"{key}.partner", f"\"model\", \"person\", a scripted strategy of {game.name} or ENDPOINT:MODEL, got {partner!r}")
