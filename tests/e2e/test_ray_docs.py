"""The cluster commands of docs/ray.md run as written, two nodes on this machine: the head, a node
that joins it, a run across both, and the stop. Only the head's address and port are this test's
(a free port on 127.0.0.1); the cluster's files are in a folder of its own and ``ray stop``, which
would end every Ray process of the machine's user, is done here by ending this cluster's processes,
found by that folder, one by one by their ids."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.e2e.test_docs import FENCE, ROOT, command_lines

pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # a Ray head and a worker started as the documentation says

PAGE = ROOT / "docs" / "ray.md"
BIN = Path(sys.executable).parent


def cluster_block() -> list[str]:
    """The command lines of the page's block that starts a head, comments dropped."""
    text = PAGE.read_text()
    block = next(b.group(0) for b in FENCE.finditer(text) if "ray start --head" in b.group("body"))
    return [shlex.join(shlex.split(line, comments=True)) for _, line in command_lines(block)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes_of(folder: Path) -> list[int]:
    """The ids of this cluster's live processes: started with ``RAY_TMPDIR`` set to ``folder``, or
    naming it in their command line (Ray's agents get its session folder there, not the variable)."""
    mark, path = f"RAY_TMPDIR={folder}".encode(), str(folder).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if (entry / "stat").read_text().split(")")[-1].split()[0] == "Z":
                    continue  # already ended, waiting for its parent to read its status
                if mark in (entry / "environ").read_bytes().split(b"\0") or path in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except (OSError, IndexError):
                continue
    return found


def stop(folder: Path) -> None:
    """End this cluster's processes: asked first, then forced; never another cluster's."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in processes_of(folder):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        for _ in range(50):
            if not processes_of(folder):
                return
            time.sleep(0.1)


def test_the_cluster_commands_of_the_docs_run_as_written(tmp_path):
    block = cluster_block()
    assert [line.split()[:2] for line in block] == [
        ["export", "RAY_AUTH_MODE=token"], ["ray", "get-auth-token"], ["ray", "start"], ["ray", "start"],
        ["asymgames", "run"], ["ray", "stop"]], block
    port = str(free_port())
    folder = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "RAY_TMPDIR": str(folder),
           "HOME": str(tmp_path / "home")}  # the token the commands write is this test's
    try:
        for line in block:
            argv = shlex.split(line.replace("HEAD:6379", f"127.0.0.1:{port}").replace("--port 6379", f"--port {port}"))
            if argv[0] == "export":
                name, _, value = argv[1].partition("=")
                env[name] = value
                continue
            if argv[:2] == ["ray", "stop"]:
                stop(folder)
                continue
            done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=240)
            assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        runs = list((work / "runs").iterdir())
        assert len(runs) == 1
        records = [json.loads(line) for line in (runs[0] / "results.jsonl").read_text().splitlines()]
        assert sorted(r["game_id"] for r in records) == list(range(2000))
        assert not processes_of(folder)
    finally:
        stop(folder)
        shutil.rmtree(folder, ignore_errors=True)
