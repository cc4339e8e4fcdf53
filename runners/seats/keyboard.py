"""The lines a person types, for the terminal seat (``runners.seats.terminal``).

Input is read from stdin by a daemon thread into a memory stream: a blocking read in the event loop
would stop every other game and timer, and a thread the loop owns (``anyio.to_thread``) would keep
the process from exiting while it waits for a line. The thread uses ``os.read``, not ``sys.stdin``,
so that no lock of Python's buffered reader is held when the process exits.
"""

from __future__ import annotations

import codecs
import math
import os
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream


class Left(Exception):
    """The person's input ended (stdin closed): nobody is at the keyboard any more."""


class Keyboard:
    """The lines typed on a file descriptor (stdin), read by a daemon thread from the first use on."""

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self.echo = not os.isatty(fd)  # from a pipe nothing shows what was "typed": the form repeats it
        self._lines: MemoryObjectReceiveStream[str] | None = None

    def lines(self) -> MemoryObjectReceiveStream[str]:
        if self._lines is None:
            send, self._lines = anyio.create_memory_object_stream[str](math.inf)
            token = anyio.lowlevel.current_token()
            threading.Thread(target=self._read, args=(send, token), daemon=True, name="terminal-seat-input").start()
        return self._lines

    def _read(self, send: MemoryObjectSendStream[str], token: Any) -> None:
        def deliver(call: Callable[..., Any], *args: Any) -> bool:
            try:
                anyio.from_thread.run_sync(call, *args, token=token)
                return True
            except Exception:  # the run is over, or nobody reads any more
                return False

        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = ""
        while True:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                chunk = b""
            if not chunk:  # end of input: the person left
                if pending:
                    deliver(send.send_nowait, pending)
                deliver(send.close)
                return
            *complete, pending = (pending + decoder.decode(chunk)).split("\n")
            for line in complete:
                if not deliver(send.send_nowait, line.rstrip("\r")):
                    return
