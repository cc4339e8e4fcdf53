"""The run viewer in a real headless browser (the OS's Chromium driven by Playwright): the page loads
with no console error, the filters select the games they say, every registered game opens turn by
turn, and a served page fetches games on demand. Skipped where Chromium or Playwright is missing."""

from __future__ import annotations

import threading
from pathlib import Path

import msgspec
import pytest

from engine import RunDir
from engine.records.record import ErrorInfo, encode_record
from puzzles import GAMES
from puzzles.common.replay import BoardReplay
from runners.branch import main as branch_main
from runners.concurrent import main as run_main
from runners.sweep import main as sweep_main
from runners.view.__main__ import main as view_main
from runners.view.index import RunIndex
from runners.view.serve import make_server

# The runs are played before Chromium opens (the browser fixture says why).
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("mixed_run", "game_runs", "hostile_run", "branch_run")]


ROSTERS = [(n, r) for n, g in GAMES.items() for r in g.rules.rosters]


@pytest.fixture(scope="module")
def game_runs(tmp_path_factory) -> dict:
    """A run of two games per registered game and roster, messages kept as by default."""
    runs = {}
    for name, roster in ROSTERS:
        run = tmp_path_factory.mktemp("view") / f"{name}-{len(roster)}"
        agents = [f"--agent={role}={GAMES[name].default_policy}" for role in roster]
        assert run_main(["--game", name, "--games", "2", *agents, "--out", str(run), "--no-dashboard"]) == 0
        assert view_main([str(run)]) == 0
        runs[name, roster] = run
    return runs


@pytest.fixture
def page(browser):
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    page.close()
    assert errors == []


def shown_ids(page) -> list[int]:
    return [int(text) for text in page.locator("#games tbody a").all_inner_texts()]


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory) -> Path:
    """Two conditions (one solves, one does not) on 30 seeds each; game 3 turned into an error."""
    out = tmp_path_factory.mktemp("view") / "run"
    grid = out.parent / "g.toml"
    grid.write_text("seeds = 30\nagents = [['share_everything', 'one_piece'], ['noisy', 'ignore']]\nfeedback = ['none']\n")
    assert sweep_main([str(grid), "--out", str(out), "--no-dashboard"]) == 0
    records = RunDir.open(out).records()
    records[3] = msgspec.structs.replace(records[3], outcome="error", error=ErrorInfo("agent_error", "ValueError", "boom", "agent:alice"))
    (out / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))
    assert view_main([str(out), "--embed", "10"]) == 0
    return out


def test_the_page_lists_every_game_and_the_filters_select_what_they_say(page, mixed_run):
    records = RunDir.open(mixed_run).records()
    page.goto((mixed_run / "view.html").as_uri())
    assert page.locator("#conditions tbody tr").count() == 2
    assert page.inner_text("#count") == "60 games · page 1 of 2"
    assert shown_ids(page) == list(range(50))
    filters = page.inner_text("#filters")  # no seats filter in a run without people, and no stray "null" for it
    assert "null" not in filters and "seats" not in filters and "turns from" in filters
    page.click("#next")
    assert shown_ids(page) == list(range(50, 60))

    page.select_option("#f-outcome", "f")
    assert shown_ids(page) == [r.game_id for r in records if r.outcome == "failure"][:50]
    page.select_option("#f-outcome", "")
    page.select_option("#f-error", label="agent_error")
    assert shown_ids(page) == [3]
    page.select_option("#f-error", "")
    condition = records[40].spec.condition()
    page.select_option("#f-condition", label=condition)
    assert shown_ids(page) == [r.game_id for r in records if r.spec.condition() == condition]
    page.select_option("#f-condition", "")
    page.select_option("#f-model", label="noisy")
    assert shown_ids(page) == [r.game_id for r in records if "noisy" in r.spec.agents.values()]
    page.select_option("#f-model", "")
    page.fill("#f-min", "6")
    page.fill("#f-max", "9")
    expected = [r.game_id for r in records if 6 <= r.turns <= 9]
    assert 0 < len(expected) < 50 and shown_ids(page) == expected


def test_a_game_opens_turn_by_turn_and_one_not_in_the_file_says_how_to_see_it(page, mixed_run):
    record = RunDir.open(mixed_run).records()[1]
    page.goto((mixed_run / "view.html").as_uri())
    page.click("#games tbody a >> text='1'")
    page.wait_for_selector("#game .turn")
    assert page.locator("#game .turn").count() == len(record.turn_log)
    assert page.inner_text("#game h2") == f"Game 1: solved at turn {record.solved_turn}"
    assert page.locator("#game table.board").count() == 2  # at the start and at the end
    assert f"seed={record.spec.seed}" in page.inner_text("#game")  # all 64 bits, not a float's
    page.click("a.back")
    page.wait_for_selector("#games", state="visible")
    assert page.locator("#games tbody tr").count() == 50
    page.goto((mixed_run / "view.html").as_uri() + "#game=45")
    page.wait_for_selector("#game h2")
    assert "not in this file" in page.inner_text("#game")


@pytest.mark.parametrize("name, roster", ROSTERS, ids=[f"{n}-{len(r)}" for n, r in ROSTERS])
def test_every_game_opens_through_its_own_board(page, game_runs, name, roster):
    """Each game opens turn by turn; its board, where its replay draws one (``board`` is optional:
    ``BoardReplay``), heads the game with the game's own columns, and a game without one shows none."""
    run = game_runs[name, roster]
    game = GAMES[name]
    for record in RunDir.open(run).records():
        page.goto((run / "view.html").as_uri() + f"#game={record.game_id}")
        page.wait_for_selector("#game h2")
        assert page.locator("#game .turn").count() == len(record.turn_log)
        boards = page.locator("#game table.board")
        replay = game.faces.replay
        board = replay.board(game.rules.new(record.spec.params, record.spec.seed, roster, record.spec.max_turns)) if isinstance(replay, BoardReplay) else None
        if board is None:
            assert boards.count() == 0
        else:
            assert boards.first.locator("th").all_inner_texts() == list(board.columns)
        assert page.locator("#game .turn .message").count() == sum(1 for log in record.turn_log if log.message_chars)


def test_a_served_page_fetches_any_game_and_follows_the_run(page, mixed_run):
    server = make_server(RunIndex(mixed_run), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        record = RunDir.open(mixed_run).records()[45]
        page.goto(url + "#game=45")
        page.wait_for_selector("#game .turn")
        assert page.locator("#game .turn").count() == len(record.turn_log)
        assert page.request.get(url + "game/999.json").status == 404
        assert page.request.get(url + "run.json").json()["recorded"] == 60
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> Path:
    """Three games in which Alice's every message is HTML and terminal escapes (tests.helpers)."""
    run = tmp_path_factory.mktemp("view") / "hostile"
    assert run_main(["--games", "3", "--size", "2", "--agent", "alice=tests.helpers:HostileTalker",
                     "--out", str(run), "--no-dashboard"]) == 0
    assert view_main([str(run)]) == 0
    return run


def test_a_message_holding_html_and_script_tags_is_shown_as_text(page, hostile_run):
    run = hostile_run
    html = (run / "view.html").read_text(encoding="utf-8")
    assert "<!--" not in html.split("<script>", 1)[0].split("<body>", 1)[1]  # the data blocks hold no raw markup
    page.goto((run / "view.html").as_uri())
    assert shown_ids(page) == [0, 1, 2]
    page.click("#games tbody a >> text='0'")
    page.wait_for_selector("#game .turn")
    shown = page.inner_text("#game")
    assert "<!--<script> </script><img src=x onerror=alert(1)> &" in shown
    assert page.locator("#game img").count() == 0


@pytest.fixture(scope="module")
def branch_run(tmp_path_factory) -> Path:
    """Two games, and a branch run that drops Bob's first message in each."""
    first = tmp_path_factory.mktemp("view") / "first"
    assert run_main(["--games", "2", "--out", str(first), "--no-dashboard"]) == 0
    out = first.parent / "first-branches"
    assert branch_main([str(first), "--turns", "1", "--role", "bob", "--out", str(out), "--no-dashboard"]) == 0
    assert view_main([str(out)]) == 0
    return out


def test_a_branch_shows_beside_the_game_it_branches_with_its_point_marked(page, branch_run):
    page.goto((branch_run / "view.html").as_uri() + "#game=1")
    page.wait_for_selector("#game .beside")
    assert "branch at t1 bob drop#0: beside it, game 1 of" in page.inner_text("#game")
    marked = page.locator("#game article.branched")
    assert marked.count() == 2  # the changed turn, here and in the game it branches
    mine, theirs = marked.nth(0), marked.nth(1)
    assert mine.locator("blockquote.message").count() == 0  # dropped
    assert theirs.locator("blockquote.message").count() == 1  # as it was said
    assert page.locator("#game #original .turn").count() > 0
