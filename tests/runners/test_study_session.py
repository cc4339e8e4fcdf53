"""A study's sessions without a browser, pages played by code on the host's own loop: each participant's
order of blocks, counterbalanced and recorded in participants.csv; each game's transcript; a session's time limit; the model
partner down (at start-up: a one-line error; during the study: the games lost are not counted and
the participant is told and moved on); the join limit's address behind a proxy."""

from __future__ import annotations

import csv
import io

import aiohttp
import anyio
import pytest
from multidict import CIMultiDict

from engine.backends.settings import ModelOptions
from engine.policies.factory import PolicyFactory
from engine.records.transcripts import iter_transcripts
from engine.study.design import block_orders
from engine.study.ledger import Ended
from engine.study.spec import study_from_dict
from runners.study.admin import participants_csv
from runners.study.cli import StartError, check_models, main as study_main
from runners.study.guard import client_address
from engine.study.host import EXTRA_TRIES, FAULT_NOTE, StudyHost
from runners.study.front import StudyFront
from runners.seats.browser.server import serving
from runners.study.server import make_app
from runners.transcript import main as transcript_main
from tests.engine.backends.helpers import fake_server, settings_for
from engine.policies.seat import SeatAnswer
from tests.runners.test_study_host import _join, _page, _with_host

BLOCK = {"game": "tsp", "rounds": 1, "max_turns": 1, "conditions": [{"name": "scripted", "partner": "full_share", "games": 4}]}
STUDY = {"name": "session", "allow_scripted": True, "time": {"turn": 60, "gone_after": 60}, "blocks": [BLOCK, BLOCK, BLOCK]}


def test_each_participant_plays_the_blocks_in_a_counterbalanced_order_recorded_in_participants_csv(tmp_path):
    async def body(host):
        fronts = [_join(host) for _ in range(3)]
        async with anyio.create_task_group() as group:
            for front in fronts:
                group.start_soon(_page, front)

    host = anyio.run(_with_host, study_from_dict({**STUDY, "block_order": "balanced"}), tmp_path, body)
    people = list(host.ledger.people.values())
    orders = [p.joined.order for p in people]
    assert len(set(orders)) == 3 and set(orders) <= set(block_orders(3))  # none given twice while others are not given
    for person, order in zip(people, orders):
        assert person.done is not None and tuple(g.started.block for g in person.games) == order
    rows = list(csv.DictReader(io.StringIO(participants_csv(host))))
    assert [tuple(int(b) for b in r["block_order"].split()) for r in rows] == orders
    for block in host.blocks:  # each game's full transcript, as an ordinary run writes it
        ids = {r.game_id for r in block.run.iter_records()}
        assert len(ids) == 3 and {gid for gid, _ in iter_transcripts(block.run.path)} == ids
    game_id = min(ids)
    assert transcript_main([str(host.blocks[-1].run.path), str(game_id), "--out", str(tmp_path / "t.md")]) == 0
    assert "hello" in (tmp_path / "t.md").read_text()


def test_without_block_order_everyone_plays_the_file_s_order(tmp_path):
    async def body(host):
        await _page(_join(host))

    host = anyio.run(_with_host, study_from_dict(STUDY), tmp_path, body)
    [person] = host.ledger.people.values()
    assert person.joined.order == () and [g.started.block for g in person.games] == [0, 1, 2]
    assert list(csv.DictReader(io.StringIO(participants_csv(host))))[0]["block_order"] == "0 1 2"


def test_a_session_past_its_time_limit_ends_its_game_unfinished_and_says_so(tmp_path):
    study = study_from_dict({**STUDY, "time": {"turn": 60, "gone_after": 60, "session_limit": 0.5}, "blocks": [BLOCK]})

    async def body(host):
        front = _join(host)
        host.go(front)  # their game starts, and they never answer
        while not front.final:
            await anyio.sleep(0.02)

    host = anyio.run(_with_host, study, tmp_path, body)
    [person] = host.ledger.people.values()
    assert person.left is not None and person.left.reason == "time"
    [game] = person.games
    assert isinstance(game.ended, Ended) and game.ended.error == "human_absent" and game.ended.absent == person.id
    [record] = host.blocks[0].records({game.started.game_id}).values()
    assert "time limit" in record.error.message
    screen = host.fronts[person.id].screen
    assert screen["kind"] == "done" and screen["code"] == person.joined.code and "time for your session is up" in screen["text"]
    row = list(csv.DictReader(io.StringIO(participants_csv(host))))[0]
    assert (row["status"], row["games_unfinished"], row["walked_away"]) == ("time", "1", "1")


MODEL_BLOCK = {"game": "tsp", "rounds": 1, "max_turns": 2, "conditions": [{"name": "model", "games": 6}]}
MODEL_STUDY = {"name": "down", "model": "openai:fake", "time": {"turn": 60, "gone_after": 60}, "blocks": [MODEL_BLOCK]}


def _factory(server) -> PolicyFactory:
    factory = PolicyFactory()
    factory.configure(settings_for(server, options=ModelOptions(timeout=5.0, max_attempts=1)))
    return factory


def test_the_start_up_call_finds_a_model_partner_down_and_one_that_answers(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-study-0000")
    study = study_from_dict(MODEL_STUDY)

    async def check(faults):
        failed = None
        async with fake_server(latency=0.0, faults=faults) as server:
            factory = _factory(server)
            async with factory:
                try:
                    await check_models(study, factory)
                except StartError as exc:
                    failed = exc
        if failed is not None:
            raise failed

    anyio.run(check, {})
    with pytest.raises(StartError, match="the model partner openai:fake does not answer: .*500"):
        anyio.run(check, {"500": 1.0})


def test_the_command_stops_at_once_with_one_line_when_the_model_does_not_answer(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-study-0000")
    path = tmp_path / "study.toml"
    path.write_text('name = "down"\nmodel = "openai:fake"\n[[blocks]]\ngame = "tsp"\n[[blocks.conditions]]\nname = "model"\n')
    with pytest.raises(SystemExit) as stopped:  # nothing listens on port 9
        study_main([str(path), "--out", str(tmp_path / "out"), "--port", "0", "--openai-url", "http://127.0.0.1:9/v1", "--max-attempts", "1"])
    assert stopped.value.code == 2
    [line] = capsys.readouterr().err.strip().splitlines()[-1:]
    assert "the model partner openai:fake does not answer" in line


def test_games_lost_to_the_model_going_down_do_not_count_and_the_participant_is_told_and_moved_on(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-study-0000")
    seen: list[str] = []

    async def play():
        async with fake_server(latency=0.0, faults={"500": 1.0}) as server:
            factory = _factory(server)
            async with factory:
                async def body(host):
                    front = _join(host)
                    front.host = host
                    while not front.final:
                        if front.pending is not None:
                            front.shown(None, None)
                            front.answer(SeatAnswer(message="hello"))
                        elif front.screen is not None and front.screen.get("step") == "start":
                            seen.append(front.screen["text"])
                            host.go(front)
                        await anyio.sleep(0.01)

                host = StudyHost(study_from_dict(MODEL_STUDY), tmp_path, factory, StudyFront)
                async with anyio.create_task_group() as group:
                    host.group = group
                    host.open()
                    with anyio.fail_after(60):  # a safety limit: fails a hang only
                        await body(host)
                    group.cancel_scope.cancel()
                host.close()
                return host

    host = anyio.run(play)
    [person] = host.ledger.people.values()
    assert len(person.games) == 1 + EXTRA_TRIES  # tried again, then moved on: the block's tries are spent
    assert all(isinstance(g.ended, Ended) and g.ended.error == "infra_error" and not g.counts() for g in person.games)
    assert sum(FAULT_NOTE in text for text in seen) == EXTRA_TRIES  # told after each game lost but the last
    assert person.done is not None
    row = list(csv.DictReader(io.StringIO(participants_csv(host))))[0]
    assert (row["games_played"], row["faults"], row["games_unfinished"]) == ("0", str(1 + EXTRA_TRIES), str(1 + EXTRA_TRIES))


def test_the_join_limit_reads_x_forwarded_for_only_when_the_study_trusts_a_proxy(tmp_path):
    headers = CIMultiDict([("X-Forwarded-For", "6.6.6.6, 10.0.0.1"), ("X-Forwarded-For", "203.0.113.5")])
    assert client_address(headers, "127.0.0.1", True) == "203.0.113.5"  # the proxy's own entry, the last
    assert client_address(headers, "127.0.0.1", False) == "127.0.0.1"
    assert client_address(CIMultiDict(), "127.0.0.1", True) == "127.0.0.1"

    async def joins(trust: bool) -> list[int]:
        study = study_from_dict({**STUDY, "name": f"proxy{trust}", "trust_proxy": trust, "join": {"per_minute": 1}})
        host = StudyHost(study, tmp_path / str(trust), PolicyFactory(), StudyFront)
        hosts: set[str] = set()
        async with anyio.create_task_group() as group:
            host.group = group
            host.open()
            async with serving(make_app(host, "admin", hosts), "127.0.0.1", 0) as port:
                hosts.add(f"127.0.0.1:{port}")
                statuses = []
                async with aiohttp.ClientSession() as session:
                    for address in ("198.51.100.1", "198.51.100.2"):
                        async with session.post(
                            f"http://127.0.0.1:{port}/join", json={}, headers={"X-Forwarded-For": address},
                        ) as response:
                            statuses.append(response.status)
            group.cancel_scope.cancel()
        host.close()
        return statuses

    assert anyio.run(joins, True) == [200, 200]  # two addresses behind the proxy: one join each
    assert anyio.run(joins, False) == [200, 429]  # the header is not read: one address, one join a minute
