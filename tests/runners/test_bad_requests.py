"""The seat and study servers given bytes that are not UTF-8, in a JSON body or in an address: a 400 or a
404 that says why, never a 500 with a traceback on the terminal."""

from __future__ import annotations

import aiohttp
import anyio
import pytest
import yarl

from engine.policies.factory import PolicyFactory
from engine.study.host import StudyHost
from engine.study.spec import study_from_dict
from runners.seats.browser.seats import BrowserSeats
from runners.seats.browser.server import make_app as seats_app, serving
from runners.study.front import StudyFront
from runners.study.server import make_app as study_app

BLOCK = {"game": "tsp", "rounds": 1, "max_turns": 2, "conditions": [{"name": "scripted", "partner": "full_share", "games": 2}]}
STUDY = {"name": "bytes", "allow_scripted": True, "time": {"turn": 60, "gone_after": 60}, "blocks": [BLOCK]}
NOT_UTF8 = {  # a field each endpoint reads, holding bytes that are not UTF-8
    "participant": b'{"participant": "P\xff01"}',
    "check": b'{"kind": "\xc3", "values": {}}',
    "answer": b'{"game": 1, "turn": 0, "message": "caf\xe9"}',
    "go": b'{"step": "st\xffart"}',
}


async def _post(session: aiohttp.ClientSession, url: str, body: bytes) -> tuple[int, str]:
    async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as response:
        return response.status, await response.text()


def _assert_clear_400(status: int, text: str) -> None:
    assert status == 400, text
    assert "cannot read" in text and "UTF-8" in text


@pytest.mark.parametrize("endpoint", ["participant", "check", "answer"])
def test_the_play_server_answers_a_body_that_is_not_utf8_with_400(endpoint, capfd):
    seats = BrowserSeats(["bob"], 1)
    [front] = seats.fronts.values()

    async def main() -> tuple[int, str]:
        async with serving(seats_app(seats), "127.0.0.1", 0) as port:
            async with aiohttp.ClientSession() as session:
                return await _post(session, f"http://127.0.0.1:{port}/seat/{front.token}/{endpoint}", NOT_UTF8[endpoint])

    _assert_clear_400(*anyio.run(main))
    assert "Traceback" not in capfd.readouterr().err


async def _study_requests(tmp_path, ask):
    host = StudyHost(study_from_dict(STUDY), tmp_path, PolicyFactory(), StudyFront)
    hosts: set[str] = set()
    async with anyio.create_task_group() as group:
        host.group = group
        host.open()
        async with serving(study_app(host, "admin-token", hosts), "127.0.0.1", 0) as port:
            hosts.add(f"127.0.0.1:{port}")
            async with aiohttp.ClientSession() as session:
                async with session.post(f"http://127.0.0.1:{port}/join", json={}) as response:
                    page = (await response.json())["url"]
                got = await ask(session, f"http://127.0.0.1:{port}", page)
        group.cancel_scope.cancel()
    host.close()
    return got


@pytest.mark.parametrize("endpoint", ["participant", "check", "answer", "go"])
def test_the_study_server_answers_a_body_that_is_not_utf8_with_400(endpoint, tmp_path, capfd):
    async def ask(session, base, page):
        return await _post(session, f"{base}{page}/{endpoint}", NOT_UTF8[endpoint])

    _assert_clear_400(*anyio.run(_study_requests, tmp_path, ask))
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("token", ["%C3%A9", "%FF", "admin-tok%C3%A9n", "%E2%80%AE"])
@pytest.mark.parametrize("page", ["/admin/{}", "/admin/{}/status", "/admin/{}/participants.csv"])
def test_an_admin_address_with_non_ascii_characters_is_404(page, token, tmp_path, capfd):
    async def ask(session, base, _page):
        async with session.get(yarl.URL(base + page.format(token), encoded=True)) as response:
            return response.status, await response.text()

    status, text = anyio.run(_study_requests, tmp_path, ask)
    assert (status, text) == (404, "no such page")
    assert "Traceback" not in capfd.readouterr().err


def test_the_admin_token_still_opens_the_admin_pages(tmp_path):
    async def ask(session, base, _page):
        async with session.get(f"{base}/admin/admin-token/status") as response:
            return response.status, await response.json()

    status, data = anyio.run(_study_requests, tmp_path, ask)
    assert status == 200 and isinstance(data, dict)
