"""``python -m runners.play`` in a real headless browser (the OS's Chromium driven by Playwright): a
person's seat played through the page only, for every registered game; two seats in two pages;
a study of two games with the participant id asked on the page; a turn that times out. The pages
are driven from the forms they show (field kinds read off the DOM), so any game's seat works.
Skipped where Chromium or Playwright is missing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from puzzles import GAMES

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SEAT_LINE = re.compile(r"^Seat (\S+?)(?: \(participant \S+\))?: (http://127\.0\.0\.1:\d+/seat/\S+)$")
READY = "() => document.body.classList.contains('mine') || document.body.dataset.status === 'done'"


class Served:
    """A ``runners.play`` process on a free port, and the URL of each seat it printed."""

    def __init__(self, out: Path, *args: str) -> None:
        self.out = out
        self.process = subprocess.Popen(
            [sys.executable, "-m", "runners.play", "--port", "0", "--out", str(out), *args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self.urls: dict[str, str] = {}
        seats = args.count("--seat")
        while len(self.urls) < seats:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError(f"runners.play ended early: {self.process.wait()} {self.process.stderr.read()}")
            found = SEAT_LINE.match(line.strip())
            if found:
                self.urls[found[1]] = found[2]

    def finish(self) -> list[dict]:
        """Wait for the command to end (status 0) and read its records."""
        out, err = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, f"{out}\n{err}"
        return [json.loads(line) for line in (self.out / "results.jsonl").read_text().splitlines()]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


@pytest.fixture
def served(tmp_path):
    started: list[Served] = []

    def start(*args: str) -> Served:
        started.append(Served(tmp_path / f"run{len(started)}", *args))
        return started[-1]

    yield start
    for s in started:
        s.stop()


@pytest.fixture
def new_page(browser):
    pages = []

    def make():
        page = browser.new_page()
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        # A refused answer is a 400 the console reports; anything else is a fault of the page.
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" and "400" not in m.text else None)
        pages.append(page)
        return page

    yield make
    for page in pages:
        assert page.errors == []
        page.close()


# ---- driving a page from what it shows ----


def fill_form(page) -> None:
    """Fill the fields of the chosen form with the first value each allows."""
    for field in page.locator("#fields .field").all():
        kind, control = field.get_attribute("data-kind"), field.locator("input, select").first
        if kind == "choice":
            control.select_option(index=1)  # the first choice after the "choose…" placeholder
        elif kind == "number":
            control.fill(field.get_attribute("data-min") or "1")
        elif kind == "sequence":
            picks = field.locator(".pick")
            for i in range(min(int(field.get_attribute("data-min") or 1), picks.count())):
                picks.nth(i).click()
        else:
            control.fill("1")


def add_an_action(page) -> bool:
    """Add the first action the page accepts (trying each kind of form); False if none."""
    if page.locator("#builder").is_hidden():
        return False
    for kind in page.eval_on_selector_all("#kind option", "options => options.map(o => o.value)"):
        page.select_option("#kind", kind)
        fill_form(page)
        before = page.locator("#actions li").count()
        page.evaluate("document.getElementById('check-error').textContent = ''")
        page.click("#add-action")
        page.wait_for_function(
            "n => document.querySelectorAll('#actions li').length > n || document.getElementById('check-error').textContent", arg=before,
        )
        if page.locator("#actions li").count() > before:
            return True
    return False


def take_turn(page, message: str, act: bool = True) -> None:
    if page.locator("#message").is_visible():
        page.fill("#message", message)
    added = act and add_an_action(page)
    assert added or page.locator("#message").is_visible(), "the page offered neither a message nor an action that checks"
    sent = int(page.evaluate("document.body.dataset.answered || 0"))
    page.click("#send")
    page.wait_for_function(
        "n => Number(document.body.dataset.answered || 0) > n || document.getElementById('send-error').textContent", arg=sent,
    )
    assert page.text_content("#send-error") == ""


def play_out(page, say=lambda turn: f"hello {turn}") -> int:
    """Play every turn the page gives until the run is over; the turns played."""
    turns = 0
    while True:
        page.wait_for_function(READY)
        if page.evaluate("document.body.dataset.status") == "done":
            return turns
        turns += 1
        take_turn(page, say(turns))


def human_turns(record: dict, role: str) -> list[dict]:
    return [t["human"] for t in record["turn_log"] if t["role"] == role and "human" in t]


# ---- the tests ----


@pytest.mark.parametrize("name", list(GAMES))
def test_a_browser_seat_plays_a_whole_game_of_every_game(name, served, new_page):
    game = GAMES[name]
    role = game.rules.rosters[0][-1]
    run = served("--game", name, "--seat", role, "--max-turns", "2", "--participant", "P01")
    page = new_page()
    page.goto(run.urls[role])
    assert play_out(page) >= 1
    assert page.locator("#over").is_visible() and "study is over" in page.text_content("#over")
    assert page.get_attribute("#outcome", "data-outcome") in ("success", "failure", "error")
    assert page.text_content("#outcome") in ("solved together", "not solved", "ended early")  # words, not codes
    assert "_" not in page.text_content("#last")
    [record] = run.finish()
    assert record["humans"][role]["front"] == "browser" and record["humans"][role]["participant"] == "P01"
    seen = human_turns(record, role)
    assert seen and all(t["seconds"] >= 0 and not t.get("timed_out") for t in seen)
    assert record["humans"][role]["turns"] == len(seen)


def test_two_people_take_both_seats_and_see_only_their_own(served, new_page):
    one, two = GAMES["tsp"].rules.rosters[0]
    run = served("--game", "tsp", "--seat", one, "--seat", two, "--max-turns", "2", "--participant", "P01")
    pages = {one: new_page(), two: new_page()}
    for role, page in pages.items():
        page.goto(run.urls[role])
    for turn in (1, 2):
        for role, page in pages.items():  # each plays when its page says it is their turn, in turn
            other = two if role == one else one
            page.wait_for_function(READY)
            if turn == 2:
                assert f"from {other} 1" in page.text_content("#chat")  # the other's message reached this page
                assert f"from {role} 1" in page.text_content("#chat")  # and its own is there too
            if (turn, role) == (2, two):  # both pages show a turn now: compare them
                shown = {r: p.locator("#sections .part").all_inner_texts() for r, p in pages.items()}
                for r, p in pages.items():
                    own = [text for text in shown[r] if text not in shown[two if r == one else one]]
                    assert own, "a seat shows something of its own (its private information)"
                    assert not any(text in pages[two if r == one else one].inner_text("body") for text in own)
                    assert p.text_content("#role") == r
            take_turn(page, f"from {role} {turn}", act=False)
    for page in pages.values():
        play_out(page)
    [record] = run.finish()
    assert set(record["humans"]) == {one, two}
    assert all(h["front"] == "browser" and h["turns"] == 2 for h in record["humans"].values())


def test_a_study_asks_the_participant_and_keeps_games_apart(served, new_page):
    name = "tsp"
    role = GAMES[name].rules.rosters[0][0]
    run = served("--game", name, "--seat", role, "--games", "2", "--max-turns", "2")
    url = run.urls[role]
    for wrong in (url[:-3] + "xyz", url[:-3] + "xyz/state"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(wrong)
        assert refused.value.code == 404
    page = new_page()
    page.goto(url)
    page.wait_for_selector("#participant-id")
    page.fill("#participant-id", "Ada Lovelace")
    page.click("#participant-send")
    page.wait_for_function("() => document.getElementById('participant-error').textContent")
    assert "never a name" in page.text_content("#participant-error")
    page.fill("#participant-id", "P07")
    page.click("#participant-send")
    page.wait_for_function(READY)
    assert page.text_content("#game") == "game 1 of 2"
    secret = "only-in-the-first-game"
    while page.text_content("#game") == "game 1 of 2":
        take_turn(page, secret)
        page.wait_for_function(READY)
    assert page.text_content("#game") == "game 2 of 2"
    assert secret not in page.content()  # nothing of the first game's conversation, shown or hidden
    assert "Game 1 of 2 is over" in page.text_content("#last")
    play_out(page, lambda turn: "second game")
    records = run.finish()
    assert [r["game_id"] for r in records] == [0, 1]
    assert all(r["humans"][role]["participant"] == "P07" for r in records)


def test_a_turn_that_times_out_is_recorded_and_a_late_answer_refused(served, new_page):
    role = GAMES["tsp"].rules.rosters[0][0]
    run = served("--game", "tsp", "--seat", role, "--max-turns", "2", "--human-timeout", "1", "--participant", "P01")
    page = new_page()
    page.goto(run.urls[role])
    page.wait_for_function("() => document.getElementById('notices').textContent.includes('ran out')")
    late = page.evaluate(
        """async () => { const r = await fetch(location.pathname + '/answer', {method: 'POST',
             headers: {'Content-Type': 'application/json'}, body: JSON.stringify({game: 0, turn: 1, message: 'too late'})}); return [r.status, await r.json()]; }"""
    )
    assert late == [400, {"error": "the turn's time ran out"}]
    page.wait_for_function("() => document.body.dataset.status === 'done'")
    [record] = run.finish()
    assert record["humans"][role]["timeouts"] >= 1
    assert human_turns(record, role)[0]["timed_out"] is True
    assert "too late" not in json.dumps(record)


def _state(url: str) -> dict:
    with urllib.request.urlopen(url + "/state?since=-1") as r:
        return json.loads(r.read())


def _until(check, what: str, limit: float = 30.0):
    """Poll ``check`` until it gives something true (a safety limit only fails a hang)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


def test_the_clock_starts_when_the_page_shows_the_turn_and_a_reload_keeps_it(served, new_page):
    role = GAMES["tsp"].rules.rosters[0][0]
    run = served("--game", "tsp", "--seat", role, "--max-turns", "1", "--participant", "P01")
    url = run.urls[role]
    waiting = _until(lambda: (s := _state(url))["status"] == "your_turn" and s, "the turn waits")
    assert (waiting["clock_running"], waiting["seconds_left"]) == (False, 600.0)  # nobody has seen it yet
    time.sleep(0.5)
    assert _state(url)["seconds_left"] == 600.0  # and its clock does not run while no page shows it
    page = new_page()
    page.goto(url)
    page.wait_for_function(READY)
    running = _until(lambda: (s := _state(url))["clock_running"] and s, "the page tells the server it showed the turn")
    assert running["seconds_left"] <= 600.0
    time.sleep(0.5)
    page.reload()  # a reload returns to the same turn with the clock where it was, not a fresh one
    page.wait_for_function(READY)
    again = _state(url)
    assert again["clock_running"] and again["seconds_left"] < running["seconds_left"]
    take_turn(page, "done")
    page.wait_for_function("() => document.body.dataset.status === 'done'")
    [record] = run.finish()
    [turn] = human_turns(record, role)
    assert not turn.get("timed_out")
