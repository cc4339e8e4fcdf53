"""Reading a results file for a report, whatever state the run left it in."""

from __future__ import annotations

from pathlib import Path

import msgspec

from engine.records.record import GameRecord
from engine.records.rundir import decode_any_record

# What a line that is not a record raises: bad JSON or a wrong structure (msgspec's errors and a
# format-1 line that cannot be upgraded are ValueErrors), or a format-1 line missing its fields.
_DAMAGED = (ValueError, KeyError, TypeError, AttributeError)


class Results(msgspec.Struct):
    """The games of a results file, one record per game id (the last one written), by game id."""

    records: list[GameRecord]
    lines: int  # complete, non-empty lines read
    truncated: bool  # the last line had no newline (a run still writing, or killed) and was skipped
    duplicates: int  # lines replaced by a later line of the same game id
    damaged: list[int]  # numbers of complete lines that could not be decoded (skipped)


def read_results(path: Path | str) -> Results:
    """Read a results.jsonl file of any results format, tolerating a cut-short last line, repeated
    game ids (the last record wins) and undecodable lines (skipped, their numbers kept)."""
    latest: dict[int, GameRecord] = {}
    lines = duplicates = 0
    damaged: list[int] = []
    truncated = False
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.endswith(b"\n"):
                truncated = bool(line.strip())
                break
            if not line.strip():
                continue
            lines += 1
            try:
                record = decode_any_record(line)
            except _DAMAGED:
                damaged.append(number)
                continue
            if record.game_id in latest:
                duplicates += 1
            latest[record.game_id] = record
    return Results([latest[i] for i in sorted(latest)], lines, truncated, duplicates, damaged)
