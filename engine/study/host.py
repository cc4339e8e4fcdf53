"""A study served: participants join, are given games by the design's rule, wait for a partner where
their condition has one, play, and leave or finish; all on one event loop, every change journaled
(``engine.study.ledger``) before anyone is told of it.

- **Joining** makes a participant: a random pseudonymous id, a random token (its hash is kept), and
  a completion code (the study's, or their own).
- **Their next game** (``go``) is in the first block they have rounds left in, in their order of
  blocks (given when they join: the study file's, or a counterbalanced one, ``design.block_order``):
  with a person waiting for a partner there if there is one (people are paired first), else in the cell ``design.choose``
  gives. A cell with a person partner puts them in the waiting room; after ``time.pair_wait`` they
  play the condition's fallback (a model partner) instead.
- **Leaving**: a person who says so, or whose page has been away ``time.gone_after`` seconds while
  they play or wait, has left; their game ends (human_absent, on their account) and their partner
  is told and goes on to their next game.
- **The time limit** (``time.session_limit``): a session that reaches it ends as leaving does, the
  game in play recorded as unfinished with the reason in its error; the end page says so and gives the code.
- **A game lost to a fault** (the model partner down: an infrastructure error) does not count: its
  people are told so and go on to another game, up to ``EXTRA_TRIES`` more than the block's rounds.
- **A restart** reads the journal back: games that were in play end from their records if those were
  written, and are otherwise marked interrupted; their people go on to another game.
"""

from __future__ import annotations

import math
import secrets
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import anyio

from puzzles import GAMES, Game

from engine.play.game import play_game
from engine.policies.factory import PolicyFactory
from engine.policies.seat import FrontEnd
from engine.records.record import GameRecord, is_infra_error
from engine.study.design import Cell, block_order, choose, fallback, grid_condition, open_cells, slot
from engine.study.games import Block, SeatedFactory, absent_one
from engine.study.ledger import Done, Ended, Event, Interrupted, Joined, Journal, Left, Person, Started, token_hash
from engine.study.screens import (
    Screen, between_screen, end_screen, full_screen, instructions_screen, left_screen, ready_screen, time_up_screen,
    waiting_screen,
)
from engine.study.spec import Study

EXTRA_TRIES = 2  # games a participant may start in a block beyond its rounds, for games that did not count
TIME_UP = "time"  # a Left reason: the session reached the study's time limit
FAULT_NOTE = "Your last game stopped because of a technical problem on our side; it does not count, and you will play another."


class Wait(NamedTuple):
    participant: str
    block: int
    condition: str
    since: float


class Page(FrontEnd, Protocol):
    """A participant's page for the whole study: the seat they take in each game (a seat's front end)
    and the screens between games. ``away()``: seconds since the page last asked (0 while it asks)."""

    participant: str  # a study's page is always a participant's
    number: int  # games started for this participant
    gone: bool
    why: str  # why the person (or their partner) left, put in the game's error
    instructed: set[int]  # blocks whose instructions were shown
    skipped: set[int]  # blocks that had no game left for them

    def show(self, screen: Screen | None, *, final: bool = False) -> None: ...

    def away(self) -> float: ...

    def new_game(self, game_id: int) -> None: ...

    def seat(self, role: str) -> None: ...

    def heard(self, address: str, message: Any) -> None: ...

    def game_over(self, record: GameRecord, game: Game) -> None: ...

    def leave(self, partner: str | None = None) -> None: ...


class StudyHost:
    """The study on one event loop; ``pages`` makes a participant's page (participant, the study's
    title, games in all)."""

    def __init__(self, study: Study, out: Path, factory: PolicyFactory, pages: Callable[[str, str, int], Page]) -> None:
        self.study = study
        self.out = out
        self.factory = factory
        self.pages = pages
        self.journal = Journal(out / "journal.jsonl")
        self.ledger = self.journal.read()
        self.blocks = [Block(study, b, out) for b in range(len(study.blocks))]
        self.fronts: dict[str, Page] = {}
        self.waiting: list[Wait] = []
        self.group: Any = None
        self.total = sum(b.rounds for b in study.blocks)
        self._changed: anyio.Event | None = None  # set by a change ``watch`` must look at

    # ---- opening, the journal, a restart ----

    def open(self) -> None:
        """Open the journal and the results, and settle the games a stop left in play."""
        self.journal.open()
        for block in self.blocks:
            block.open()
        for b, block in enumerate(self.blocks):
            open_games = {g.started.game_id: g for g in self.ledger.open_games() if g.started.block == b}
            found = block.records(set(open_games))
            for game_id, game in open_games.items():
                record = found.get(game_id)
                self.add(Interrupted(b, game_id, time.time()) if record is None else self._ended(b, game.started, record))
        for person in self.ledger.people.values():
            front = self._front(person)
            front.number = len(person.games)
            if person.left or person.done:
                continue
            if not person.games:
                front.show(ready_screen())
                continue
            stopped = isinstance(person.games[-1].ended, Interrupted)
            self._after(person, "The study's server restarted; your last game was stopped and is not counted." if stopped else "")

    def close(self) -> None:
        self.journal.close()
        for block in self.blocks:
            block.close()

    def add(self, event: Event) -> None:
        self.journal.add(event)
        self.ledger.apply(event)

    def _ended(self, b: int, started: Started, record: Any) -> Ended:
        error = record.error.kind if record.error is not None else None
        return Ended(b, started.game_id, record.outcome, error, absent_one(record, started.people), time.time())

    # ---- participants ----

    def join(self) -> str | None:
        """A new participant's token, or None when the study has all its games."""
        if self.full():
            return None
        token = secrets.token_urlsafe(24)
        participant = "p" + secrets.token_hex(5)
        while participant in self.ledger.people:
            participant = "p" + secrets.token_hex(5)
        code = self.study.completion_code or secrets.token_hex(4).upper()
        order = block_order(self.study, self.ledger.orders(len(self.blocks)))
        fixed = order == tuple(range(len(self.blocks)))  # the file's order: not recorded
        self.add(Joined(participant, token_hash(token), code, time.time(), () if fixed else order))
        self._wake()
        self.go(self._front(self.ledger.people[participant]))
        return token

    def front(self, token: str) -> Page | None:
        person = self.ledger.person(token)
        return None if person is None else self._front(person)

    def _front(self, person: Person) -> Page:
        front = self.fronts.get(person.id)
        if front is None:
            front = self.fronts[person.id] = self.pages(person.id, self.study.texts.title, self.total)
            if person.done is not None:
                front.show(end_screen(self.study.texts, person.joined.code), final=True)
            elif person.left is not None:
                front.gone = True
                texts, reason = self.study.texts, person.left.reason
                front.show(time_up_screen(texts, person.joined.code) if reason == TIME_UP
                           else full_screen(texts) if reason == "full" else left_screen(texts), final=True)
        return front

    def go(self, front: Page) -> None:
        """The participant is ready for their next game."""
        person = self.ledger.people[front.participant]
        if person.left or person.done or person.playing() or any(w.participant == person.id for w in self.waiting):
            return
        block = self._block_of(person, front)
        if block is None and not person.games:  # the study filled up before they played: no code for nothing
            self.add(Left(person.id, "full", time.time()))
            front.show(full_screen(self.study.texts), final=True)
            return
        if block is None:
            self.add(Done(person.id, time.time()))
            front.show(end_screen(self.study.texts, person.joined.code), final=True)
            return
        text = self.study.blocks[block].instructions
        if text and block not in front.instructed:
            front.instructed.add(block)
            part = person.order(len(self.blocks)).index(block) + 1
            front.show(instructions_screen(f"Part {part} of {len(self.blocks)}", text))
            return
        if self._pair(person, block):
            return
        cell = choose(self.study, block, self._counts(block), self.ledger.at_place(block), person.had(block), person.rounds(block))
        if cell is None:  # filled while they read
            front.skipped.add(block)
            self.go(front)
        elif cell.seat is None:
            self.waiting.append(Wait(person.id, block, cell.condition, time.monotonic()))
            self._wake()
            front.show(waiting_screen(self.study.texts))
        elif not self._start(cell, {cell.seat: person.id}):
            front.skipped.add(block)
            self.go(front)

    def _block_of(self, person: Person, front: Page) -> int | None:
        for b in person.order(len(self.blocks)):
            block = self.study.blocks[b]
            tries = len(person.played(b))
            if b not in front.skipped and person.rounds(b) < block.rounds and tries < block.rounds + EXTRA_TRIES:
                return b
        return None

    def _counts(self, block: int) -> Counter[Cell]:
        """Games counted, in play, or awaited in the waiting room, per cell."""
        counts = self.ledger.counts(block)
        counts.update(Cell(block, w.condition, None) for w in self.waiting if w.block == block)
        return counts

    def _pair(self, person: Person, block: int) -> bool:
        """Pair ``person`` with someone waiting in ``block``, if anyone is."""
        for wait in self.waiting:
            cell = Cell(block, wait.condition, None)
            if wait.block != block or self.ledger.counts(block)[cell] >= self.study.condition(block, wait.condition).games:
                continue
            other = self.ledger.people[wait.participant]
            first, second = self.study.roles(block)
            had = other.had(block).seats
            people = {first: other.id, second: person.id} if had[first] <= had[second] else {first: person.id, second: other.id}
            self.waiting.remove(wait)
            if self._start(cell, people):
                return True
            self.waiting.append(wait)
        return False

    def leave(self, front: Page, reason: str = "left") -> None:
        person = self.ledger.people[front.participant]
        if person.left or person.done:
            return
        self.add(Left(person.id, reason, time.time()))
        self.waiting = [w for w in self.waiting if w.participant != person.id]
        game = person.playing()
        why = "the session's time limit was reached" if reason == TIME_UP else ""
        front.why = why
        front.leave()
        if game is not None:  # the partner's turn ends the game too, on this person's account
            role = next(r for r, p in game.started.people.items() if p == person.id)
            for other in set(game.started.people.values()) - {person.id}:
                self.fronts[other].why = why
                self.fronts[other].leave(partner=role)
        texts = self.study.texts
        front.show(time_up_screen(texts, person.joined.code) if reason == TIME_UP else left_screen(texts), final=True)

    # ---- games ----

    def _start(self, cell: Cell, people: dict[str, str]) -> bool:
        """Start a game of ``cell`` with ``people`` (role -> participant); False if no seed is left."""
        block = self.blocks[cell.block]
        index = grid_condition(self.study, block.grid, cell, conditions=block.conditions)
        seeds = block.grid.seeds
        had = set().union(*(self.ledger.people[p].had(cell.block).slots for p in people.values()))
        i = slot(self.ledger.used(cell.block, index, seeds), had, seeds)
        if i is None:
            return False
        first = self.ledger.people[next(iter(people.values()))]
        started = Started(
            cell.block, index * seeds + i, cell.condition, cell.seat, i, dict(people), first.rounds(cell.block), time.time(),
        )
        self.add(started)
        for role, participant in people.items():
            front = self.fronts[participant]
            front.new_game(started.game_id)
            front.seat(role)
        self.group.start_soon(self._play, block, started)
        self._wake()
        return True

    async def _play(self, block: Block, started: Started) -> None:
        fronts = {role: self.fronts[p] for role, p in started.people.items()}
        seated = SeatedFactory(self.factory, fronts, self.study.time.turn, self.study.time.absent_after)

        def tap(address: str, message: Any) -> None:
            for front in fronts.values():
                front.heard(address, message)

        spec = block.grid.spec(started.game_id)
        transcripts = block.transcripts
        assert transcripts is not None, "a block plays once it is open"
        transcript = transcripts.game_started(spec)
        record = await play_game(spec, seated, [transcript, tap])
        transcripts.game_finished(spec, record)
        block.writer.write(record)
        self.add(self._ended(block.index, started, record))
        game = GAMES[record.spec.game]
        for front in fronts.values():
            front.game_over(record, game)
        fault = is_infra_error(record)
        for participant in dict.fromkeys(started.people.values()):
            self._after(self.ledger.people[participant], FAULT_NOTE if fault else "")

    def _after(self, person: Person, note: str = "") -> None:
        """Between games: the outcome and a button to go on, or the end."""
        front = self.fronts[person.id]
        if person.left or person.done:
            return
        if self._block_of(person, front) is None:
            self.go(front)
        else:
            front.show(between_screen(note))

    # ---- the clock: the waiting room, pages away, the time limit ----

    async def watch(self) -> None:
        """Act on what the clock makes due (``due``), then sleep until the next of it can be due or
        the host changes (someone joins, waits for a partner or starts a game), whichever comes first."""
        while True:
            self._changed = anyio.Event()
            delay = self.due()
            with anyio.move_on_after(math.inf if delay is None else delay):
                await self._changed.wait()

    def due(self) -> float | None:
        """End the waits for a partner that are over or whose page has been away too long, and the
        sessions of people whose page has been away too long while they play or who reached the time
        limit. The seconds until the next of these can be due; None when none can be until the host
        changes. A page that is asking now cannot have been away ``gone_after`` before that much time
        has passed."""
        t = self.study.time
        now, clock = time.monotonic(), time.time()
        delays: list[float] = []
        for wait in list(self.waiting):
            front = self.fronts[wait.participant]
            away = front.away()
            if away > t.gone_after:
                self.waiting.remove(wait)
                front.show(between_screen("You were away, so you left the waiting room."))
            elif now - wait.since > t.pair_wait:
                self.waiting.remove(wait)
                self._fall_back(wait)
            else:
                delays += [t.gone_after - away, wait.since + t.pair_wait - now]
        for person in list(self.ledger.people.values()):
            if person.left or person.done:
                continue
            if t.session_limit:
                left = person.joined.at + t.session_limit - clock
                if left < 0:
                    self.leave(self._front(person), TIME_UP)
                    continue
                delays.append(left)
            page = self.fronts.get(person.id)
            if page is not None and person.playing() is not None and not page.gone:
                away = page.away()
                if away > t.gone_after:
                    self.leave(page, "gone")
                else:
                    delays.append(t.gone_after - away)
        return max(0.0, min(delays)) if delays else None

    def _wake(self) -> None:
        """Something may be due sooner than ``watch`` sleeps: have it look again."""
        if self._changed is not None:
            self._changed.set()

    def _fall_back(self, wait: Wait) -> None:
        """No partner came: the person plays the condition's fallback, else any open cell with a model partner."""
        person = self.ledger.people[wait.participant]
        instead = fallback(self.study, wait.block, wait.condition)
        counts = self._counts(wait.block)
        had, place, at_place = person.had(wait.block), person.rounds(wait.block), self.ledger.at_place(wait.block)
        people = {c for c in open_cells(self.study, wait.block, counts) if c.seat is None}
        others = {c for c in open_cells(self.study, wait.block, counts) if c.condition != instead}
        cell = next((found for shut in (people | others, people)  # the fallback first, then any cell with a model partner
                     if (found := choose(self.study, wait.block, {**counts, **dict.fromkeys(shut, 10**9)}, at_place, had, place))
                     is not None), None)
        front = self.fronts[person.id]
        if cell is None or not self._start(cell, {cell.seat or self.study.seats(wait.block)[0]: person.id}):
            front.skipped.add(wait.block)
            self.go(front)

    def full(self) -> bool:
        return not any(open_cells(self.study, b, self._counts(b)) for b in range(len(self.blocks)))


__all__ = ["Page", "StudyHost", "Wait"]
