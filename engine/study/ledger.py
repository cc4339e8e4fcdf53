"""What has happened in a study, as an append-only journal of events, and the state it adds up to.

Every change a study server makes is one JSON line appended with one write (``Journal.add``) before
anyone is told of it, so a server killed at any moment and started again reads back (``Ledger``)
every participant (their pseudonymous id, a hash of their token, their completion code), every game
started and how each ended. A game's record is written to its block's results before the line that
ends it; on a restart a game started but not ended is ended from its record if it has one, and is
otherwise marked interrupted (its participants go on to another game): no game is recorded twice.
Tokens are kept only as hashes; participant ids are random and say nothing of the person.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from engine.records.ordered import whole_lines
from engine.records.rundir import drop_partial_tail

from engine.study.design import Cell, Had


class Joined(msgspec.Struct, tag="joined", frozen=True):
    participant: str
    token: str  # sha256 of the token, hex
    code: str  # the completion code shown at the end
    at: float
    order: tuple[int, ...] = ()  # the blocks in the order they play them (empty: the study file's order)


class Started(msgspec.Struct, tag="started", frozen=True):
    block: int
    game_id: int  # in the block's run directory
    condition: str
    seat: str | None  # the cell's seat (None: every seat a person)
    slot: int  # the seed index
    people: dict[str, str]  # role -> participant
    place: int  # the game's place in its first participant's sequence of the block
    at: float


class Ended(msgspec.Struct, tag="ended", frozen=True):
    block: int
    game_id: int
    outcome: str
    error: str | None  # the error kind, if the game ended in error
    absent: str | None  # the participant whose absence ended it, if one did
    at: float


class Interrupted(msgspec.Struct, tag="interrupted", frozen=True):
    block: int
    game_id: int
    at: float


class Left(msgspec.Struct, tag="left", frozen=True):
    participant: str
    reason: str  # "left" (they said so), "gone" (their page was away too long), "full" (no game was left for them)
    at: float


class Done(msgspec.Struct, tag="done", frozen=True):
    participant: str
    at: float


Event = Joined | Started | Ended | Interrupted | Left | Done
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Event).decode


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Game:
    started: Started
    ended: Ended | Interrupted | None = None

    @property
    def cell(self) -> Cell:
        return Cell(self.started.block, self.started.condition, self.started.seat)

    def counts(self) -> bool:
        """The game fills its cell: in play, or ended with a record the study counts (no error, or a
        person walked away; ``engine.analysis.seats.in_study``)."""
        end = self.ended
        return end is None or (isinstance(end, Ended) and (end.error is None or end.absent is not None))

    def counts_for(self, participant: str) -> bool:
        """One of ``participant``'s rounds: ended without error, or ended by their own absence."""
        end = self.ended
        return isinstance(end, Ended) and (end.error is None or end.absent == participant)


@dataclass
class Person:
    joined: Joined
    games: list[Game] = field(default_factory=list)
    left: Left | None = None
    done: Done | None = None

    @property
    def id(self) -> str:
        return self.joined.participant

    def order(self, blocks: int) -> tuple[int, ...]:
        """The blocks in the order they play them."""
        return self.joined.order or tuple(range(blocks))

    def played(self, block: int) -> list[Game]:
        return [g for g in self.games if g.started.block == block]

    def rounds(self, block: int) -> int:
        """Games of ``block`` that count as played."""
        return sum(g.counts_for(self.id) for g in self.played(block))

    def had(self, block: int) -> Had:
        games = self.played(block)
        return Had(
            Counter(g.started.condition for g in games if g.counts_for(self.id)),
            Counter(role for g in games if g.counts_for(self.id) for role, p in g.started.people.items() if p == self.id),
            frozenset(g.started.slot for g in games),
        )

    def playing(self) -> Game | None:
        return next((g for g in self.games if g.ended is None), None)

    def unfinished(self) -> int:
        """Games started that did not end as played: walked away from (by them or a partner),
        interrupted by a restart, or ended by a fault."""
        return sum(g.ended is not None and not (isinstance(g.ended, Ended) and g.ended.error is None) for g in self.games)

    def walked_away(self) -> int:
        """Games that ended because they stopped answering or left."""
        return sum(isinstance(g.ended, Ended) and g.ended.absent == self.id for g in self.games)


class Ledger:
    """The study's state, as its events add it up."""

    def __init__(self) -> None:
        self.people: dict[str, Person] = {}
        self.by_token: dict[str, Person] = {}
        self.games: dict[tuple[int, int], Game] = {}
        self.events = 0

    def apply(self, event: Event) -> None:
        self.events += 1
        if isinstance(event, Joined):
            person = self.people[event.participant] = Person(event)
            self.by_token[event.token] = person
        elif isinstance(event, Started):
            game = self.games[(event.block, event.game_id)] = Game(event)
            for who in dict.fromkeys(event.people.values()):
                self.people[who].games.append(game)
        elif isinstance(event, (Ended, Interrupted)):
            self.games[(event.block, event.game_id)].ended = event
        elif isinstance(event, Left):
            self.people[event.participant].left = event
        elif isinstance(event, Done):
            self.people[event.participant].done = event

    def orders(self, blocks: int) -> Counter[tuple[int, ...]]:
        """Participants per block order given, of a study of ``blocks`` blocks (the study file's order
        among them, though a participant's record does not spell it out)."""
        return Counter(p.order(blocks) for p in self.people.values())

    def person(self, token: str) -> Person | None:
        return self.by_token.get(token_hash(token))

    def open_games(self) -> list[Game]:
        return [g for g in self.games.values() if g.ended is None]

    def counts(self, block: int) -> Counter[Cell]:
        """Games counted or in play, per cell of ``block``."""
        return Counter(g.cell for (b, _), g in self.games.items() if b == block and g.counts())

    def at_place(self, block: int) -> Counter[tuple[int, str]]:
        return Counter((g.started.place, g.started.condition) for (b, _), g in self.games.items() if b == block and g.counts())

    def used(self, block: int, grid_condition: int, seeds: int) -> set[int]:
        """The seed indices of a grid condition that games have used (any game, ended or not)."""
        low = grid_condition * seeds
        return {gid - low for (b, gid) in self.games if b == block and low <= gid < low + seeds}


class Journal:
    """The study's events on disk: one JSON line each, appended with one unbuffered write."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> Ledger:
        """The ledger of every whole line (a last line cut short by a kill is dropped first)."""
        drop_partial_tail(self.path)
        ledger = Ledger()
        if self.path.exists():
            with self.path.open("rb") as f:
                for number, _, line in whole_lines(f):
                    try:
                        ledger.apply(_decode(line))
                    except (msgspec.DecodeError, KeyError) as exc:
                        raise ValueError(f"{self.path} line {number} cannot be read: {exc}") from None
        return ledger

    def open(self) -> None:
        self._file: Any = open(self.path, "ab", buffering=0)

    def add(self, event: Event) -> None:
        data = memoryview(_encode(event) + b"\n")
        while data:
            data = data[self._file.write(data):]
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()
