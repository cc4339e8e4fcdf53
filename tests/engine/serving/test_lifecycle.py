"""The servers the engine starts, with stand-in executables that speak the wire like the real ones
(the project's local model server behind a llama-server or ``vllm serve`` command line): started
for the run and stopped after it, their logs in the run directory, dead with a run killed with
SIGKILL, and every way they can fail to start a clear line and status 2 or 3 before any game."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

STAND_IN = """#!{python}
# A stand-in for llama-server (-m FILE --port P ...) or vllm (serve MODEL --port P ...): the local model
# server on that port; with FAIL set, it says why and exits at once instead; with DIE_AFTER=N, it
# dies (exit 1, as a crashed server) after answering N requests. Like vLLM, whose engine core and
# workers are processes of their own, it spawns a worker that does nothing and never exits by itself
# (its command line holds the server's, so that the tests find it).
import os, subprocess, sys, threading
sys.path.insert(0, {root!r})
args = sys.argv[1:]
with open(os.environ["STAND_IN_ARGS"], "a") as f:
    f.write(" ".join(args) + "\\n")
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10 ** 6)", "stand-in worker", *args])
if os.environ.get("STAND_IN_FAIL"):
    print("error: " + os.environ["STAND_IN_FAIL"], flush=True)
    sys.exit(1)
port = args[args.index("--port") + 1]
if os.environ.get("STAND_IN_DIE_AFTER"):
    import json, time, urllib.request
    def die_later():
        while True:
            time.sleep(0.05)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{{port}}/fake/stats", timeout=5) as r:
                    served = json.load(r).get("served", 0)
            except OSError:
                continue
            if served >= int(os.environ["STAND_IN_DIE_AFTER"]):
                print("GGML_ASSERT failed: a crash", flush=True)
                os._exit(1)
    threading.Thread(target=die_later, daemon=True).start()
from runners.fake_llm.cli import main
sys.exit(main(["--port", port, "--latency", "0.01"]))
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    path = tmp_path / "bin" / "server"
    path.parent.mkdir()
    path.write_text(STAND_IN.format(python=sys.executable, root=str(ROOT)))
    path.chmod(0o755)
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("STAND_IN_ARGS", str(calls))
    monkeypatch.setenv("LLAMA_SERVER", str(path))
    monkeypatch.setenv("VLLM_EXECUTABLE", str(path))
    monkeypatch.delenv("LLAMACPP_BASE_URL", raising=False)
    monkeypatch.delenv("VLLM_BASE_URL", raising=False)
    return calls


@pytest.fixture
def gguf(tmp_path) -> Path:
    path = tmp_path / "share_everything.gguf"  # the local server plays the strategy the model is named after
    path.write_bytes(b"GGUF" + bytes(60))
    return path


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runners.concurrent", "--no-dashboard", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=os.environ.copy())


def server_pids(marker: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    return [int(p) for p in found]


def test_a_gguf_model_gets_a_server_for_the_run_that_stops_with_it(stand_in, gguf, tmp_path):
    out = tmp_path / "run"
    done = run("--games", "3", "--model", f"llamacpp:{gguf}", "--serve-slots", "3", "--serve-context", "1000", "--out", str(out))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["success"] * 3
    assert records[0]["usage"]["alice"]["calls"] > 0 and records[0]["usage"]["alice"]["cost_usd"] == 0.0
    [command] = stand_in.read_text().splitlines()
    assert f"-m {gguf} --host 127.0.0.1 --port " in command and command.endswith("--parallel 3 -c 3000 --metrics")
    assert (out / "server-1.log").exists()
    assert server_pids(str(gguf)) == []  # stopped with the run


def test_a_vllm_model_with_no_server_named_gets_vllm_serve(stand_in, tmp_path):
    out = tmp_path / "run"
    done = run("--games", "2", "--model", "vllm:share_everything", "--serve-slots", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    [command] = stand_in.read_text().splitlines()
    assert command.startswith("serve share_everything --host 127.0.0.1 --port ") and command.endswith("--max-num-seqs 2")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["SIGKILL", "SIGTERM", "SIGINT"])
def test_the_server_dies_with_a_run_killed_or_interrupted(sig, stand_in, gguf, tmp_path):
    out = tmp_path / "run"
    process = subprocess.Popen([sys.executable, "-m", "runners.concurrent", "--no-dashboard", "--games", "100000",
                                "--model", f"llamacpp:{gguf}", "--out", str(out)], cwd=ROOT, env=os.environ.copy(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):  # until games are being recorded: the server is up and answering
            if (out / "results.jsonl").exists() and (out / "results.jsonl").stat().st_size > 0:
                break
            time.sleep(0.1)
        assert server_pids(f"stand-in worker -m {gguf}"), "the server's worker was not running"
        assert len(server_pids(str(gguf))) >= 3, "the watchdog, the server and its worker were not all running"
        process.send_signal(sig)
        status = process.wait(timeout=120)
        assert status == (-9 if sig == signal.SIGKILL else 130)
        for _ in range(600):  # every process of the server goes, its worker included, however the run ended
            if not server_pids(str(gguf)):
                break
            time.sleep(0.1)
        assert server_pids(str(gguf)) == []
    finally:
        process.kill()


@pytest.mark.parametrize("case, status, says", [
    ("missing", 2, "no model file"),
    ("not_gguf", 2, "is not a GGUF file"),
    ("no_binary", 2, "LLAMA_SERVER is"),
    ("fails", 3, "exited with status 1 before it served: error: out of memory"),
])
def test_a_server_that_cannot_start_is_one_line_before_any_game(case, status, says, stand_in, gguf, tmp_path, monkeypatch):
    model = gguf
    if case == "missing":
        model = tmp_path / "nothing.gguf"
    elif case == "not_gguf":
        model.write_bytes(b"PK\x03\x04 a zip, not a model")
    elif case == "no_binary":
        monkeypatch.setenv("LLAMA_SERVER", str(tmp_path / "no-such-server"))
    elif case == "fails":
        monkeypatch.setenv("STAND_IN_FAIL", "out of memory")
    out = tmp_path / "run"
    done = run("--games", "2", "--model", f"llamacpp:{model}", "--out", str(out))
    assert done.returncode == status, done.stdout + done.stderr
    said = (done.stderr + done.stdout).strip().splitlines()
    assert any(says in line for line in said), said
    assert "Traceback" not in done.stderr
    if status == 3:
        assert not (out / "results.jsonl").exists() or (out / "results.jsonl").read_text() == ""


def test_a_server_that_dies_mid_run_is_started_again_once_then_the_run_stops_with_the_resume_command(
        stand_in, gguf, tmp_path, monkeypatch):
    monkeypatch.setenv("STAND_IN_DIE_AFTER", "40")
    out = tmp_path / "run"
    done = run("--games", "200", "--model", f"llamacpp:{gguf}", "--max-attempts", "2", "--out", str(out))
    said = done.stdout + done.stderr
    assert done.returncode == 3, said
    assert len(stand_in.read_text().splitlines()) == 2  # started, and started again once
    assert f"--resume {out}" in said and "Traceback" not in said
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    kinds = {r["error"]["kind"] for r in records if r["outcome"] == "error"}
    assert kinds == {"infra_error"} and any(r["outcome"] == "success" for r in records)
    assert "GGML_ASSERT" in (out / "server-1.log").read_text()  # the crash, in the run's server log
    assert server_pids(str(gguf)) == []


def test_a_llamacpp_server_gets_the_schema_with_every_string_and_array_bounded():
    from engine.backends.wire import bounded

    schema = {"type": "object", "properties": {
        "message": {"type": "string"}, "note": {"type": "string", "maxLength": 5},
        "actions": {"type": "array", "items": {"type": "object", "properties": {"by": {"type": "string"}}}},
    }}
    got = bounded(schema, 600, 24)
    assert got["properties"]["message"]["maxLength"] == 600 and got["properties"]["note"]["maxLength"] == 5
    assert got["properties"]["actions"]["maxItems"] == 24
    assert got["properties"]["actions"]["items"]["properties"]["by"]["maxLength"] == 600
    assert "maxLength" not in schema["properties"]["message"]  # the game's schema is left as it is
