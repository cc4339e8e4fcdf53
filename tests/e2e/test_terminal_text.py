"""What reaches the terminal from outside the engine: a provider's error text in the line that stops a
run, shown with its controls escaped; the response cache saying at the start when it will not save."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from runners.concurrent import main as run_main

# A CSI that clears the screen (C1 form and ESC form), a right-to-left override, rich markup.
HOSTILE_ERROR = "no model \x9b2J\x1b[2J\u202eelbirret\u202c [/] [bold red]here[/bold red] \x85"


class _Refuser(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the standard library's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": {"message": HOSTILE_ERROR, "type": "invalid_request_error"}}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args) -> None:  # noqa: A002
        pass


@pytest.fixture
def refusing_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuser)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_stop_line_shows_a_provider_s_error_with_its_controls_escaped(refusing_server, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    code = run_main(["--games", "40", "--model", "openai:m", "--openai-url", refusing_server, "--concurrency", "2",
                     "--out", str(tmp_path / "run"), "--no-dashboard"])
    out = capfd.readouterr().out
    assert code == 3
    [stop] = [line for line in out.splitlines() if line.startswith("Stopped early")]
    assert "\\x9b2J\\x1b[2J\\u202eelbirret\\u202c [/] [bold red]here[/bold red] \\x85" in stop
    assert "openai:m: HTTP 404" in stop  # a model's name as written, not read as an emoji code (":m:")
    assert not any(c in out for c in "\x9b\x1b\u202e\u202c\x85")


def _run_with_cache(url: str, tmp_path, *flags: str) -> list[str]:
    out = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
    return ["--games", "2", "--no-dashboard", "--cache", "on", "--cache-dir", str(tmp_path / "cache"),
            "--openai-url", url + "/v1", "--anthropic-url", url, "--out", str(out), *flags]


def test_a_damaged_cache_file_is_said_at_the_start_and_the_run_goes_on(tmp_path, monkeypatch, capfd):
    from tests.e2e.test_model_runs import server_process

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "responses.sqlite").write_bytes(b"not a database, a damaged file " * 200)
    with server_process("--latency", "0") as url:
        assert run_main(_run_with_cache(url, tmp_path, "--model", "openai:share_everything")) == 0
    out = capfd.readouterr().out.splitlines()
    [note] = [line for line in out if line.startswith("The response cache")]
    assert "responses.sqlite" in note and "not a database" in note and "paid in full" in note
    assert out.index(note) < min(i for i, line in enumerate(out) if "games in" in line)  # before the run's end


def test_a_seat_the_cache_does_not_take_is_said_at_the_start(tmp_path, monkeypatch, capfd):
    from tests.e2e.test_model_runs import server_process

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    with server_process("--latency", "0") as url:
        assert run_main(_run_with_cache(url, tmp_path, "--alice", "openai:share_everything", "--bob", "anthropic:one_piece")) == 0
        out = capfd.readouterr().out.splitlines()
        assert [line for line in out if line.startswith("The response cache")] == [
            "The response cache takes no call of anthropic:one_piece: sampled calls (temperature above 0 with no "
            "--model-seed, or Anthropic's API) are made and paid in full (--cache-sampled caches them)."]
        assert run_main(_run_with_cache(url, tmp_path, "--model", "openai:share_everything", "--temperature", "0.7")) == 0
        assert "takes no call of openai:share_everything" in capfd.readouterr().out
        assert run_main(_run_with_cache(url, tmp_path, "--model", "openai:share_everything")) == 0  # a healthy cache: nothing said
        assert "The response cache" not in capfd.readouterr().out
