"""The terminal seat: the form's logic with lines from memory, then the whole runner in a real
pseudo-terminal (typed answers, a person who types nothing, input that ends, two people at one
keyboard). Every wait on the terminal has a generous safety limit, so a hang fails instead of
blocking; nothing is timed."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import anyio
import pytest
from rich.console import Console

from engine.policies.seat import HumanAbsent, SeatTurn
from puzzles import ChatLine, TurnContext
from puzzles.common.replay import Board, Span
from puzzles.seat import ActionForm, Field, Section
from runners.seats.terminal import Form, Left, TerminalSeats
from tests.helpers import transcript_lines

ROOT = Path(__file__).resolve().parents[2]

# ---- The form, with lines from memory ----


class ToySeat:
    """A seat with a field of every kind: put a token in a cell, or walk a path."""

    max_actions = 2
    messages = True

    def rules(self, context):
        return "Put tokens in cells."

    def show(self, context):
        return (Section("Board", ("Cells and their tokens.",), Board(("cell", "token"), ((Span("1"), Span("apple", "right")),))),)

    def forms(self, context):
        return (
            ActionForm("put", "Put a token", (
                Field("cell", "cell", "number", minimum=1, maximum=3),
                Field("token", "token", "choice", ("apple", "apricot", "banana")),
            )),
            ActionForm("walk", "Walk a path", (Field("steps", "steps", "sequence", ("north", "south", "east"), minimum=1, maximum=3, repeats=True),)),
        )

    def action(self, context, kind, values):
        if kind == "put" and values["cell"] == 3 and values["token"] == "banana":
            raise ValueError("cell 3 takes no banana")
        return (kind, *values.values())

    def describe(self, action):
        return " ".join(str(part) for part in action)


def _turn(partners=("left",), directed=False) -> SeatTurn:
    context = TurnContext(
        game_id=4, role="right", turn=2, max_turns=5, view=None, feedback=None,
        conversation=(ChatLine(turn=1, sender="left", text="hello there"),), notices=("your last token was refused",),
        partners=partners, directed=directed,
    )
    return SeatTurn(context, ToySeat(), 60.0)


def _play(turn: SeatTurn, lines: list[str], *, close: bool = True):
    """The form's reply (or what it raised) and everything it printed."""
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)

    async def main():
        send, receive = anyio.create_memory_object_stream[str](100)
        for line in lines:
            send.send_nowait(line)
        if close:
            send.close()
        return await Form(turn, console, receive, echo=True).play()

    try:
        return anyio.run(main), out.getvalue()
    except Left as exc:
        return exc, out.getvalue()


def test_the_form_takes_a_message_and_actions_field_by_field_and_says_why_a_value_is_wrong():
    lines = ["hi", "?", "put", "4", "2", "ap", "apr", "2", "north, south east"]
    reply, shown = _play(_turn(), lines)
    assert reply.message == "hi"
    assert reply.actions == (("put", 2, "apricot"), ("walk", ["north", "south", "east"]))
    assert "Game 4 · turn 2 of 5 · you are right · partner left" in shown
    assert "left, turn 1: hello there" in shown and "! your last token was refused" in shown
    assert shown.count("Put tokens in cells.") == 2  # the first turn's rules, and again for "?"
    assert "✗ cell: give a number from 1 to 3" in shown
    assert "✗ token: 'ap' could be apple, apricot" in shown and "= apricot" in shown
    assert "added: put 2 apricot" in shown and "added: walk ['north', 'south', 'east']" in shown
    assert "most actions a turn can carry (2)" in shown
    assert "Your turn: message 'hi'; 1. put 2 apricot; 2. walk" in shown


def test_the_game_refusing_an_action_asks_the_form_again_and_undo_removes_the_last():
    lines = ["", "1", "3", "banana", "", "1", "1", "b", "u", "walk", "", ""]
    reply, shown = _play(_turn(), lines)
    assert reply.message == "" and reply.actions == ()
    assert "✗ cell 3 takes no banana: fill in the action again" in shown
    assert "removed: put 1 banana" in shown and "(back to the actions)" in shown
    assert "Your turn: no message; no action" in shown


def test_a_directed_message_asks_who_it_is_for():
    reply, shown = _play(_turn(partners=("left", "up"), directed=True), ["to you", "u", ""])
    assert (reply.message, reply.to) == ("to you", "up")
    assert "partners left, up" in shown and "to up" in shown


def test_input_that_ends_is_a_person_who_left():
    result, _ = _play(_turn(), ["a message"])
    assert isinstance(result, Left)


def test_lines_typed_between_turns_are_dropped_and_a_closed_input_ends_the_game():
    class Lines:
        echo = False

        def __init__(self):
            self.send, self.receive = anyio.create_memory_object_stream[str](100)

        def lines(self):
            return self.receive

    out = io.StringIO()
    keyboard = Lines()
    seats = TerminalSeats(Console(file=out, width=100, color_system=None), participant="P3", keyboard=keyboard)
    front = seats.front("right", 11)
    assert (front.kind, front.participant) == ("terminal", "P3")

    async def main():
        for line in ("early", "too early"):
            keyboard.send.send_nowait(line)
        keyboard.send.close()
        await front.play(_turn())

    with pytest.raises(HumanAbsent, match="input ended"):
        anyio.run(main)
    assert "(2 lines typed between turns discarded)" in out.getvalue()


# ---- The runner in a pseudo-terminal ----

SAFETY = 60.0  # seconds: only ever reached when something hangs
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
PROMPT = re.compile(r"(?:^|\n)([^\n]*?):\s*$")


class Terminal:
    """The runner on a pseudo-terminal of 120 x 50: what it printed (colours taken out) and a keyboard."""

    def __init__(self, *args: str) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
        self.master = master
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "runners.concurrent", *args], cwd=ROOT, stdin=slave, stdout=slave, stderr=slave,
            start_new_session=True, close_fds=True, env={**os.environ, "COLUMNS": "120", "LINES": "50"},
        )
        os.close(slave)
        self.text = ""
        self.seen = 0  # what ``expect`` has matched up to

    def _pump(self, wait: float) -> bool:
        """Read what arrives within ``wait`` seconds; False once the runner closed its terminal."""
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return self.proc.poll() is None
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the runner exited and closed the terminal
            return False
        self.text += ANSI.sub("", chunk.decode("utf-8", "replace"))
        return bool(chunk)

    def expect(self, pattern: str) -> re.Match:
        regex = re.compile(pattern)
        limit = time.monotonic() + SAFETY
        while True:
            found = regex.search(self.text, self.seen)
            if found:
                self.seen = found.end()
                return found
            if time.monotonic() > limit or not self._pump(0.2):
                pytest.fail(f"no {pattern!r} on the screen:\n{self.text[-3000:]}")

    def prompt(self) -> str:
        """The label of the next question the form asks: a line ending in ': ' after which nothing
        more comes (the form waits for the answer)."""
        while True:
            found = self.expect(r"(?:^|\n)([^\n]*?): $")
            before = len(self.text)
            self._pump(0.1)
            if len(self.text) == before:
                return found.group(1).strip()

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\r").encode())

    def end_input(self) -> None:
        os.write(self.master, b"\x04")  # Ctrl-D at the start of a line: end of input

    def finish(self) -> int:
        """The runner's exit status, once it exited (failing if it does not)."""
        try:
            limit = time.monotonic() + SAFETY
            while self._pump(0.2) and time.monotonic() < limit:
                pass
            try:
                return self.proc.wait(timeout=SAFETY)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the runner did not exit:\n{self.text[-3000:]}")
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


def _record(out: Path) -> dict:
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


GAME = ["--game", "asympuzl", "--agent", "bob=human", "--games", "1", "--size", "3", "--max-turns", "3"]


def _fill(term: Terminal, field: str, answers: dict) -> None:
    """Answer one field of the form from what the screen shows of it: a wrong value first, then a
    number for a range or the first choice, a unique prefix for a later choice, text otherwise."""
    hint = term.text[: term.seen].rsplit(f"  {field} (", 1)[-1]
    if hint.startswith("a number, the name"):
        choices = re.findall(r"(?:^|\s)(\d+) (\S+)", hint)
        names = [name for _, name in choices]
        term.type("no such thing")
        term.expect(r"✗ ")
        if answers.setdefault("choices", 0) == 0:
            term.type("2")
        else:
            name = names[2]
            prefix = next(name[:n] for n in range(1, len(name) + 1) if sum(c.startswith(name[:n]) for c in names) == 1)
            term.type(prefix)
            term.expect(rf"= {re.escape(name)}")
        answers["choices"] += 1
    elif re.match(r"(\d+) to (\d+)\)", hint) or hint.startswith("a whole number"):
        low = re.match(r"(\d+) to (\d+)\)", hint)
        term.type(str(int(low.group(2)) + 1) if low else "many")
        term.expect(r"✗ ")
        term.type(low.group(1) if low else "1")
    else:
        term.type("x")


def test_a_person_types_a_message_and_an_action_in_a_terminal(tmp_path):
    out = tmp_path / "run"
    term = Terminal(*GAME, "--participant", "P09", "--out", str(out))
    answers: dict = {}
    assert term.prompt().endswith("Message (Enter for none)")
    term.type("hello from the keyboard")
    assert term.prompt().endswith("Action")
    term.type("1")
    while not (label := term.prompt()).endswith("Action"):
        _fill(term, label, answers)
    assert re.search(r"added: [^\n]+\nActions", term.text)
    term.type("")
    term.expect(r"Your turn: message 'hello from the keyboard'; 1\. ")
    term.expect(r"Sent\.")
    for _ in range(2):  # the other two turns: nothing to say or do
        assert term.prompt().endswith("Message (Enter for none)")
        term.type("")
        assert term.prompt().endswith("Action")
        term.type("")
    term.expect(r"Game 0 is over")
    assert term.finish() == 0
    assert "Game 0 is over" in term.text and "Results:" in term.text
    # The end of the game in a person's words: the game's words for each score, whose it is, the turns.
    end = term.text.split("Game 0 is over", 1)[1].split("┏", 1)[0]  # before the run's table for the researcher
    assert "actions_per_position" not in end and "actions/pos" not in end
    assert re.search(r"changes you made to your answer, per position \(fewer is more direct\) \(you\): \d", end)
    assert re.search(r"\(Alice\): \d", end) and "turns played: 3" in end and "You (Bob): 3 turns" in end
    record = _record(out)
    assert record["spec"]["agents"]["bob"] == "human"
    assert record["humans"]["bob"]["front"] == "terminal" and record["humans"]["bob"]["participant"] == "P09"
    assert record["humans"]["bob"]["turns"] == 3 and record["humans"]["bob"].get("timeouts", 0) == 0
    played = [t for t in record["turn_log"] if t["role"] == "bob"]
    assert played and all(t["human"]["seconds"] >= 0 and not t["human"].get("timed_out") for t in played)
    transcript = transcript_lines(out)[0]
    assert [t.get("message", "") for t in transcript["turns"] if t["role"] == "bob"] == ["hello from the keyboard", "", ""]


def test_a_person_who_types_nothing_times_out_and_the_game_ends(tmp_path):
    out = tmp_path / "run"
    term = Terminal(*GAME, "--human-timeout", "1", "--human-absent-after", "2", "--out", str(out))
    term.expect(r"Time is up: the turn was played with no action\.")
    term.expect(r"Time is up: the turn was played with no action\.")
    term.expect(r"Game 0 is over: ended early")
    term.expect(r"The game ended early: you left or stopped answering\.")
    assert term.finish() == 0
    record = _record(out)
    assert record["error"]["kind"] == "human_absent"
    assert record["humans"]["bob"]["timeouts"] == 2
    assert [t["human"]["timed_out"] for t in record["turn_log"] if t["role"] == "bob"] == [True]


def test_input_that_ends_ends_the_game_at_once(tmp_path):
    out = tmp_path / "run"
    term = Terminal(*GAME, "--out", str(out))  # a turn of ten minutes: only the end of input ends it soon
    assert term.prompt().endswith("Message (Enter for none)")
    term.end_input()
    term.expect(r"The game ended early: you left or stopped answering\.")
    assert term.finish() == 0
    record = _record(out)
    assert record["error"]["kind"] == "human_absent"
    assert (record["humans"]["bob"]["turns"], record["humans"]["bob"]["timeouts"]) == (1, 1)  # the turn left is counted


def test_two_people_share_one_keyboard(tmp_path):
    out = tmp_path / "run"
    term = Terminal("--game", "asympuzl", "--agent", "alice=human", "--agent", "bob=human", "--games", "1", "--size", "3",
                    "--max-turns", "1", "--out", str(out))
    for role in ("alice", "bob"):
        term.expect(rf"{role}'s turn: pass the keyboard to {role}\.")
        term.prompt()
        term.type(f"{role} says hi")
        term.prompt()
        term.type("")
    assert term.finish() == 0
    record = _record(out)
    assert set(record["humans"]) == {"alice", "bob"}
    assert "alice, turn 1: alice says hi" in term.text  # bob was shown what alice said


# ---- The runner's flags ----


def test_a_run_with_a_person_plays_one_game_at_a_time_and_its_resume_repeats_the_flags(tmp_path):
    from engine import PolicyFactory
    from runners.flags.running import concurrency
    from runners.concurrent import prepare

    argv = [*GAME, "--out", str(tmp_path / "run"), "--human-timeout", "30", "--human-absent-after", "3", "--participant", "P1"]
    prepared = prepare(argv, PolicyFactory())
    prepared.session.close()
    assert concurrency(prepared.args, prepared.plan) == 1
    assert prepared.command.endswith("--human-timeout 30 --human-absent-after 3 --participant P1")
    prepared = prepare(["--resume", str(tmp_path / "run"), "--concurrency", "4"], PolicyFactory())
    prepared.session.close()
    assert concurrency(prepared.args, prepared.plan) == 4 and prepared.command.endswith("--concurrency 4")
    models = prepare(["--games", "3", "--out", str(tmp_path / "scripted")], PolicyFactory())
    models.session.close()
    assert concurrency(models.args, models.plan) == 256 and "--concurrency" not in models.command


@pytest.mark.parametrize(("extra", "said"), [
    (["--agent", "bob=human", "--executor", "ray"], "argument --executor: a person plays a seat"),
    (["--participant", "P1"], "argument --participant: no seat of this run is played by a person"),
    (["--agent", "bob=human", "--participant", "Jane Doe"], "never a name"),
    (["--agent", "bob=human", "--human-timeout", "0"], "argument --human-timeout"),
])
def test_flags_of_a_person_that_cannot_work_are_refused_in_one_line(tmp_path, capsys, extra, said):
    from runners.concurrent import main

    with pytest.raises(SystemExit) as stop:
        main(["--game", "asympuzl", "--games", "1", "--out", str(tmp_path / "run"), *extra])
    assert stop.value.code == 2 and said in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
