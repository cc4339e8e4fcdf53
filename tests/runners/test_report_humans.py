"""Games with a person in a seat in the report and the viewer: games played through a scripted front
end (no one waits: it answers at once, or never, with a short turn time), the report's table of
human seats in every format it writes, the success table's row for the person's condition, and the
viewer's detail and list marking the person's seat and turns."""

from __future__ import annotations

import csv
from pathlib import Path

import anyio
import msgspec
import pytest

from bus import HumanTurn
from engine import PolicyFactory, RunDir
from engine.play.game import play_game
from engine.policies.seat import HumanSeat, SeatAnswer
from engine.records.record import encode_record
from engine.plan.spec import GameSpec, Options
from puzzles import get_game
from runners.concurrent import main as run_main
from runners.report import main as report_main
from runners.view.__main__ import main as view_main
from runners.view.detail import game_detail
from runners.view.index import RunIndex, people_of

GAME = get_game("asympuzl")
PARTNER = "share_everything"


class Front:
    """A person who answers every turn at once with a message, or never answers."""

    kind = "browser"
    participant = "P07"

    def __init__(self, answers: bool) -> None:
        self.answers = answers

    async def play(self, turn):
        if not self.answers:
            await anyio.sleep_forever()  # cancelled when the turn's time is up
        return turn.reply(SeatAnswer(message="hello"))

    def timed_out(self, turn) -> None:
        pass


class Seats:
    def __init__(self, answers: bool) -> None:
        self.answers = answers

    def front(self, role: str, seed: int) -> Front:
        return Front(self.answers)


def spec(gid: int, human: bool = True) -> GameSpec:
    return GameSpec(
        game_id=gid, seed=gid, params=GAME.rules.Params(), agents={"alice": PARTNER, "bob": "human" if human else PARTNER},
        options=Options(feedback=GAME.rules.default_feedback, max_turns=4),
    )


@pytest.fixture(scope="module")
def played() -> list:
    """Two games the person played through, one they walked away from, one without a person."""

    async def play() -> list:
        records = []
        for gid, answers in ((0, True), (1, True), (2, False)):
            factory = PolicyFactory()
            factory.seats, factory.turn_seconds = Seats(answers), 0.01
            records.append(await play_game(spec(gid), factory))
        records.append(await play_game(spec(3, human=False), PolicyFactory()))
        return records

    return anyio.run(play)


def write_run(path: Path, records: list) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))
    return path


def test_the_report_writes_the_human_seats_table_in_every_format(played, tmp_path, capsys):
    assert [r.outcome for r in played] == ["failure", "failure", "error", "success"]
    assert played[2].error.kind == "human_absent"
    run = write_run(tmp_path / "run", played)
    assert report_main([str(run), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    out = run / "report"

    with (out / "humans.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    assert (row["agents"], row["bob"], row["games"], row["n"]) == (f"{PARTNER} / human", "human", "3", "3")
    assert (row["participants"], row["participant_ids"], row["human_absent"]) == ("1", "P07", "1")
    assert float(row["timeouts_per_game"]) == pytest.approx(2 / 3, abs=1e-4)  # two timeouts in the game the person left
    agent_turns = [sum(t.role == "alice" for t in r.turn_log) for r in played[:3]]
    human_turns = [sum(t.role == "bob" for t in r.turn_log) for r in played[:3]]
    assert float(row["amt"]) == pytest.approx(sum(agent_turns) / 3, abs=1e-4)
    assert float(row["hmt"]) == pytest.approx(sum(human_turns) / 3, abs=1e-4)
    if GAME.records.human_study:  # the game's own study scores, read when the report is made
        assert all(key in row for key in GAME.records.human_study)
    else:  # else its success: the absent game counts as not completed
        assert (row["success_n"], row["success"]) == ("3", "0.0")

    markdown = (out / "tables.md").read_text()
    assert "## Human seats" in markdown and f"| {PARTNER} / human | 3 | 3 | 1 |" in markdown
    assert f"| {PARTNER} / human |" in markdown.split("## Success rate")[1].split("##")[0]  # its own success row
    assert "did not complete the game" in markdown
    assert "\\caption{Human seats}" in (out / "tables.tex").read_text()
    assert '<h2 id="humans">Human seats</h2>' in (out / "report.html").read_text()
    assert "Human seats" in printed and "humans.csv" in printed


def test_a_run_without_a_person_has_no_human_seats_table_and_a_stale_one_is_removed(played, tmp_path):
    run = write_run(tmp_path / "run", played)
    assert report_main([str(run), "--no-plots"]) == 0
    assert (run / "report" / "humans.csv").exists()
    write_run(run, played[3:])
    assert report_main([str(run), "--no-plots"]) == 0
    assert not (run / "report" / "humans.csv").exists()
    assert "Human seats" not in (run / "report" / "tables.md").read_text()
    assert "Human seats" not in (run / "report" / "tables.tex").read_text()


def test_the_viewer_detail_marks_the_persons_seat_and_turns(played):
    detail = game_detail(played[2], None)
    assert detail["humans"] == {"Bob": {"front": "browser", "participant": "P07", "turns": 2, "timeouts": 2,
                                        "seconds": played[2].humans["bob"].seconds}}
    humans = [(t["name"], t["human"]) for t in detail["log"]]
    assert [h["timed_out"] for name, h in humans if name == "Bob"] == [True]
    assert all(h is None for name, h in humans if name == "Alice")
    answered = game_detail(played[0], None)["log"]
    bob = [t["human"]["timed_out"] for t in answered if t["name"] == "Bob"]
    assert bob == [False] * played[0].humans["bob"].turns and bob
    assert people_of(played[0]) == "P07" and people_of(played[3]) == ""


@pytest.fixture(scope="module")
def person_run(tmp_path_factory) -> Path:
    """A run of the viewer's usual kind (agents that take every turn), its game 1 turned into one a
    person played (seat, response times, one timeout), its game 0 left to the agents."""
    out = tmp_path_factory.mktemp("view") / "run"
    assert run_main(["--game", "asympuzl", "--games", "2", "--agent=alice=noisy", "--agent=bob=ignore",
                     "--out", str(out), "--no-dashboard"]) == 0
    records = RunDir.open(out).records()
    game = records[1]
    log, bob_turns = [], 0
    for t in game.turn_log:
        if t.role == "bob":
            bob_turns += 1
            t = msgspec.structs.replace(t, human=HumanTurn(60.0, timed_out=True) if bob_turns == 2 else HumanTurn(12.4))
        log.append(t)
    agents = dict(game.spec.agents, bob="human")
    records[1] = msgspec.structs.replace(
        game, spec=msgspec.structs.replace(game.spec, agents=agents), turn_log=log,
        humans={"bob": HumanSeat("browser", "P07", bob_turns, 1, 100.0)},
    )
    (out / "results.jsonl").write_bytes(b"".join(encode_record(r) + b"\n" for r in records))
    assert view_main([str(out)]) == 0
    return out


def test_the_viewer_s_index_shows_the_person_in_the_list_and_in_the_game(person_run):
    index = RunIndex(person_run)
    index.refresh()
    assert [row[7] for row in index.data()["rows"]] == ["", "P07"]
    steps = index.detail(1)["steps"]  # the transcript does not say who answered: the turn log does
    bob = [s["human"] for s in steps if s["name"] == "Bob"]
    assert bob[:2] == [{"seconds": 12.4, "timed_out": False}, {"seconds": 60.0, "timed_out": True}]
    assert all(s["human"] is None for s in steps if s["name"] == "Alice")


@pytest.mark.browser
def test_the_viewer_page_shows_the_person_in_the_list_and_in_the_game(person_run, browser):
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((person_run / "view.html").as_uri())
    assert page.locator("#games td.person").all_inner_texts() == ["", "P07"]
    page.select_option("#f-person", "yes")
    assert page.locator("#games tbody a").all_inner_texts() == ["1"]
    page.select_option("#f-person", "no")
    assert page.locator("#games tbody a").all_inner_texts() == ["0"]
    page.goto((person_run / "view.html").as_uri() + "#game=1")
    page.wait_for_selector("#game .turn")
    assert "Bob · person P07 · browser · 1 timeout" in page.inner_text("#game .seats")
    shown = page.locator("#game .turn .human").all_inner_texts()
    assert shown[:2] == ["person: 12.4 s", "person: timed out after 60.0 s"]
    assert errors == []

