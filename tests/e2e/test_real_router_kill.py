"""A rollout whose trained model is served by the real llama.cpp server in router mode
(``engine.serving.swap.LlamaCppRouter``), killed with SIGKILL while it plays: the router, and the
instance it started for the version it loaded (a ``llama-server`` of its own), go with it. The
watchdog the engine starts servers behind (``engine.serving.process``) stops the router's process
group when the engine dies, and the router starts its instances in that group. The router, told to
stop, stops its instances itself; an instance that cannot hear it (stopped here, as a hung one)
goes too: the group is killed after the watchdog's grace time.

Marked ``real_model`` and ``slow``: it needs the server and the model ``asymgames setup-llamacpp``
fetches; skipped without them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.serving import ServeError, find_executable
from engine.serving.install import bundled_model
from tests.processes import descendants, running

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("hung", [False, True], ids=["answering", "hung-instance"])
def test_a_rollout_killed_with_sigkill_leaves_no_llama_server_of_its_router(hung, tmp_path):
    try:
        server = find_executable("llamacpp")
    except ServeError as exc:
        pytest.skip(str(exc))
    model = bundled_model("smollm2")
    if model is None or not model.is_file():
        pytest.skip(f"no model at {model}: asymgames setup-llamacpp --model-only")
    out, log = tmp_path / "run", tmp_path / "rollout.log"
    with log.open("w") as said:
        process = subprocess.Popen([sys.executable, "-m", "tests.engine.serving.router_run", str(server), str(model),
                                    str(tmp_path / "router"), str(out), "8"],
                                   cwd=ROOT, env=os.environ.copy(), stdout=said, stderr=subprocess.STDOUT)
    processes: dict[int, str] = {}
    try:
        for _ in range(3000):  # until a game has started on the version loaded: the router has its instance
            if (out / "weights.jsonl").exists() and (out / "weights.jsonl").stat().st_size > 0:
                break
            assert process.poll() is None, log.read_text()[-2000:]
            time.sleep(0.1)
        processes = descendants(process.pid)
        servers = {pid: c for pid, c in processes.items() if c.startswith(str(server) + " ")}
        [router] = [pid for pid, c in servers.items() if "--models-preset" in c]
        [instance] = [pid for pid, c in servers.items() if "--alias policy@0" in c]
        group = os.getpgid(router)
        assert group == router and os.getpgid(instance) == group  # the instance, in the router's group
        if hung:
            os.kill(instance, signal.SIGSTOP)
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
        for _ in range(600):  # the watchdog stops the group: SIGTERM, SIGKILL to what is left 10 s later
            if not any(running(pid, c) for pid, c in processes.items()) and not _group_alive(group):
                break
            time.sleep(0.1)
        assert {pid: c for pid, c in processes.items() if running(pid, c)} == {}
        assert not _group_alive(group)
    finally:
        process.kill()
        for pid, c in processes.items():  # none should be left; any that is is ended here, by its id
            if running(pid, c):
                os.kill(pid, signal.SIGKILL)
