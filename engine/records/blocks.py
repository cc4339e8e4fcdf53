"""A file of JSON lines kept as gzip blocks: one gzip member per block of games, each member's
header naming its length and the games it holds, so that one game is read by decompressing one
block, and a reader walks the file by its headers alone.

Why gzip: transcripts are repetitive JSON (the same keys, feedback and phrases game after game),
which deflate at level 1 shrinks to about a tenth (0.09 of the default game's messages-only lines,
in blocks of 128 KiB), and a file of gzip members is itself a gzip file, so ``zcat`` or
``gzip.open`` read it whole. The deflating is ISA-L's (the ``isal`` package, level 1): 0.9 us of CPU
a scripted game with the CRC, against 3.5 us with zlib, for the same format and a ratio of 0.091
against 0.088 (``benchmarks/bench_transcripts.py --compressors``); Python's ``zlib`` is the
fallback where ``isal`` cannot be installed. zstd (the zstandard package) made the same blocks 0.076
in about 0.9 us a game, but ``zcat`` cannot read it; zlib at level 6 saves a quarter more than
level 1 for two and a half times the CPU.

Why blocks: one member per game shrank to only 0.35 and one for the whole file cannot be read a game
at a time. A block gathers about 128 KiB of lines (some 65 scripted games; a game is read by
decompressing its block, well under a millisecond) and is written whole in one write, at the latest a
second after the last write while games end, and at close; a run whose games end slowly (models)
writes each as it ends. A run killed mid-write leaves at most one block cut short at the end, which
readers pass over and the next writer cuts off (``whole_end``); the games gathered and not yet
written are lost with it, and their records too, as the run writes a record once its transcript is
written (``engine.records.transcribe.TranscriptWriter``). A damaged block fails its CRC and is skipped with its
games; a damaged header is passed over to the next header found.

A member is a plain gzip member (RFC 1952) whose header has the extra field (FEXTRA) and no name,
comment or time; the extra field holds one subfield ``TB`` of: the member's length in bytes
(4 bytes, little-endian), then the block's game ids in ASCII as sorted ranges (``0-63,65,70-80``).
"""

from __future__ import annotations

import itertools
import math
import os
import struct
import time
import zlib
from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from engine.records.ids import IdPlaces

try:
    from isal.isal_zlib import compressobj, crc32
except ImportError:  # a platform without its wheels: the same format from the standard library
    from zlib import compressobj, crc32  # type: ignore[assignment]  # the same functions, typed apart

SIGNATURE = b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff"  # gzip, deflate, FEXTRA; no time, no flags, OS unknown
SUBFIELD = b"TB"
HEAD = len(SIGNATURE) + 2 + 4 + 4  # up to the ids: signature, XLEN, subfield id and length, member length
MAX_IDS = 65535 - 8  # what the extra field can hold
LEVEL = 1  # deflate level: 0 to 3 with ISA-L, 0 to 9 with zlib
RESYNC_CHUNK = 1 << 20


class Block(NamedTuple):
    offset: int
    size: int  # the whole member, header to trailer
    ids: list[int]


def ranges(ids: Iterable[int]) -> bytes:
    """Sorted game ids as ASCII ranges: ``0-3,5,7-9``."""
    # Consecutive ids keep their difference from their place in the sorted list: one group a run.
    runs = [[game_id for _, game_id in run] for _, run in itertools.groupby(enumerate(sorted(set(ids))), lambda p: p[1] - p[0])]
    return ",".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs).encode()


def parse_ranges(text: bytes) -> list[int]:
    """The ids of ``ranges``; ValueError if ``text`` is not such a list."""
    ids: list[int] = []
    if not text:
        return ids
    for part in text.split(b","):
        first, dash, last = part.partition(b"-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"not a range of game ids: {part[:20]!r}")
        ids.extend(range(int(first), int(last) + 1) if dash else (int(first),))
    return ids


def member(data: bytes | bytearray, ids: Iterable[int], level: int = LEVEL) -> bytes:
    """One gzip member holding ``data``, its header naming its length and ``ids``."""
    named = ranges(ids)
    if len(named) > MAX_IDS:
        raise ValueError("too many games for one block")
    compressor = compressobj(level, zlib.DEFLATED, -15)
    body = compressor.compress(data) + compressor.flush()
    size = HEAD + len(named) + len(body) + 8
    head = SIGNATURE + struct.pack("<H2sHI", 8 + len(named), SUBFIELD, 4 + len(named), size) + named
    return head + body + struct.pack("<II", crc32(data), len(data) & 0xFFFFFFFF)


def _header(f: BinaryIO, offset: int, end: int) -> Block | None | bool:
    """The block whose header starts at ``offset``: a Block; False if the header is damaged; None
    if the file ends before the block does (a block being written, or cut short)."""
    f.seek(offset)
    head = f.read(HEAD)
    if len(head) < HEAD:
        return None if SIGNATURE.startswith(head[: len(SIGNATURE)]) else False
    xlen, sub, length, size = struct.unpack_from("<H2sHI", head, len(SIGNATURE))
    if head[: len(SIGNATURE)] != SIGNATURE or sub != SUBFIELD or xlen != length + 4 or length < 4 or size < HEAD + length + 4:
        return False
    if offset + size > end:
        return None
    try:
        ids = parse_ranges(f.read(length - 4))
    except ValueError:
        return False
    return Block(offset, size, ids)


def _next_signature(f: BinaryIO, start: int, end: int) -> int | None:
    """Where the next block header may start at or after ``start``."""
    while start < end:
        f.seek(start)
        chunk = f.read(min(RESYNC_CHUNK, end - start) + len(SIGNATURE) - 1)
        found = chunk.find(SIGNATURE)
        if found != -1:
            return start + found
        start += RESYNC_CHUNK
    return None


def walk(f: BinaryIO, start: int, end: int) -> Iterator[Block]:
    """The whole blocks of ``f`` from ``start`` (a block's start) to ``end``, by their headers alone;
    a damaged header is passed over to the next header found. Ends at the first block that runs past
    ``end``, unless a whole block follows it (then its length was damaged)."""
    offset = start
    while offset < end:
        block = _header(f, offset, end)
        if isinstance(block, Block):
            yield block
            offset += block.size
            continue
        after = _next_signature(f, offset + 1, end)
        while after is not None and not isinstance(_header(f, after, end), Block):
            after = _next_signature(f, after + 1, end)
        if after is None:
            return  # the tail: a block cut short or being written
        offset = after


def whole_end(f: BinaryIO, start: int, end: int) -> int:
    """Where the last whole block from ``start`` ends (``start`` if none)."""
    last = start
    for block in walk(f, start, end):
        last = block.offset + block.size
    return last


def read_block(f: BinaryIO, block: Block) -> bytes | None:
    """The JSON lines of ``block``, or None if it is damaged (its CRC or length do not match)."""
    f.seek(block.offset)
    try:
        return zlib.decompress(f.read(block.size), 31)
    except zlib.error:
        return None


BLOCK_BYTES = 128 * 1024  # JSON a block gathers before it is written
BLOCK_SECONDS = 1.0  # or once this long has passed since the last write (games against models end slowly)
BLOCK_GAMES = 4096  # at most, so that the ids fit the header


class BlockWriter:
    """Appends blocks to ``path``: the caller adds each game's line to ``buffer`` and calls ``added``;
    a block is written when it holds ``BLOCK_BYTES`` or when a second has passed since the last
    write, and by ``close``; ``on_written`` is told when nothing added is left unwritten. On opening, a block a kill cut short at the end is cut off (bytes that
    are not the start of a block are left alone: readers pass over them)."""

    def __init__(self, path: Path, block_bytes: int | None = None, block_seconds: float | None = None,
                 on_written: Callable[[], None] | None = None) -> None:
        self.path = path
        self.on_written = on_written  # called after each flush that wrote, or found nothing to write
        self.block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
        self.block_seconds = BLOCK_SECONDS if block_seconds is None else block_seconds
        self.buffer = bytearray()
        self.ids: list[int] = []
        self._last_write = -math.inf
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        with open(self._fd, "rb", closefd=False) as f:
            size = os.fstat(self._fd).st_size
            end = whole_end(f, 0, size)
            f.seek(end)
            tail = f.read(len(SIGNATURE))
        if end < size and tail and SIGNATURE.startswith(tail[: len(SIGNATURE)]):
            os.ftruncate(self._fd, end)  # a block a kill cut short; anything else is left for readers to pass over

    def added(self, game_id: int) -> None:
        """The line of ``game_id`` was appended to ``buffer``."""
        self.ids.append(game_id)
        full = len(self.buffer) >= self.block_bytes or len(self.ids) >= BLOCK_GAMES
        if full or time.monotonic() - self._last_write >= self.block_seconds:
            self.flush()

    def flush(self) -> None:
        if self.ids:
            data = memoryview(member(self.buffer, self.ids))
            while data:
                data = data[os.write(self._fd, data):]
            self.buffer.clear()
            self.ids.clear()
        self._last_write = time.monotonic()
        if self.on_written is not None:
            self.on_written()

    def close(self) -> None:
        if self._fd >= 0:
            try:
                self.flush()
            finally:
                os.close(self._fd)
                self._fd = -1


def game_id_of(line: bytes) -> int | None:
    """The game id a JSON line starts with (``{"game_id":N,``), or None."""
    if not line.startswith(b'{"game_id":'):
        return None
    end = line.find(b",", 11)
    digits = line[11:end]
    return int(digits) if end > 0 and digits.isdigit() else None


class GameLines:
    """The last line written for each game in a JSON-lines file (``plain``: a run's results, or its
    transcripts as older runs kept them) and a block file beside it (``blocks``, whose copies came
    later; None: none), each line starting with ``{"game_id":N,``. ``refresh`` reads only what was
    appended since, and starts again when a file was replaced; the blocks are walked by their
    headers, so memory holds 8 bytes a game."""

    def __init__(self, plain: Path, blocks: Path | None = None) -> None:
        self.plain, self.blocks = plain, blocks
        self._restart()

    def _restart(self) -> None:
        self.where = IdPlaces()  # 2 * offset of the line, or 2 * offset of the block + 1
        self.sizes: dict[int, int] = {}  # block offset -> its size
        self.read = [0, 0]  # how far each file was read
        self._files: list[tuple[int, int] | None] = [None, None]  # each file's (device, inode)
        self._cache: tuple[int, dict[int, bytes]] | None = None  # the last block decompressed

    def version(self) -> tuple:
        """Changes whenever what the files hold does."""
        return (*self.read, *self._files)

    def __len__(self) -> int:
        return len(self.where)

    def refresh(self, added: list[tuple[int, bytes]] | None = None) -> None:
        """Read what was appended; ``added``, if given, gets the (game id, line) of each plain line read."""
        stats = [_stat(self.plain), _stat(self.blocks) if self.blocks is not None else None]
        for i, s in enumerate(stats):
            seen = self._files[i]
            if seen is not None and (s is None or (s.st_dev, s.st_ino) != seen or s.st_size < self.read[i]):
                self._restart()  # replaced, removed or cut: read both again
                break
        for i, s in enumerate(stats):
            if s is not None:
                self._files[i] = (s.st_dev, s.st_ino)
        if stats[0] is not None and stats[0].st_size > self.read[0]:
            with self.plain.open("rb") as f:
                f.seek(self.read[0])
                offset = self.read[0]
                for line in f:
                    if not line.endswith(b"\n"):
                        break  # being written
                    game_id = game_id_of(line)
                    if game_id is not None:
                        self.where.set(game_id, 2 * offset)
                        if added is not None:
                            added.append((game_id, line))
                    offset += len(line)
                self.read[0] = offset
        if self.blocks is not None and stats[1] is not None and stats[1].st_size > self.read[1]:
            with self.blocks.open("rb") as f:
                for block in walk(f, self.read[1], stats[1].st_size):
                    self.sizes[block.offset] = block.size
                    for game_id in block.ids:
                        self.where.set(game_id, 2 * block.offset + 1)
                    self.read[1] = block.offset + block.size

    def line(self, game_id: int) -> bytes | None:
        """The last line of ``game_id``; None if there is none, or its block is damaged."""
        where = self.where.get(game_id)
        if where < 0:
            return None
        if where % 2 == 0:
            with self.plain.open("rb") as f:
                f.seek(where // 2)
                return f.readline()
        offset = where // 2
        assert self.blocks is not None, "only a block's games have odd places"
        if self._cache is None or self._cache[0] != offset:
            with self.blocks.open("rb") as f:
                self._cache = (offset, _lines_by_game(read_block(f, Block(offset, self.sizes[offset], []))))
        return self._cache[1].get(game_id)

    def lines(self, game_ids: Container[int] | None = None) -> Iterator[tuple[int, bytes]]:
        """(game id, last line) of every game, or of those in ``game_ids``, in the order of the files;
        the games of a damaged block are left out. One block in memory at a time."""
        wanted = [(where, game_id) for game_id, where in self.where.items() if game_ids is None or game_id in game_ids]
        lines = sorted(w for w in wanted if w[0] % 2 == 0)
        if lines:
            with self.plain.open("rb") as f:
                for where, game_id in lines:
                    f.seek(where // 2)
                    yield game_id, f.readline()
        for _, game_id in sorted(w for w in wanted if w[0] % 2 == 1):  # by block: ``line`` keeps the last one read
            line = self.line(game_id)
            if line is not None:
                yield game_id, line


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _lines_by_game(data: bytes | None) -> dict[int, bytes]:
    """Each game's last line in a block's data (none for a damaged block)."""
    found: dict[int, bytes] = {}
    for line in (data or b"").splitlines(keepends=True):
        game_id = game_id_of(line)
        if game_id is not None and line.endswith(b"\n"):
            found[game_id] = line
    return found
