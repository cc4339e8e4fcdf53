"""The run's log (``run.log``): one JSON object a line. A warning or worse is flushed as it is
written; other lines, in a run of scripted games, when a second has passed since the last flush
(``FLUSH_SECONDS``) and when the log is closed. Such a run logs a line a game, thousands a second,
and a flush per line was a write call per game: about a third of what the driver of a Ray run
spends on each game. Killed outright, it loses the last second of debug and info lines at most; its
records are written as each game ends, whatever the log holds. Runs whose games end slowly (against
models or people) flush every line (``flush_every=0``).

A line holds what the logger was bound to, the call's own values, then ``event``, ``level`` and an
ISO ``timestamp`` in UTC: the lines structlog wrote with ``add_log_level``, ``TimeStamper(fmt="iso",
utc=True)`` and ``JSONRenderer`` (``tests/engine/test_runlog.py`` holds the two side by side).
Written here, in a few lines, because importing structlog costs some 70 ms of every run's start-up
(it loads rich's tracebacks) and each of its lines some 25 us; a run logs a line a game.
"""

from __future__ import annotations

import json
import math
import time
from datetime import datetime, timezone
from typing import Any, TextIO

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
FLUSH_SECONDS = 1.0


def _fallback(value: Any) -> Any:
    """What a value JSON cannot encode is written as: its ``__structlog__()`` if it has one, else its repr."""
    try:
        return value.__structlog__()
    except AttributeError:
        return repr(value)


class RunLog:
    """``debug``, ``info``, ``warning``, ``error``, ``critical`` (an event name and values) at or
    above ``level``; ``bind(**values)`` a logger whose lines carry ``values`` first."""

    __slots__ = ("_stream", "_min", "_context", "_flushed", "_every")

    def __init__(
        self, stream: TextIO, level: str | int = "info", context: dict[str, Any] | None = None, *,
        flush_every: float = FLUSH_SECONDS, flushed: list[float] | None = None,
    ) -> None:
        self._stream = stream
        self._min = LEVELS[level.lower()] if isinstance(level, str) else level
        self._context = context or {}
        self._every = flush_every  # 0: every line as it is written (games that end slowly, against models or people)
        self._flushed = flushed if flushed is not None else [-math.inf]  # when the stream was last flushed, shared with bound loggers

    def bind(self, **values: Any) -> RunLog:
        return RunLog(self._stream, self._min, {**self._context, **values}, flush_every=self._every, flushed=self._flushed)

    def _write(self, level: str, event: str, values: dict[str, Any]) -> None:
        line = {**self._context, **values}
        line["event"] = event
        line["level"] = level
        line["timestamp"] = datetime.now(tz=timezone.utc).isoformat().replace("+00:00", "Z")
        self._stream.write(json.dumps(line, default=_fallback) + "\n")
        now = time.monotonic()
        if level not in ("debug", "info") or now - self._flushed[0] >= self._every:
            self._stream.flush()
            self._flushed[0] = now

    def debug(self, event: str, **values: Any) -> None:
        if self._min <= 10:
            self._write("debug", event, values)

    def info(self, event: str, **values: Any) -> None:
        if self._min <= 20:
            self._write("info", event, values)

    def warning(self, event: str, **values: Any) -> None:
        if self._min <= 30:
            self._write("warning", event, values)

    def error(self, event: str, **values: Any) -> None:
        if self._min <= 40:
            self._write("error", event, values)

    def critical(self, event: str, **values: Any) -> None:
        if self._min <= 50:
            self._write("critical", event, values)
