"""A results file read in game-id order, one game at a time, whatever order its lines are in, in
memory that does not grow with the run.

A run appends records as games finish and rewrites them sorted by game id once every game is
recorded; until then (a run still going, interrupted, or a part of a plan played on one machine) the
lines are in the order games finished, and a resumed run may hold a game twice. The report (whose
means are summed game by game in game-id order, so that they come out the same whatever the order
of the lines), the merge and the final sort read through here:

1. A first pass reads each line's game id alone (``line_id``). When the ids go up line after line (a
   finished run), a second pass hands the lines over as they come: no memory per game at all.
2. Otherwise the ids are taken window by window: for each window of ``WINDOW`` consecutive ids that
   holds a line, one pass notes the offset and number of each of its lines (two arrays of
   ``WINDOW`` entries: 8 bytes an id, 16 in a file past 4 GB), then the lines are read back by
   seeking, in id order. Memory is set by the window (1 MB), not the run; a file out of order costs
   one pass per window that holds a line (8 for a million games). An offset per game instead (8
   bytes a game) would add 8 MB to a report of a million games: a report of a thousand peaks at
   about 31 MB, so that alone would take it past the 1.2 times it may grow to.
3. Ids far from the rest (negative, or more than ``SPREAD`` times the number of lines) go to a dict
   of their lines: a damaged or foreign file can hold any id, and a window each would mean a pass
   each. Such lines cost memory of their own; a run's lines have none.

A game written more than once comes with all its lines, in file order (the last one written last),
and the reader chooses: the report the last one that decodes, the final sort the last one.
"""

from __future__ import annotations

import os
from array import array
from bisect import insort
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

WINDOW = 1 << 17  # game ids per window
SPREAD = 64  # ids up to SPREAD x lines (and a window more) are read in windows; beyond, one by one
FIRST = 5  # line numbers kept of the lines without a game id

Entry = tuple[int, bytes]  # a line's number (from 1) and the line, with its newline
Game = tuple[int, list[Entry]]  # a game id and its lines, in file order
LineId = Callable[[int, bytes], "int | None"]  # a line's game id; None for a line without one


class Lines:
    """Some of a file's lines: how many, and the numbers of the first ``FIRST`` of them."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[int] = []

    def add(self, number: int) -> None:
        self.count += 1
        if len(self.first) < FIRST or number < self.first[-1]:
            insort(self.first, number)
            del self.first[FIRST:]


class Survey:
    """What the first pass saw."""

    def __init__(self) -> None:
        self.lines = 0  # whole lines that are not blank
        self.blank = 0  # whole lines that are
        self.truncated = False  # the last line has no newline (a run still writing, or killed): never read
        self.without_id = Lines()
        self.ascending = True  # every id above the one before: no game twice, nothing to sort
        self.first: int | None = None  # the first id and the last
        self.last: int | None = None
        self.largest = -1  # the largest id that is not negative


def whole_lines(f: BinaryIO, survey: Survey | None = None) -> Iterator[tuple[int, int, bytes]]:
    """(number, offset, line) of every whole line that is not blank; counted in ``survey`` if given."""
    offset = 0
    for number, line in enumerate(f, start=1):
        if not line.endswith(b"\n"):
            if survey is not None:
                survey.truncated = bool(line.strip())
            return
        if line.strip():
            if survey is not None:
                survey.lines += 1
            yield number, offset, line
        elif survey is not None:
            survey.blank += 1
        offset += len(line)


def survey_of(path: Path, line_id: LineId) -> Survey:
    survey = Survey()
    with open(path, "rb") as f:
        for number, _, line in whole_lines(f, survey):
            game_id = line_id(number, line)
            if game_id is None:
                survey.without_id.add(number)
                continue
            if survey.last is not None and game_id <= survey.last:
                survey.ascending = False
            if survey.first is None:
                survey.first = game_id
            survey.last = game_id
            survey.largest = max(survey.largest, game_id)
    return survey


def read_in_order(path: Path | str, line_id: LineId) -> tuple[Survey, Iterator[Game]]:
    """The first pass's survey, and the games with their lines in ascending game id, read as
    iterated. ``line_id`` may raise to stop at a line (a reader that refuses damaged lines)."""
    path = Path(path)
    survey = survey_of(path, line_id)
    return survey, (_streamed(path, line_id) if survey.ascending else _windowed(path, line_id, survey))


def _streamed(path: Path, line_id: LineId) -> Iterator[Game]:
    with open(path, "rb") as f:
        for number, _, line in whole_lines(f):
            game_id = line_id(number, line)
            if game_id is not None:
                yield game_id, [(number, line)]


def _windowed(path: Path, line_id: LineId, survey: Survey) -> Iterator[Game]:
    dense = min(survey.largest + 1, SPREAD * survey.lines + WINDOW)  # ids below are read in windows
    occupied = bytearray(-(-dense // WINDOW))
    strays: dict[int, list[tuple[int, int]]] = {}  # id -> (number, offset) of its lines
    with open(path, "rb") as f:
        for number, offset, line in whole_lines(f):
            game_id = line_id(number, line)
            if game_id is None:
                continue
            if 0 <= game_id < dense:
                occupied[game_id // WINDOW] = 1
            else:
                strays.setdefault(game_id, []).append((number, offset))
        size = f.seek(0, 2)
        code = "I" if size < 2**32 - 1 else "Q"  # for offsets plus one (0: no line) and line numbers
        below = sorted(i for i in strays if i < 0)
        yield from ((i, _read(f, strays.pop(i))) for i in below)
        for window, used in enumerate(occupied):
            if used:
                yield from _window(f, line_id, window * WINDOW, min(dense, (window + 1) * WINDOW), code)
        yield from ((i, _read(f, strays[i])) for i in sorted(strays))


def _window(f: BinaryIO, line_id: LineId, low: int, high: int, code: str) -> Iterator[Game]:
    """The games with ids in [low, high), in order: one pass to place their lines, then a seek each."""
    offsets = array(code, [0]) * (high - low)
    numbers = array(code, [0]) * (high - low)  # a file has fewer lines than bytes
    repeated: dict[int, list[tuple[int, int]]] = {}  # the games written more than once: all their lines
    f.seek(0)
    for number, offset, line in whole_lines(f):
        game_id = line_id(number, line)
        if game_id is None or not low <= game_id < high:
            continue
        i = game_id - low
        if offsets[i]:
            repeated.setdefault(game_id, [(numbers[i], offsets[i] - 1)]).append((number, offset))
        offsets[i], numbers[i] = offset + 1, number
    for i, place in enumerate(offsets):
        if place:
            game_id = low + i
            yield game_id, _read(f, repeated.pop(game_id, []) or [(numbers[i], place - 1)])


def _read(f: BinaryIO, places: list[tuple[int, int]]) -> list[Entry]:
    lines = []
    for number, offset in places:
        f.seek(offset)
        lines.append((number, f.readline()))
    return lines


def sort_results(path: Path, total: int, line_id: LineId) -> bool:
    """Rewrite the results file at ``path`` sorted by game id, if every game of ``total`` is in it:
    the last line of each game of the plan, then those of games the plan does not have; False (and
    nothing written) if a game is missing. A file that is sorted already is left as it is."""
    if not path.exists():
        return total == 0
    survey, games = read_in_order(path, line_id)
    if survey.ascending and survey.lines < total:  # one line a game: some game is missing
        return False
    if survey.ascending and survey.lines == total and not (survey.blank or survey.truncated):
        if total == 0 or (survey.first, survey.last) == (0, total - 1):
            return True  # every game once, in order: the rewrite would give these very bytes
    tmp = path.with_suffix(".jsonl.tmp")
    recorded, outside = 0, []  # the plan's games written; the last lines of the others
    try:
        with tmp.open("wb") as out:
            for game_id, lines in games:
                if 0 <= game_id < total:
                    out.write(lines[-1][1])
                    recorded += 1
                else:
                    outside.append(lines[-1][1])
            out.writelines(outside)
        if recorded < total:
            tmp.unlink()
            return False
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    return True
