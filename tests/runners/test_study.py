"""``asymgames study`` with 20 people at once, each a headless Chromium page driven by Playwright
through the one join link: pairing in the waiting room, a reload mid-turn, a participant who
vanishes, a kill -9 and restart of the server mid-study, the completion codes, the records and the
report, and that no page ever shows another seat's coins. Then the server's guards, without a
browser. No test passes or fails on how long anything took; limits only fail a hang."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from .study_driver import Participant, Server, by_api, drive

PEOPLE = 20
STUDY = """
name = "twenty"
allow_scripted = true
[time]
turn = 120
pair_wait = 4
gone_after = 3
[texts]
end = "Thank you! Your completion code is {code}."
[[blocks]]
game = "tsp"
rounds = 2
max_turns = 1
instructions = "Agree on one round trip with your partner."
  [[blocks.conditions]]
  name = "scripted"
  partner = "full_share"
  games = 40
  [[blocks.conditions]]
  name = "pair"
  partner = "person"
  games = 16
  fallback = "scripted"
"""


def _rows(weights: list, rooms: list[str]) -> list[str]:
    """A seat's coin table as the page's rows read (cells joined by spaces)."""
    coins = {frozenset((a, b)): w for a, b, w in weights}
    return [" ".join([r] + ["" if r == c else str(coins[frozenset((r, c))]) for c in rooms]) for r in rooms]


def e_people(started: list[dict], game_id: int) -> set[str]:
    return set(next(e["people"] for e in started if e["game_id"] == game_id).values())


def _get(url: str) -> dict:
    with urllib.request.urlopen(url) as r:
        return json.loads(r.read())


@pytest.mark.browser
def test_twenty_people_at_once_through_one_link_and_a_restart(tmp_path, browser):
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    server = Server(study, tmp_path / "out").start()
    people: list[Participant] = []
    try:
        people = [Participant(browser, server.links["Join"], n) for n in range(PEOPLE)]
        vanished, reloading = people[0], people[1]
        checked: dict = {}
        for held in people[2:4]:  # two take their turns only after the restart: games are in play when it comes
            held.hold = lambda: "restart" not in checked

        def special() -> None:
            """The one who vanishes mid-turn, the one who reloads mid-turn (the clock goes on), the restart."""
            if not vanished.gone and vanished.page.evaluate("document.body.classList.contains('mine')"):
                vanished.vanish()
            if "reload" not in checked and reloading.page.evaluate("document.body.classList.contains('mine')"):
                before = reloading.state()
                if before["status"] == "your_turn" and before["clock_running"]:
                    reloading.page.reload()
                    reloading.page.wait_for_function("() => document.body.classList.contains('mine')")
                    after = reloading.state()
                    checked["reload"] = (before, after)
            journal = server.journal()
            ended = sum(e["type"] == "ended" for e in journal)
            in_play = {e["game_id"] for e in journal if e["type"] == "started"} - {e["game_id"] for e in journal if e["type"] == "ended"}
            if "restart" not in checked and ended >= 8 and in_play and any(e["type"] == "left" for e in journal):
                server.kill()
                checked["restart"] = {"started": {e["game_id"] for e in server.journal() if e["type"] == "started"}}
                server.start()

        drive(people, lambda: all(p.done or p.gone for p in people) and "restart" in checked, limit=240, between=special)

        # A reload returned to the same turn, its clock where it was.
        before, after = checked["reload"]
        assert after["prompt"]["game_id"] == before["prompt"]["game_id"] and after["prompt"]["turn"] == before["prompt"]["turn"]
        assert after["clock_running"] and after["seconds_left"] <= before["seconds_left"]

        journal = server.journal()
        codes = {e["participant"]: e["code"] for e in journal if e["type"] == "joined"}
        assert len(codes) == PEOPLE
        for person in people[1:]:  # everyone but the one who vanished sees the end, with their own code
            state = person.state()
            assert state["status"] == "done" and state["screen"]["kind"] == "done"
            assert person.page.text_content("#code") == codes[state["participant"]] == state["screen"]["code"]
            assert person.errors == []
        gone = [e for e in journal if e["type"] == "left"]
        assert [e["reason"] for e in gone] == ["gone"]

        # Every game: started once, ended once or interrupted by the restart, recorded once.
        started = [e for e in journal if e["type"] == "started"]
        settled = [e for e in journal if e["type"] in ("ended", "interrupted")]
        assert len({e["game_id"] for e in started}) == len(started)
        assert sorted(e["game_id"] for e in settled) == sorted(e["game_id"] for e in started)
        records = server.records()
        ended = {e["game_id"]: e for e in journal if e["type"] == "ended"}
        assert sorted(r["game_id"] for r in records) == sorted(ended)  # nothing recorded twice, nothing lost
        interrupted = [e for e in journal if e["type"] == "interrupted"]
        assert interrupted and all(e["game_id"] in checked["restart"]["started"] for e in interrupted)
        for e in interrupted:  # their people went on to another game after the restart
            for who in e_people(started, e["game_id"]):
                assert who in codes and any(who in s["people"].values() and s["game_id"] not in checked["restart"]["started"] for s in started)
        absent = [e for e in ended.values() if e["absent"] is not None]
        assert [e["absent"] for e in absent] == [gone[0]["participant"]]
        pairs = [e for e in started if e["seat"] is None]
        assert pairs and all(len(set(e["people"].values())) == 2 for e in pairs)
        by_id = {r["game_id"]: r for r in records}
        for r in records:
            people_in = next(e["people"] for e in started if e["game_id"] == r["game_id"])
            assert {role: h["participant"] for role, h in r["humans"].items()} == people_in

        # No page ever showed another seat's coins: each showed its own seat's table, in its own game.
        for person in people:
            for seen in person.seen:
                record = by_id.get(seen["game"])
                if record is None:
                    continue  # a game the restart interrupted
                rooms, weights = record["metrics"]["rooms"], record["metrics"]["weights"]
                partner = next(role for role in weights if role != seen["role"])
                assert seen["rows"] == _rows(weights[seen["role"]], rooms)
                assert seen["rows"] != _rows(weights[partner], rooms)

        # The admin page's status, and the per-participant summary.
        status = _get(server.links["Admin"] + "/status")
        assert status["tally"] == {"done": PEOPLE - 1, "gone": 1}
        assert sum(c["counted"] for c in status["conditions"]) == len(ended)
        rows = {p["participant"]: p for p in status["participants"]}
        assert rows[gone[0]["participant"]]["walked_away"] == 1
        assert all(row["games_played"] >= 2 for pid, row in rows.items() if row["status"] == "done")
    finally:
        for person in people:
            person.close()
        output = server.stop()
    assert "stopped" in output
    summary = (tmp_path / "out" / "participants.csv").read_text().splitlines()
    assert len(summary) == PEOPLE + 1 and summary[0].startswith("participant,status,code")
    from runners.report.cli import main as report

    block = next((tmp_path / "out").glob("block-0-*"))
    assert report([str(block), "--no-plots", "--out", str(tmp_path / "report")]) == 0
    assert "Human seats" in (tmp_path / "report" / "tables.md").read_text()


def _request(url: str, *, method: str = "GET", body: bytes | None = None, headers: dict | None = None) -> int:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_server_answers_only_its_own_pages_and_limits_joins(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(STUDY.replace('[texts]', '[join]\nper_minute = 3\n[texts]'))
    server = Server(study, tmp_path / "out").start()
    try:
        join = server.links["Join"]
        base = join.rsplit("/", 1)[0]
        json_post = {"Content-Type": "application/json"}
        first = json.loads(urllib.request.urlopen(urllib.request.Request(join, b"{}", json_post, method="POST")).read())
        page = base + first["url"]
        assert _request(page) == 200
        assert _request(page[:-3] + "xyz") == 404
        assert _request(page + "/state", headers={"Host": "evil.example:80"}) == 403  # DNS rebinding
        assert _request(page + "/leave", method="POST", body=b"{}", headers={**json_post, "Origin": "http://evil.example"}) == 403
        assert _request(page + "/leave", method="POST", body=b"{}", headers={"Content-Type": "text/plain"}) == 403
        admin = server.links["Admin"]
        assert _request(admin) == 200 and _request(admin[:-2] + "zz") == 404
        assert _request(base + "/admin/" + first["url"].rsplit("/", 1)[1]) == 404  # a participant's token is not the admin's
        codes = [_request(join, method="POST", body=b"{}", headers=json_post) for _ in range(3)]
        assert codes[:2] == [200, 200] and codes[2] == 429  # three a minute from one address
        headers = urllib.request.urlopen(page).headers
        assert headers["Referrer-Policy"] == "no-referrer" and "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    finally:
        server.stop()


def test_a_model_partner_through_the_local_model_server(tmp_path):
    """The partner "model" as a study plays it: a model endpoint (here the local server, which plays
    a scripted strategy behind the OpenAI API), one participant through the API alone."""
    import os

    from tests.e2e.test_model_runs import server_process

    study = tmp_path / "study.toml"
    study.write_text('name = "model"\nmodel = "openai:full_share"\n[[blocks]]\ngame = "tsp"\nrounds = 2\nmax_turns = 2\n'
                     '[[blocks.conditions]]\nname = "model"\ngames = 4\n')
    with server_process("--latency", "0") as url:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-0000"}
        server = Server(study, tmp_path / "out", flags=("--openai-url", url + "/v1"), env=env).start()
        try:
            state = by_api(server.links["Join"])
        finally:
            server.stop()
    assert state["screen"]["kind"] == "done" and state["screen"]["code"]
    records = server.records()
    assert len(records) == 2 and all(r["error"] is None for r in records if "error" in r)
    assert sorted(role for r in records for role, policy in r["spec"]["agents"].items() if policy == "human") == ["ghost", "light"]
    assert all("openai:full_share" in r["spec"]["agents"].values() and r["usage"] for r in records)


@pytest.mark.browser
def test_the_last_page_of_the_study_says_how_the_last_game_went(tmp_path, browser):
    study = tmp_path / "study.toml"
    study.write_text('name = "one"\nallow_scripted = true\n[texts]\nend = "Thank you! Your completion code is {code}."\n'
                     '[[blocks]]\ngame = "tsp"\nrounds = 1\nmax_turns = 1\n'
                     '  [[blocks.conditions]]\n  name = "scripted"\n  partner = "full_share"\n  games = 1\n')
    server = Server(study, tmp_path / "out").start()
    try:
        person = Participant(browser, server.links["Join"], 0)
        drive([person], lambda: person.done, limit=120)
        person.page.wait_for_selector("#code", state="visible")
        last = person.page.locator("#last")
        assert last.is_visible()
        text = last.inner_text()
        assert re.search(r"Game 1 of 1 is over: (solved together|not solved)", text), text
        assert "turns played: 1" in text
        assert person.page.locator("#outcome").get_attribute("data-outcome") in ("success", "failure")
        person.close()
    finally:
        server.stop()
