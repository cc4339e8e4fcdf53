"""A person plays a seat in the terminal: the seat's view drawn with rich, and a guided form for
the message and the actions (``engine.policies.seat`` is the contract; ``puzzles.seat`` the game's side).

Each turn shows the header (game, turn, role, partners, time left), the rules (in full on the
seat's first turn), what the seat sees, the conversation and what was rejected last turn; then it
asks for a message, who it is for (when messages are directed), and actions one at a time from a
numbered menu of the game's action forms, field by field, with the game's reason shown when a value
or an action is wrong. The policy cancels the form when the turn's time is up.

Input comes from ``runners.seats.keyboard`` (stdin read by a thread, as lines in a memory stream).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from rich.columns import Columns
from rich.console import Console
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from engine.policies import (
    DEFAULT_ABSENT_AFTER, DEFAULT_TURN_SECONDS, ChosenAction, HumanAbsent, PolicyFactory, SeatAnswer, SeatTurn,
)
from puzzles import Reply, get_game
from puzzles.seat import ActionForm, Field, Section, check_values, pick

from runners.printable import printable
from runners.seats.keyboard import Keyboard, Left
from runners.seats.ending import ending
from runners.words import counted

STYLES = {"right": "green", "wrong": "red", "strong": "bold", "": ""}  # as runners.replay draws marks
UNDO, RULES = "u", "?"


def styled(span: Any) -> Text:
    return Text(span.text, style=STYLES.get(span.mark, ""))


def section_view(section: Section) -> list[Any]:
    parts: list[Any] = [Text(section.title, style="bold underline")]
    parts += [Text(line) for line in section.lines]
    if section.board is not None:
        table = Table(show_edge=True, pad_edge=True)
        for column in section.board.columns:
            table.add_column(column)
        for row in section.board.rows:
            table.add_row(*(styled(cell) for cell in row))
        parts.append(table)
    return parts


def clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def field_hint(field: Field) -> str:
    """How a field is filled in, in a few words."""
    if field.kind == "choice":
        return "a number, the name or its start"
    if field.kind == "number":
        if field.minimum is not None and field.maximum is not None:
            return f"{field.minimum} to {field.maximum}"
        return "a whole number"
    if field.kind == "sequence":
        low, high = field.minimum, field.maximum
        count = "" if low is None or high is None else f"{low} " if low == high else f"{low} to {high} "
        return f"{count}items in order, separated by spaces or commas"
    return "text"


def numbered(choices: tuple[str, ...]) -> Columns:
    """The choices, numbered, in columns (top to bottom, as a person reads a list)."""
    width = len(str(len(choices)))
    return Columns([f"{i:>{width}} {c}" for i, c in enumerate(choices, start=1)], column_first=True, padding=(0, 3))


class Form:
    """One turn of the terminal form: draws ``turn.prompt`` and asks until the answer is a reply."""

    def __init__(self, turn: SeatTurn, console: Console, lines: MemoryObjectReceiveStream[str], *,
                 echo: bool = False, first: bool = True, hot_seat: bool = False) -> None:
        self.turn = turn
        self.prompt = turn.prompt
        self.console = console
        self.lines = lines
        self.echo = echo
        self.first = first
        self.hot_seat = hot_seat
        self.deadline = anyio.current_effective_deadline()

    def left(self) -> str:
        return "" if math.isinf(self.deadline) else f"{clock(self.deadline - anyio.current_time())} left"

    def timed(self, label: str) -> str:
        """A question with the time left before it."""
        return f"({self.left()}) {label}" if self.left() else label

    def draw(self) -> None:
        p, out = self.prompt, self.console
        partners = f"partner{'s' * (len(p.partners) != 1)} {', '.join(p.partners) or 'none'}"
        title = " · ".join(part for part in (
            f"Game {p.game_id}", f"turn {p.turn} of {p.max_turns}", f"you are {p.role}", partners, self.left()) if part)
        if self.hot_seat and out.is_terminal:
            out.clear()  # one keyboard, several people: the last one's view leaves the screen
        out.print()
        out.print(Rule(Text(title, style="bold")))
        if self.hot_seat:
            out.print(Text(f"{p.role}'s turn: pass the keyboard to {p.role}.", style="bold yellow"))
        if self.first:
            out.print(Panel(p.rules, title="Rules", title_align="left", border_style="dim"))
        else:
            out.print(Text("(rules: type ?)", style="dim"))
        for section in p.sections:
            out.print()
            for part in section_view(section):
                out.print(part)
        if p.conversation:
            out.print()
            out.print(Text("Conversation", style="bold underline"))
            for chat in p.conversation:
                who = f"{chat.sender} (you)" if chat.sender == p.role else chat.sender
                out.print(Text.assemble((f"{who}, turn {chat.turn}: ", "cyan"), printable(chat.text)))
        if p.notices:
            out.print()
            out.print(Text("Last turn", style="bold underline"))
            for notice in p.notices:
                out.print(Text(f"! {printable(notice)}", style="yellow"))
        out.print()

    async def ask(self, label: str) -> str:
        """The next line typed, stripped; "?" shows the rules and asks again."""
        while True:
            self.console.print(Text(label, style="bold"), end=" ")
            try:
                line = (await self.lines.receive()).strip()
            except anyio.EndOfStream:
                self.console.print()
                raise Left from None
            except BaseException:  # cancelled (the time is up, Ctrl-C): what follows starts a line of its own
                self.console.print()
                raise
            if self.echo:
                self.console.print(line, highlight=False)
            if line != RULES:
                return line
            self.console.print(Panel(self.prompt.rules, title="Rules", title_align="left", border_style="dim"))

    def say(self, text: str, style: str = "") -> None:
        self.console.print(Text(text, style=style))

    async def play(self) -> Reply:
        self.draw()
        while True:
            answer = await self.answer()
            try:
                reply = self.turn.reply(answer)
            except ValueError as exc:
                self.say(f"Not sent: {exc}. Fill in the turn again.", "red")
                continue
            self.say("Sent. Waiting for the others…", "dim")
            return reply

    async def answer(self) -> SeatAnswer:
        p = self.prompt
        message, to = "", None
        if p.messages:
            message = await self.ask(self.timed("Message (Enter for none):"))
            if message and p.directed and len(p.partners) > 1:
                to = await self.choose(Field("to", "To", "choice", p.partners), "To whom?")
        actions = await self.actions()
        shown = [f"message {message!r}" + (f" to {to}" if to else "") if message else "no message"]
        shown += [f"{i}. {self.turn.describe(a)}" for i, a in enumerate(actions, start=1)] or ["no action"]
        self.say("Your turn: " + "; ".join(shown), "bold")
        return SeatAnswer(message=message, to=to, actions=tuple(actions))

    async def choose(self, field: Field, label: str) -> str:
        self.console.print(numbered(field.choices))
        while True:
            try:
                return pick(field, await self.ask(label))
            except ValueError as exc:
                self.wrong(exc)

    def wrong(self, reason: Any) -> None:
        self.say(f"  ✗ {reason}", "red")

    async def actions(self) -> list[ChosenAction]:
        p = self.prompt
        chosen: list[ChosenAction] = []
        forms = {form.kind: form for form in p.forms}
        while forms and (p.max_actions is None or len(chosen) < p.max_actions):
            limit = "" if p.max_actions is None else f" ({len(chosen)} of at most {p.max_actions})"
            more = f"{UNDO}: undo the last   " if chosen else ""
            self.say(f"Actions{limit}", "bold")
            self.console.print(Padding(numbered(tuple(f.label for f in forms.values())), (0, 0, 0, 2)))
            self.say(f"  {more}Enter: done", "dim")
            line = await self.ask(self.timed("Action:"))
            if not line:
                return chosen
            if line.lower() == UNDO:
                if chosen:
                    self.say(f"  removed: {self.turn.describe(chosen.pop())}", "yellow")
                continue
            form = self.form_named(line, list(forms.values()))
            if form is not None:
                action = await self.fill(form)
                if action is not None:
                    chosen.append(action)
        if chosen and p.max_actions is not None:
            self.say(f"That is the most actions a turn can carry ({p.max_actions}).", "dim")
        return chosen

    def form_named(self, line: str, forms: list[ActionForm]) -> ActionForm | None:
        kinds = Field("action", "Action", "choice", tuple(f.kind for f in forms))
        try:
            kind = pick(kinds, line)
        except ValueError as exc:
            try:
                label = pick(Field("action", "Action", "choice", tuple(f.label for f in forms)), line)
                kind = next(f.kind for f in forms if f.label == label)
            except ValueError:
                self.wrong(f"{line!r} is not one of the actions: give its number or its name" if "not one of" in str(exc) else exc)
                return None
        return next(f for f in forms if f.kind == kind)

    async def fill(self, form: ActionForm) -> ChosenAction | None:
        """The form filled in field by field, until the game takes it; None if the person goes back."""
        if form.help:
            self.say(f"  {form.help}", "dim")
        while True:
            values: dict[str, Any] = {}
            for field in form.fields:
                value = await self.field(form, field)
                if value is None:
                    self.say("  (back to the actions)", "dim")
                    return None
                values[field.name] = value
            action = ChosenAction(form.kind, values)
            try:
                self.say(f"  added: {self.turn.describe(action)}", "green")
                return action
            except ValueError as exc:
                self.wrong(f"{exc}: fill in the action again (Enter on a field: back to the actions)")

    async def field(self, form: ActionForm, field: Field) -> Any:
        """One field's value, checked as the game checks it; None on an empty line (go back)."""
        one = ActionForm(form.kind, form.label, (field,))
        about = f" — {field.help}" if field.help else ""
        self.say(f"  {field.label} ({field_hint(field)}){about}", "dim")
        if field.choices:
            self.console.print(Padding(numbered(field.choices), (0, 0, 0, 4)))
        while True:
            line = await self.ask(f"  {field.label}:")
            if not line:
                return None
            try:
                value = check_values(one, {field.name: line})[field.name]
            except ValueError as exc:
                reason = str(exc)
                if len(field.choices) > 8 and " is not one of " in reason:  # the list is on the screen already
                    reason = reason.partition(" is not one of ")[0] + " is not one of the choices above"
                self.wrong(reason)
                continue
            if str(value) != line and field.kind != "number":
                self.say(f"    = {' '.join(value) if isinstance(value, list) else value}", "dim")
            return value


class TerminalFront:
    """The front end of one role in one game (``engine.policies.seat.FrontEnd``)."""

    kind = "terminal"

    def __init__(self, seats: TerminalSeats, role: str, seed: int) -> None:
        self.seats = seats
        self.role = role
        self.seed = seed
        self.participant = seats.participant
        self.turns = 0

    async def play(self, turn: SeatTurn) -> Reply:
        seats = self.seats
        async with seats.terminal:  # hot-seat: one form on the screen at a time
            lines = seats.keyboard.lines()
            dropped = lines.statistics().current_buffer_used
            for _ in range(dropped):
                lines.receive_nowait()
            if dropped:
                seats.console.print(Text(f"({dropped} line{'s' * (dropped != 1)} typed between turns discarded)", style="dim"))
            form = Form(turn, seats.console, lines, echo=seats.keyboard.echo, first=self.turns == 0,
                        hot_seat=len(seats.roles.get(self.seed, ())) > 1)
            self.turns += 1
            turn.shown()  # the form is on the screen now: the turn's clock starts (a hot seat waits without it)
            try:
                return await form.play()
            except Left:
                raise HumanAbsent(f"{self.role} left: the terminal's input ended") from None

    def timed_out(self, turn: SeatTurn) -> None:
        self.seats.console.print(Text("Time is up: the turn was played with no action.", style="bold red"))


class TerminalSeats:
    """The people of a run at this terminal (``engine.policies.seat.Seats``), and an observer of its games
    (``engine.play.run.GameObserver``) that tells them how each game ended."""

    def __init__(self, console: Console | None = None, *, participant: str | None = None, keyboard: Keyboard | None = None) -> None:
        self.console = console or Console()
        self.participant = participant
        self.keyboard = keyboard or Keyboard()
        self.terminal = anyio.Lock()
        self.roles: dict[int, set[str]] = {}  # game seed -> roles played here

    def front(self, role: str, seed: int) -> TerminalFront:
        self.roles.setdefault(seed, set()).add(role)
        return TerminalFront(self, role, seed)

    def game_started(self, spec: Any) -> None:
        return None

    def game_finished(self, spec: Any, record: Any) -> None:
        """How the game went, in the words of a page's end of game (``runners.seats.ending``)."""
        roles = self.roles.pop(spec.seed, set())
        humans = record.humans if isinstance(record.humans, dict) else {}
        said = ending(record, get_game(record.spec.game), roles)
        style = "green" if record.outcome == "success" else "red"
        out = self.console
        out.print()
        out.print(Rule(Text(f"Game {record.game_id} is over: {said['headline']}", style=f"bold {style}")))
        for words, value in said["scores"]:
            out.print(f"  {words}: {_score(value)}", highlight=False)
        out.print(f"  turns played: {record.turns}", highlight=False)
        if said["error"]:
            out.print(Text(printable(said["error"]), style="red"))
        for role, seat in humans.items():
            who = f"You ({role.capitalize()})" if role in roles else role.capitalize()
            out.print(f"{who}: {counted(seat.turns, 'turn')}, {seat.timeouts} timed out, {seat.seconds:.0f} s in all", highlight=False)


def _score(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:g}" if isinstance(value, float) else str(value)


def seats_for(args: argparse.Namespace, factory: PolicyFactory, console: Console) -> TerminalSeats:
    """The people of the run at this terminal, set up in ``factory``."""
    seats = TerminalSeats(console, participant=args.participant)
    factory.seats = seats
    factory.turn_seconds = args.human_timeout if args.human_timeout is not None else DEFAULT_TURN_SECONDS
    factory.absent_after = args.human_absent_after if args.human_absent_after is not None else DEFAULT_ABSENT_AFTER
    return seats
