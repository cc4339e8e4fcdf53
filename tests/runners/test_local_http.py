"""The local servers (the viewer's, the seats') as a hostile page or client meets them: another Host
(DNS rebinding), a cross-origin form or text/plain POST, a raw byte in the path, a body nested deep,
many readers at once. Plain HTTP from this test: no browser needed."""

from __future__ import annotations

import http.client
import json
import select
import socket
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from runners.concurrent import main as run_main
from runners.local_http import local_host, local_origin, refusal
from runners.view.index import RunIndex
from runners.view.serve import make_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("host, ok", [
    ("127.0.0.1:8000", True), ("localhost:8000", True), ("[::1]:8000", True), ("LOCALHOST:8000", True),
    ("127.0.0.1", False), ("127.0.0.1:8001", False), ("evil.example:8000", False), ("evil.example", False),
    ("127.0.0.1.evil.example:8000", False), ("", False), (None, False),
])
def test_only_this_machine_at_this_port_is_a_local_host(host, ok):
    assert local_host(host, 8000) is ok


def test_a_post_needs_a_local_origin_if_any_and_json():
    local = {"Host": "127.0.0.1:9", "Content-Type": "application/json"}
    assert refusal("POST", local, 9) is None
    assert refusal("POST", {**local, "Origin": "http://127.0.0.1:9"}, 9) is None
    assert "Origin" in refusal("POST", {**local, "Origin": "http://evil.example"}, 9)
    assert "JSON" in refusal("POST", {**local, "Content-Type": "text/plain"}, 9)
    assert "JSON" in refusal("POST", {"Host": "127.0.0.1:9"}, 9)
    assert refusal("GET", {"Host": "127.0.0.1:9", "Origin": "http://evil.example"}, 9) is None  # a read: Host decides
    assert not local_origin("null", 9) and not local_origin("https://127.0.0.1:9", 9)


def _get(port: int, path: bytes, host: bytes | None = None) -> tuple[int, bytes]:
    """A raw GET (the path's bytes as given), and the status and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: " + (host or f"127.0.0.1:{port}".encode()) + b"\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.fixture(scope="module")
def served_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("served") / "run"
    assert run_main(["--games", "30", "--out", str(run), "--no-dashboard", "--limit", "20"]) == 0
    return run


@pytest.fixture(scope="module")
def viewer(served_run):
    server = make_server(RunIndex(served_run), port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_the_viewer_answers_only_its_own_host(viewer):
    assert _get(viewer, b"/run.json")[0] == 200
    assert _get(viewer, b"/run.json", host=f"evil.example:{viewer}".encode())[0] == 403
    assert _get(viewer, b"/", host=b"evil.example")[0] == 403


@pytest.mark.parametrize("path", [b"/game/\xb2.json", b"/game/\xc2\xb2.json", b"/game/%C2%B2.json", b"/game/.json", b"/game/99999.json"])
def test_a_path_that_names_no_game_is_a_404_not_a_traceback(viewer, path):
    assert _get(viewer, path)[0] == 404


def test_many_readers_at_once_all_get_the_run_and_a_stopped_run_says_so(viewer):
    with ThreadPoolExecutor(64) as pool:
        answers = list(pool.map(lambda _: _get(viewer, b"/run.json"), range(300)))
    assert {status for status, _ in answers} == {200} and len({body for _, body in answers}) == 1
    run = json.loads(answers[0][1])
    assert run["recorded"] == 20 and run["state"] == "stopped before its end (resume to finish)"


def test_a_burst_of_readers_is_queued_until_the_viewer_accepts_them(served_run):
    """The listen backlog: connections the kernel completes for a server that has not accepted yet
    (the standard library's default queues 5, and a burst past it waits on retransmitted SYNs)."""
    server = make_server(RunIndex(served_run), port=0)
    clients = [socket.socket() for _ in range(200)]
    try:
        for client in clients:
            client.setblocking(False)
            client.connect_ex(server.server_address)
        waiting, connected = list(clients), 0
        for _ in range(20):  # a generous limit: on this machine the handshakes take well under a second
            _, ready, _ = select.select([], waiting, [], 0.5)
            connected += sum(client.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 for client in ready)
            waiting = [client for client in waiting if client not in ready]
            if connected >= 128 or not ready:
                break
        assert connected >= 128
    finally:
        for client in clients:
            client.close()
        server.server_close()


def test_readers_that_hang_up_before_the_answer_print_nothing(served_run, capfd):
    server = make_server(RunIndex(served_run), port=0)
    port = server.server_address[1]
    before = set(threading.enumerate())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        for path in (b"/run.json", b"/", b"/game/1.json") * 10:
            with socket.create_connection(("127.0.0.1", port), timeout=60) as client:
                client.sendall(b"GET " + path + f" HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        assert _get(port, b"/run.json")[0] == 200
        for worker in set(threading.enumerate()) - before - {thread}:
            worker.join(60)  # the request threads, done with the reset connections
    finally:
        server.shutdown()
        server.server_close()
        thread.join(60)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err


@pytest.fixture
def seat_server(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "runners.play", "--port", "0", "--out", str(tmp_path / "run"), "--seat", "bob",
         "--human-timeout", "600"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        for line in process.stdout:
            if "/seat/" in line:
                url = line.strip().rsplit(" ", 1)[-1]
                break
        else:
            raise AssertionError(process.stderr.read())
        yield url
    finally:
        process.kill()
        process.communicate()


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    address, path = url.removeprefix("http://").split("/", 1)
    connection = http.client.HTTPConnection(address, timeout=60)
    connection.request("POST", "/" + path, body=body, headers=headers)
    answer = connection.getresponse()
    return answer.status, answer.read()


def test_the_seat_server_refuses_other_origins_other_hosts_and_deep_bodies(seat_server):
    answer_url = seat_server + "/answer"
    port = seat_server.split(":")[2].split("/")[0]
    turn = json.dumps({"game": 0, "turn": 0, "message": "hi", "actions": []}).encode()
    status, _ = _post(answer_url, turn, {"Content-Type": "text/plain", "Origin": "http://evil.example"})
    assert status == 403  # the form a cross-site page can send without asking
    status, _ = _post(answer_url, turn, {"Content-Type": "application/json", "Host": f"evil.example:{port}"})
    assert status == 403
    deep = b"[" * 100_000 + b"]" * 100_000
    status, body = _post(seat_server + "/check", deep, {"Content-Type": "application/json"})
    assert status == 400 and b"cannot read" in body
    status, body = _post(answer_url, deep, {"Content-Type": "application/json"})
    assert status == 400
