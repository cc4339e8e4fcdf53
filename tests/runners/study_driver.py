"""Helpers of the study tests: the server as a process (killed and started again as a crash would
leave it), and participants driven through their pages one small step at a time, so that one
Playwright thread keeps many pages going at once."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"^(Join|Admin): (http://\S+)$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m runners.study`` on a fixed port, started (and started again) on one directory."""

    def __init__(self, study: Path, out: Path, port: int | None = None, flags: tuple[str, ...] = (), env: dict | None = None) -> None:
        self.study, self.out, self.port = study, out, port or free_port()
        self.flags, self.env = flags, env
        self.process: subprocess.Popen | None = None
        self.links: dict[str, str] = {}

    def start(self) -> Server:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runners.study", str(self.study), "--out", str(self.out), "--port", str(self.port), *self.flags],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env,
        )
        self.links = {}
        while len(self.links) < 2:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"the study server ended early: {self.process.wait()} {self.process.stderr.read()}")
            found = LINK.match(line.strip())
            if found:
                self.links[found[1]] = found[2]
        return self

    def kill(self) -> None:
        """kill -9: nothing of the server's runs after it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.communicate()

    def stop(self) -> str:
        """Ctrl-C; the server's output."""
        if self.process is None or self.process.poll() is not None:
            return ""
        self.process.send_signal(2)
        out, err = self.process.communicate(timeout=30)
        return out + err

    def journal(self) -> list[dict]:
        path = self.out / "journal.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")] if path.exists() else []

    def records(self) -> list[dict]:
        return [json.loads(line) for path in sorted(self.out.glob("block-*/results.jsonl")) for line in path.read_text().splitlines()]


STATE = """() => ({status: document.body.dataset.status || '', screen: document.body.dataset.screen || '',
  mine: document.body.classList.contains('mine'), go: !document.getElementById('screen-go').hidden && !document.getElementById('screen-go').disabled})"""
ROWS = """() => { const part = [...document.querySelectorAll('#sections .part')].find(p => p.querySelector('table'));
  return part ? [...part.querySelectorAll('tbody tr')].map(tr => [...tr.children].map(td => td.textContent).join(' ')) : []; }"""


class Participant:
    """One person at one page: ``step()`` does the next small thing the page asks for, if any."""

    def __init__(self, browser, join: str, number: int) -> None:
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.number = number
        self.turns = 0
        self.seen: list[dict] = []  # per turn: the game, the role, the coin table as shown
        self.done = False
        self.gone = False
        self.hold = lambda: False  # while true, the participant does not take their turn
        self.page.goto(join)
        self.page.click("#agree")
        self.page.wait_for_url(re.compile(r"/p/"))
        self.url = self.page.url

    def state(self) -> dict:
        """The page's own state as its server answers it."""
        return self.page.evaluate("async () => (await fetch(location.pathname + '/state?since=-1')).json()")

    def step(self) -> bool:
        """Act once if the page asks for it; whether it did anything."""
        if self.done or self.gone:
            return False
        try:
            now = self.page.evaluate(STATE)
        except Exception:  # the page is between loads
            return False
        if now["status"] == "done":
            self.done = True
            return True
        if now["go"]:
            self.page.click("#screen-go")
            return True
        if now["mine"] and not self.hold():
            state = self.state()
            if state["status"] != "your_turn":
                return False
            self.seen.append({"game": state["prompt"]["game_id"], "role": state["role"], "rows": self.page.evaluate(ROWS)})
            self.page.fill("#message", f"hello from {self.number}")
            before = int(self.page.evaluate("document.body.dataset.answered || 0"))
            self.page.click("#send")
            self.page.wait_for_function(
                "n => Number(document.body.dataset.answered || 0) > n || document.getElementById('send-error').textContent"
                " || !document.body.classList.contains('mine')", arg=before, timeout=30_000,
            )
            self.turns += 1
            return True
        return False

    def vanish(self) -> None:
        self.gone = True
        self.context.close()

    def close(self) -> None:
        if not self.gone:
            self.context.close()


def by_api(join: str, limit: float = 60.0) -> dict:
    """One participant through the study's API alone (no page): join, start, answer every turn with a
    message; their last state. The limit only fails a hang."""
    def call(url: str, data: dict | None = None) -> dict:
        body = None if data is None else json.dumps(data).encode()
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"} if body else {})
        with urllib.request.urlopen(request) as r:
            return json.loads(r.read())

    base = join.rsplit("/", 1)[0]
    page = base + call(join, {})["url"]
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        state = call(page + "/state?since=-1")
        if state["status"] == "done":
            return state
        if state["screen"] and state["screen"].get("step") == "start":
            call(page + "/go", {"step": "start"})
        elif state["status"] == "your_turn":
            stamp = {"game": state["prompt"]["game_id"], "turn": state["prompt"]["turn"]}
            call(page + "/shown", stamp)
            call(page + "/answer", {**stamp, "message": "my coins are on the table"})
        time.sleep(0.05)
    raise AssertionError(f"the participant never finished: {state}")


def drive(people: list[Participant], until, limit: float = 120.0, between=None) -> None:
    """Step every participant until ``until()``; ``between()`` runs after each sweep. The limit only
    fails a hang: no test passes or fails on how long the study took."""
    deadline = time.monotonic() + limit
    while not until():
        if time.monotonic() > deadline:
            raise AssertionError("the study hung: " + ", ".join(f"{p.number}:{p.page.evaluate(STATE)}" for p in people if not (p.done or p.gone)))
        busy = [p.step() for p in people]
        if between is not None:
            between()
        if not any(busy):
            time.sleep(0.05)
