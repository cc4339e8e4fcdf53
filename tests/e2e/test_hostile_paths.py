"""Hostile text on every path: the local server puts a message of markup breakers, terminal escapes,
bidi and zero-width characters, deep brackets and length (``runners.fake_llm`` bad reply
``hostile``) into every reply of every game; it goes through the real SDK, the parser, the game,
the records and transcripts, and comes out of the report, replay, the transcript command, the
written and served viewer (in headless Chromium: nothing executes, every game shows), the live
dashboard and a person's terminal seat (in a pseudo-terminal: no sequence reaches it raw)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from runners.concurrent import main as run_main
from runners.replay import main as replay_main
from runners.report import main as report_main
from runners.transcript import main as transcript_main
from runners.view.__main__ import main as view_main
from runners.view.index import RunIndex
from runners.view.serve import make_server
from tests.e2e.test_model_runs import ROOT, server_process
from tests.helpers import transcript_lines

KEY = "sk-test-hostile-0000"
# Each game with a strategy the local server plays, through OpenAI's SDK or Anthropic's.
GAMES = {
    "asympuzl": ["--model", "openai:share_everything", "--bob", "anthropic:one_piece"],
    "tsp": ["--model", "openai:full_share"],
    "einstein": ["--model", "openai:optimal"],
    "chain": ["--model", "openai:share_everything", "--agent", "carol=openai:share_everything"],
}
RAW = ("\x1b]0;pwned", "\x1b[2J", "\u202e", "\x9b31m", "\x00")  # what must never reach a terminal as it is


@pytest.fixture(scope="module")
def server():
    with server_process("--latency", "0", "--bad-reply", "hostile=1") as url:
        yield url


def model_flags(url: str) -> list[str]:
    return ["--openai-url", url + "/v1", "--anthropic-url", url]


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory) -> dict[str, Path]:
    found = {}
    with pytest.MonkeyPatch.context() as patch:  # the keys for these runs only: later tests see none
        patch.setenv("OPENAI_API_KEY", KEY)
        patch.setenv("ANTHROPIC_API_KEY", KEY)
        for game, agents in GAMES.items():
            out = tmp_path_factory.mktemp("hostile") / game
            assert run_main(["--game", game, "--games", "3", *agents, *model_flags(server), "--out", str(out),
                             "--transcripts", "--no-dashboard"]) == 0
            found[game] = out
    return found


def reached_the_records(run: Path) -> bool:
    return "pwned" in json.dumps(transcript_lines(run), ensure_ascii=False)


@pytest.mark.parametrize("game", GAMES)
def test_every_game_keeps_playing_and_stores_the_text(runs, game):
    records = [json.loads(line) for line in (runs[game] / "results.jsonl").read_text().splitlines()]
    assert len(records) == 3 and all(r["outcome"] != "error" for r in records)
    assert reached_the_records(runs[game])


@pytest.mark.parametrize("game", GAMES)
def test_report_replay_and_transcripts_print_it_escaped(runs, game, capsys):
    run = runs[game]
    assert report_main([str(run), "--analyses", "--no-plots"]) == 0
    assert replay_main([str(run), "0"]) == 0
    printed = capsys.readouterr().out
    for fmt in ("md", "html", "tex"):
        assert transcript_main([str(run), "0", "--format", fmt]) == 0
        text = capsys.readouterr().out
        assert not any(raw in text for raw in RAW), fmt
        if fmt == "html":
            assert "<script>alert" not in text and "<img src=x" not in text and 'href="javascript:' not in text
    assert not any(raw in printed for raw in RAW)
    if game != "einstein":  # Einstein's players send no messages: the text is in their reasoning only
        assert "\\x1b]0;pwned" in printed  # shown, as a visible escape
    page = (run / "report" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<img src=x" not in page


# ---- The viewer in Chromium ----

def open_every_game(browser, url: str) -> str:
    """Every game of the page's list opened in turn; the text shown. Fails on a dialog, a page
    error or an image (all the message could make if read as markup)."""
    page = browser.new_page()
    problems: list[str] = []
    page.on("dialog", lambda d: (problems.append(f"dialog {d.message}"), d.dismiss()))
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    try:
        page.goto(url)
        page.wait_for_selector("#games tbody tr")
        ids = [int(t) for t in page.locator("#games tbody tr td:first-child").all_inner_texts()]
        assert ids == [0, 1, 2]
        shown = ""
        for game_id in ids:
            page.goto(f"{url.split('#')[0]}#game={game_id}")
            page.wait_for_selector("#game .turn")
            shown += page.inner_text("#game")
            assert page.locator("#game img, #game a[href^='javascript']").count() == 0
        assert problems == []
        return shown
    finally:
        page.close()


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.browser
def test_the_written_viewer_shows_every_game_and_runs_nothing(runs, browser, game):
    assert view_main([str(runs[game])]) == 0
    shown = open_every_game(browser, (runs[game] / "view.html").as_uri())
    if game != "einstein":
        assert "<!--<script>alert('comment')</script>" in shown


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.browser
def test_the_served_viewer_shows_every_game_and_runs_nothing(runs, browser, game):
    server = make_server(RunIndex(runs[game]), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        shown = open_every_game(browser, f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()
    if game != "einstein":
        assert "onerror=alert('img')" in shown


# ---- Terminals: the dashboard and a person's seat ----

SAFETY = 120.0  # seconds: only reached when something hangs


def in_a_terminal(args: list[str], until: bytes, *, typed: bytes = b"") -> bytes:
    """The runner on a pseudo-terminal of 160 x 50; every byte it wrote, up to ``until`` (then it
    is stopped) or its exit. ``typed`` is written once the output shows ``until``."""
    master, slave = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "runners.concurrent", *args], cwd=ROOT, stdin=slave, stdout=slave,
                            stderr=slave, start_new_session=True, close_fds=True,
                            env={**os.environ, "COLUMNS": "160", "LINES": "50", "OPENAI_API_KEY": KEY})
    os.close(slave)
    out = b""
    limit = time.monotonic() + SAFETY
    try:
        while time.monotonic() < limit and until not in out:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        return out
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(master)


def test_the_live_dashboard_shows_model_text_escaped(tmp_path):
    # Calls that take a while, so that the dashboard draws its running games with their last messages
    # many times over (it redraws a few times a second) before the run ends.
    with server_process("--latency", "0.2", "--bad-reply", "hostile=1") as slow:
        out = in_a_terminal(["--games", "2", "--model", "openai:one_piece", *model_flags(slow), "--out", str(tmp_path / "run"),
                             "--concurrency", "2"], until=b"Results:")
    assert b"Results:" in out, out[-2000:]
    assert b"\\x1b]0;pwned" in out  # the live messages show it, as visible escapes
    for raw in RAW:
        assert raw.encode() not in out, raw


def test_a_person_s_terminal_seat_shows_the_partner_s_text_escaped(server, tmp_path):
    out = in_a_terminal(["--games", "1", "--size", "3", "--alice", "openai:share_everything", "--bob", "human",
                         *model_flags(server), "--out", str(tmp_path / "run")], until=b"Message (Enter for none)")
    assert b"Message (Enter for none)" in out, out[-2000:]
    text = out.decode("utf-8", "replace")
    assert "\\x1b]0;pwned" in text and "onerror=alert('img')" in text  # the partner's message, escaped
    for raw in RAW:
        assert raw not in text, raw
