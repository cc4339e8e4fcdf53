"""The run's log writes the lines structlog wrote (bound values, the call's, event, level, ISO UTC
timestamp), level by level."""

import io
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from engine.session import runlog
from engine.session.runlog import RunLog

MOMENT = datetime(2026, 11, 25, 18, 25, 41, 173423, tzinfo=timezone.utc)


class _Frozen(datetime):
    @classmethod
    def now(cls, tz=None):
        return MOMENT.astimezone(tz)


def _structlog(stream, level):
    structlog = pytest.importorskip("structlog")
    return structlog.wrap_logger(
        structlog.WriteLogger(stream),
        wrapper_class=structlog.make_filtering_bound_logger(level),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.JSONRenderer(),
        ],
    )


def _lines(log):
    log.info("run_started", run_dir="/tmp/r", config={"game": "é", "seeds": [1, 2], "none": None}, to_play=3)
    game = log.bind(game_id=7)
    game.debug("turn", agent="alice", turn=1, message_chars=12, format_error=None)
    game.info("game_finished", game_id=8, outcome="success", turns=2)  # a call's value over the bound one
    log.warning("no_price", models=["openai:x"], path=Path("/p"))
    log.error("game_error", game_id=3, kind="infra_error", message="HTTP 500: \"quoted\"\n")
    log.critical("stopped")


@pytest.mark.parametrize("level", ["debug", "info", "warning", "error"])
def test_the_lines_are_structlogs(level, monkeypatch):
    import structlog.processors as processors

    monkeypatch.setattr(runlog, "datetime", _Frozen)
    monkeypatch.setattr(processors.datetime, "datetime", _Frozen)
    ours, theirs = io.StringIO(), io.StringIO()
    _lines(RunLog(ours, level))
    _lines(_structlog(theirs, level))
    assert ours.getvalue() == theirs.getvalue()
    lines = [json.loads(line) for line in ours.getvalue().splitlines()]
    assert lines[-1] == {"event": "stopped", "level": "critical", "timestamp": "2026-11-25T18:25:41.173423Z"}
    assert ("turn" in [line["event"] for line in lines]) == (level == "debug")


class _Counting(io.StringIO):
    def __init__(self):
        super().__init__()
        self.flushes = 0
        self.flushed_lines = 0

    def flush(self):
        self.flushes += 1
        self.flushed_lines = self.getvalue().count("\n")


def test_info_lines_of_a_fast_run_are_flushed_once_a_second_and_warnings_at_once(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(runlog.time, "monotonic", lambda: clock[0])
    stream = _Counting()
    log = RunLog(stream, "info")
    game = log.bind(game_id=1)  # a bound logger shares the clock of the last flush
    log.info("run_started")
    for _ in range(500):
        game.info("game_finished", outcome="success")
        clock[0] += 0.001
    assert stream.flushes == 1 and stream.flushed_lines == 1  # the first line; the games' lines wait
    clock[0] += 0.6
    game.info("game_finished", outcome="success")
    assert stream.flushes == 2 and stream.flushed_lines == 502  # a second since the last flush
    game.info("game_finished", outcome="success")
    game.error("game_error", kind="actor_error")
    assert stream.flushes == 3 and stream.flushed_lines == 504  # an error goes out at once, with what came before


def test_a_run_of_slow_games_flushes_every_line(monkeypatch):
    monkeypatch.setattr(runlog.time, "monotonic", lambda: 100.0)
    stream = _Counting()
    game = RunLog(stream, "info", flush_every=0).bind(game_id=1)
    for count in range(1, 4):
        game.info("game_finished", outcome="success")
        assert stream.flushes == count and stream.flushed_lines == count
