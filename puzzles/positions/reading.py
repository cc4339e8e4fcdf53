"""One played game of a position game read for the analyses (``puzzles.positions.analyses``, where
the rules are written down): the game is started again from its parameters and seed through the
game's own rules, every turn's actions are replayed, and each role gets its strategy class and its
failure signatures.

Messages are read as words and numbers: lower-cased, runs of the letters a to z and runs of the
digits 0 to 9, the first ``MESSAGE_CHARS`` characters of a message only. Anything else in a message
(markup, control characters, other scripts, JSON) is simply not a word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import msgspec

from ..analyses import PlayedGame, PlayedTurn

ALL_AT_ONCE = "all at once"
PIECE_BY_PIECE = "piece by piece"
IGNORES = "ignores"
OTHER = "other"
CLASSES = (ALL_AT_ONCE, PIECE_BY_PIECE, IGNORES, OTHER)

SILENT = "silent"
NO_FACTS = "no facts"
ALL_FACTS = "all its facts"
NEW_FACTS = "new facts"
REPEATS = "repeats"
MESSAGE_KINDS = (ALL_FACTS, NEW_FACTS, REPEATS, NO_FACTS, SILENT)

MESSAGE_CHARS = 100_000
"""How much of a message is read (a model's message is far shorter; a huge one is cut, not read whole)."""

OVERCORRECTION = 4
"""Modifications of one position by one role that make the over-correction signature."""

MAX_CAP = 40
"""The largest action limit per turn tried when a replay differs from the record (see ``replay``)."""

_TOKEN = re.compile(r"[a-z]+|[0-9]+")

Start = Callable[[Any, int, tuple[str, ...], int], Any]
"""The rules' ``new(params, seed, roles, max_turns)``: a position game (``PositionGame``) as it starts."""


class Unreadable(Exception):
    """The game cannot be read again: its parameters do not decode, the rules refuse them, or no
    replay reproduces what its record counted."""


@dataclass(frozen=True)
class RoleReading:
    strategy: str | None  # one of CLASSES; None for a role with no partner (the single-agent check)
    idle: bool  # signature (a): a read reply with no action while it could have fixed a position
    overcorrected: bool  # signature (b): one position modified OVERCORRECTION or more times


def tokens(text: Any) -> list[str]:
    """The words and numbers of a message, in order (nothing for anything but text)."""
    if not isinstance(text, str):
        return []
    return _TOKEN.findall(text[:MESSAGE_CHARS].lower())


def item_words(item: Any) -> frozenset[str]:
    """The known values of one clue or truth item (a struct or a tuple), as words."""
    data = msgspec.to_builtins(item)
    values = data if isinstance(data, (list, tuple)) else list(data.values()) if isinstance(data, dict) else [data]
    return frozenset(v.lower() for v in values if isinstance(v, str))


def start_state(game: PlayedGame, params_type: type, start: Start) -> Any:
    """The game as it started, through the game's own rules."""
    params: Any = game.params  # decoded to params_type below
    if not isinstance(params, params_type):
        try:
            params = msgspec.convert(params, params_type)
        except (msgspec.ValidationError, TypeError) as exc:
            raise Unreadable(f"its parameters do not decode: {exc}") from None
    try:
        params.check()
        return start(params, game.seed, tuple(game.agents), max(1, game.max_turns))
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # InvalidParameter is a ValueError
        raise Unreadable(f"the rules refuse it: {exc}") from None


def decode_actions(turn: PlayedTurn, action_type: Any) -> tuple[Any, ...]:
    """The turn's actions as the game's action type; an action that does not decode is left out (it
    was not applied either). A reply that could not be read applied nothing."""
    if turn.format_error is not None or not isinstance(turn.actions, (list, tuple)):
        return ()
    decoded = []
    for action in turn.actions:
        try:
            decoded.append(msgspec.convert(action, action_type))
        except (msgspec.ValidationError, TypeError):
            continue
    return tuple(decoded)


@dataclass
class Replay:
    """Each turn's hypothesis of the acting role before and after it, and the final state."""

    before: list[tuple[Any, ...] | None]  # None for a turn of a role not in the game
    after: list[tuple[Any, ...] | None]
    state: Any


def _replay_with(make: Callable[[], Any], game: PlayedGame, actions: Sequence[tuple[Any, ...]], cap: int | None) -> Replay:
    state = make()
    before: list[tuple[Any, ...] | None] = []
    after: list[tuple[Any, ...] | None] = []
    for turn, acts in zip(game.turns, actions):
        if turn.role not in state.roles:
            before.append(None)
            after.append(None)
            continue
        before.append(state.hypotheses()[turn.role])
        state.step(turn.role, acts if cap is None else acts[:cap])
        after.append(state.hypotheses()[turn.role])
    return Replay(before, after, state)


def replay(game: PlayedGame, params_type: type, start: Start, action_type: Any) -> Replay:
    """Replay every turn's actions through the game's ``step``. Where the record counts writes per
    position (metrics ``position_writes``), the replay must count the same: if it does not, the game
    was played with a limit on actions per turn (the referee applies only the first ones), and the
    smallest limit that reproduces the record is used; failing that, the game is ``Unreadable``."""
    make = partial(start_state, game, params_type, start)
    actions = [decode_actions(turn, action_type) for turn in game.turns]
    recorded = game.metrics.get("position_writes") if isinstance(game.metrics, dict) else None
    longest = max((len(a) for a in actions), default=0)
    for cap in (None, *range(1, min(longest, MAX_CAP + 1))):
        done = _replay_with(make, game, actions, cap)
        if not isinstance(recorded, dict) or done.state.metrics().get("position_writes") == recorded:
            return done
    raise Unreadable("no replay of its actions counts the writes its record counts")


class _Facts:
    """Every role's facts (the word sets of its clues), where each sits in the truth, and which of
    them are a value at a position (a clue of one value that sits at one position)."""

    def __init__(self, state: Any) -> None:
        self.roles: tuple[str, ...] = tuple(state.roles)
        self.truth: tuple[Any, ...] = tuple(state.truth)
        truth_words = [item_words(item) for item in self.truth]
        self.own: dict[str, tuple[frozenset[str], ...]] = {}
        self.at: dict[str, list[list[int]]] = {}  # role -> position index -> its facts there
        self.placed: dict[str, tuple[str, int, int]] = {}  # a value at a position: word -> (owner, fact, position)
        for role in self.roles:
            facts = tuple(dict.fromkeys(w for w in map(item_words, state.private(role)) if w))
            self.own[role] = facts
            self.at[role] = [[i for i, fact in enumerate(facts) if fact <= here] for here in truth_words]
            for i, fact in enumerate(facts):
                where = [p for p, here in enumerate(truth_words, start=1) if fact <= here]
                if len(fact) == 1 and len(where) == 1:
                    self.placed[next(iter(fact))] = (role, i, where[0])
        self.heard_by: dict[tuple[str, int], set[str]] = {}  # (owner, fact) -> the roles that heard it

    def mentioned(self, text: Any) -> dict[str, set[int]]:
        """Each role's facts that the message ``text`` mentions. A fact of several values: every one
        of its words is in the message. A value at a position: the message says where it is, either
        with the position's number next to the value (no other such value between them, on either
        side: "position 2 is the bolt", "bolt at 2"), or by listing two or more of these values,
        each outside any fact of several values the message mentions, in the order of their
        positions ("my shapes in order: ..."). Naming the value alone says nothing of its position,
        and "shape bolt -> color tan" is Bob's link, not the position of Alice's bolt. Any other
        fact of one value (a distractor, which sits nowhere): its word is in the message."""
        said = tokens(text)
        present = frozenset(said)
        found = {
            owner: {i for i, fact in enumerate(facts) if fact <= present and (len(fact) > 1 or next(iter(fact)) not in self.placed)}
            for owner, facts in self.own.items()
        }
        larger = frozenset(w for owner, ids in found.items() for i in ids if len(self.own[owner][i]) > 1 for w in self.own[owner][i])
        placed = self.placed
        marks = [t for t in said if t in placed or t.isdigit()]  # the values at positions and the numbers, in order
        listed: list[str] = []
        for k, mark in enumerate(marks):
            if mark not in placed:
                continue
            owner, i, position = placed[mark]
            number = str(position)
            if (k > 0 and marks[k - 1] == number) or (k + 1 < len(marks) and marks[k + 1] == number):
                found[owner].add(i)
            if mark not in larger and mark not in listed:
                listed.append(mark)
        places = [placed[w][2] for w in listed]
        if len(listed) >= 2 and all(a < b for a, b in zip(places, places[1:])):
            for w in listed:
                found[placed[w][0]].add(placed[w][1])
        return found

    def tell(self, sender: str, turn: PlayedTurn) -> None:
        """``sender``'s message reached the others: each hears the facts of what it received (the
        message as sent, unless the turn says what the channel delivered to whom)."""
        if turn.heard is None:
            received = {r: turn.message for r in self.roles if r != sender}
        else:
            received = {r: text for r, text in turn.heard.items() if r in self.roles and r != sender}
        for recipient, text in received.items():
            for owner, ids in self.mentioned(text).items():
                for i in ids:
                    self.heard_by.setdefault((owner, i), set()).add(recipient)

    def heard(self, role: str, owner: str, facts: list[int]) -> bool:
        return all(role in self.heard_by.get((owner, i), ()) for i in facts)

    def could_fix(self, role: str, hypothesis: tuple[Any, ...]) -> bool:
        """Some position of ``hypothesis`` is wrong and every other role's fact at it was heard."""
        others = [r for r in self.roles if r != role]
        return any(
            have != want and all(self.heard(role, other, self.at[other][p]) for other in others)
            for p, (have, want) in enumerate(zip(hypothesis, self.truth))
        )


@dataclass
class _Role:
    chances: int = 0  # turns with a read reply on which it could fix a position
    changed: bool = False  # it changed its hypothesis on one of them
    idle: bool = False  # it sent a read reply with no action on one of them
    said: set[int] | None = None  # its own facts mentioned so far (None: no message yet)
    first_all: bool = False  # its first message mentioned all its facts
    spread: int = 0  # its messages that mentioned one of its facts for the first time


def _strategy(seen: _Role, facts: int) -> str:
    if seen.chances and not seen.changed:
        return IGNORES
    if seen.first_all and facts:
        return ALL_AT_ONCE
    if seen.spread >= 2:
        return PIECE_BY_PIECE
    return OTHER


def read_game(game: PlayedGame, params_type: type, start: Start, action_type: Any) -> dict[str, RoleReading]:
    """Each role's reading of ``game``; raises ``Unreadable``."""
    done = replay(game, params_type, start, action_type)
    facts = _Facts(done.state)
    seen = {role: _Role() for role in facts.roles}
    simultaneous = isinstance(game.options, dict) and game.options.get("turn_order") == "simultaneous"
    in_flight: list[PlayedTurn] = []  # simultaneous: this round's messages, heard from the next round on
    for turn, before, after in zip(game.turns, done.before, done.after):
        if in_flight and in_flight[0].turn != turn.turn:
            for sent in in_flight:
                facts.tell(sent.role, sent)
            in_flight.clear()
        if before is None or after is None:
            continue
        mine = seen[turn.role]
        if turn.format_error is None and facts.could_fix(turn.role, before):
            mine.chances += 1
            mine.changed |= after != before
            mine.idle |= not turn.actions and not turn.rejected
        mentioned = facts.mentioned(turn.message)
        if isinstance(turn.message, str) and turn.message.strip():
            own = mentioned[turn.role]
            if mine.said is None:
                mine.said = set()
                mine.first_all = len(own) == len(facts.own[turn.role])
            if own - mine.said:
                mine.spread += 1
            mine.said |= own
        if simultaneous:
            in_flight.append(turn)
        else:
            facts.tell(turn.role, turn)
    modified = done.state.metrics().get("position_actions", {})
    readings = {}
    for role, mine in seen.items():
        alone = len(facts.roles) == 1
        readings[role] = RoleReading(
            strategy=None if alone else _strategy(mine, len(facts.own[role])),
            idle=mine.idle,
            overcorrected=max(modified.get(role, [0]) or [0]) >= OVERCORRECTION,
        )
    return readings


def message_kinds(game: PlayedGame, params_type: type, start: Start) -> dict[tuple[int, str], str]:
    """Each message's kind, by (turn, role), as the strategy classes read messages: ``all its facts``
    (it names every fact of its sender), ``new facts`` (some its sender had not named before),
    ``repeats`` (only facts named before), ``no facts``, ``silent`` (no message). Nothing for a game
    that cannot be started again."""
    try:
        facts = _Facts(start_state(game, params_type, start))
    except Unreadable:
        return {}
    said: dict[str, set[int]] = {role: set() for role in facts.roles}
    kinds = {}
    for turn in game.turns:
        if turn.role not in facts.own:
            continue
        if not isinstance(turn.message, str) or not turn.message.strip():
            kinds[(turn.turn, turn.role)] = SILENT
            continue
        own = facts.mentioned(turn.message)[turn.role]
        if own and len(own) == len(facts.own[turn.role]):
            kind = ALL_FACTS
        elif own - said[turn.role]:
            kind = NEW_FACTS
        else:
            kind = REPEATS if own else NO_FACTS
        said[turn.role] |= own
        kinds[(turn.turn, turn.role)] = kind
    return kinds
