"""Reading a results file for a report, whatever state the run left it in: a last line cut short
(skipped), a game written more than once (the last record that decodes wins), damaged lines
(skipped and counted).

``read_totals`` is what the report reads: the run's totals (``engine.analysis.totals``), the
records going by one at a time in game-id order (``engine.records.ordered``), so that memory is set
by the conditions and not by the games, and the means come out as over the records in game-id
order. ``read_results`` keeps every record, for callers that need the records themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import msgspec

from engine.analysis.totals import RunTotals
from engine.records.ordered import Lines, Survey, read_in_order, whole_lines
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
    duplicates = 0
    damaged: list[int] = []
    survey = Survey()
    with open(path, "rb") as f:
        for number, _, line in whole_lines(f, survey):
            try:
                record = decode_any_record(line)
            except _DAMAGED:
                damaged.append(number)
                continue
            if record.game_id in latest:
                duplicates += 1
            latest[record.game_id] = record
    return Results([latest[i] for i in sorted(latest)], survey.lines, survey.truncated, duplicates, damaged)


class ReadCounts(msgspec.Struct):
    """What reading a results file met, as ``Results`` says it, damaged lines by count."""

    lines: int  # complete, non-empty lines read
    truncated: bool  # the last line had no newline and was skipped
    duplicates: int  # records replaced by a later record of the same game id
    damaged: int  # complete lines that could not be decoded (skipped)
    first_damaged: list[int]  # the numbers of the first of them


class _GameId(msgspec.Struct):
    game_id: int


_decode_id = msgspec.json.Decoder(_GameId).decode


def line_game_id(number: int, line: bytes) -> int | None:
    """The game id of a results line, None for a line that does not read (``read_in_order``'s key)."""
    try:
        return _decode_id(line).game_id
    except msgspec.DecodeError:  # a ValidationError too
        return None


def recorded_games(results_path: Path | str) -> Iterator[GameRecord]:
    """The last record that reads of each game of a results file, one at a time, in game-id order
    (as ``read_totals`` reads them); damaged lines are skipped."""
    _, games = read_in_order(results_path, line_game_id)
    for _, lines in games:
        for _, line in reversed(lines):
            try:
                yield decode_any_record(line)
                break
            except _DAMAGED:
                continue


def read_totals(path: Path | str, compare: tuple[str, str, str] | None = None) -> tuple[RunTotals, ReadCounts]:
    """The totals of a results file's games (keeping the seeds of ``compare``'s two values), the
    file read in game-id order, tolerating what ``read_results`` tolerates."""
    survey, games = read_in_order(path, line_game_id)
    damaged: Lines = survey.without_id
    totals = RunTotals(compare)
    duplicates = 0
    for _, lines in games:
        records = []
        for number, line in lines:
            try:
                records.append(decode_any_record(line))
            except _DAMAGED:
                damaged.add(number)
        if records:
            duplicates += len(records) - 1
            totals.add(records[-1])
    return totals, ReadCounts(survey.lines, survey.truncated, duplicates, damaged.count, damaged.first)
