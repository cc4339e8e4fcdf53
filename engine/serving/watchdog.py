"""The watchdog between the engine and a model server: ``python -I watchdog.py PARENT STOP COMMAND...``.

A server may spawn processes of its own (``vllm serve`` its engine core and workers; ``llama-server``
in router mode an instance for each model it loads, at any time it runs), which Linux's
die-with-parent setting (``PR_SET_PDEATHSIG``) does not reach: it is one process's.
So the engine starts this small program instead, asking it to be sent SIGTERM when the engine dies
(SIGKILL included); it starts the server in a process group of its own and, when it is told to stop
or its parent is gone, sends the whole group SIGTERM, then SIGKILL after ``STOP`` seconds. When the
server exits by itself, what it left in its group is killed too, and the watchdog exits as the
server did (its status, or the same signal).

Run as a file with the standard library alone (``-I``): it loads nothing of the engine.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
WATCHED = {*STOPPING, signal.SIGCHLD}


def _server_child() -> None:
    """In the server, before exec: the signals back as they were, and SIGKILL if the watchdog dies."""
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _kill_group(group: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, sig)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop(server: subprocess.Popen, stop_after: float) -> None:
    """SIGTERM to the server's group, SIGKILL to what is left of it after ``stop_after`` seconds."""
    group = server.pid
    _kill_group(group, signal.SIGTERM)
    deadline = time.monotonic() + stop_after
    while time.monotonic() < deadline:
        server.poll()  # reaps the leader, so that its group empties
        if server.returncode is not None and not _group_alive(group):
            return
        time.sleep(0.05)
    _kill_group(group, signal.SIGKILL)
    server.wait()


def main(argv: list[str]) -> int:
    parent, stop_after, command = int(argv[0]), float(argv[1]), argv[2:]
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)  # taken one at a time below, never lost
    if os.getppid() != parent:  # the engine died before this could start the server
        return 1
    try:
        server = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_server_child)
    except OSError as exc:
        print(f"cannot run {command[0]}: {exc.strerror or exc}", file=sys.stderr, flush=True)
        return 127
    while True:
        if os.getppid() != parent:  # the death signal came before it was blocked: the engine is gone
            _stop(server, stop_after)
            return 1
        info = signal.sigtimedwait(WATCHED, 1.0)
        if info is not None and info.si_signo in STOPPING:
            _stop(server, stop_after)
            return 0
        if server.poll() is not None:  # the server exited by itself: nothing of it may stay behind
            _kill_group(server.pid, signal.SIGKILL)
            status = server.returncode
            if status < 0:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, WATCHED)
                signal.signal(-status, signal.SIG_DFL)
                os.kill(os.getpid(), -status)
            return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
