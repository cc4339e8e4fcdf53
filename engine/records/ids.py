"""Game ids in compact memory: what a run has recorded (a bit per game), how often each game was
written (a byte per game) and where its transcript lies (8 bytes a game), so that resuming, sorting
and reading a run of millions of games keeps no records."""

from __future__ import annotations

from array import array
from collections.abc import Iterator


class IdSet:
    """A set of game ids as a bit per id: what a run has recorded, in memory that does not depend on
    the records."""

    def __init__(self, ids=()) -> None:
        self._bits = bytearray()
        self._count = 0
        for game_id in ids:
            self.add(game_id)

    def add(self, game_id: int) -> None:
        byte, bit = divmod(game_id, 8)
        if byte >= len(self._bits):
            self._bits.extend(bytes(max(byte + 1 - len(self._bits), len(self._bits))))
        if not self._bits[byte] >> bit & 1:
            self._bits[byte] |= 1 << bit
            self._count += 1

    def __contains__(self, game_id: object) -> bool:
        if not isinstance(game_id, int) or game_id < 0:
            return False
        byte, bit = divmod(game_id, 8)
        return byte < len(self._bits) and bool(self._bits[byte] >> bit & 1)

    def __len__(self) -> int:
        return self._count

    def __iter__(self):
        for byte, value in enumerate(self._bits):
            if value:
                for bit in range(8):
                    if value >> bit & 1:
                        yield byte * 8 + bit


class IdCounts:
    """A small count per game id: a byte array for ids up to 2**26, a dict beyond (a damaged file)."""

    LIMIT = 1 << 26

    def __init__(self) -> None:
        self.small = bytearray()
        self.large: dict[int, int] = {}

    def add(self, game_id: int, step: int) -> int:
        """Add ``step`` to the count of ``game_id``; the new count."""
        if game_id in self.large or not 0 <= game_id < self.LIMIT:
            value = self.large.get(game_id, 0) + step
            self.large[game_id] = value
            return value
        if game_id >= len(self.small):
            self.small.extend(bytes(max(game_id + 1 - len(self.small), len(self.small))))
        value = self.small[game_id] + step
        if value > 255:  # a game written that often: counted in the dict from now on
            self.small[game_id] = 0
            self.large[game_id] = value
        else:
            self.small[game_id] = value
        return value


class IdPlaces:
    """Game id -> a place (a non-negative number: where its transcript lies), 8 bytes a game: an
    array for ids below 2**26, a dict beyond (a damaged file)."""

    LIMIT = 1 << 26

    def __init__(self) -> None:
        self.small = array("q")
        self.large: dict[int, int] = {}
        self.count = 0

    def set(self, game_id: int, where: int) -> None:
        if 0 <= game_id < self.LIMIT:
            if game_id >= len(self.small):
                self.small.extend([-1] * max(game_id + 1 - len(self.small), len(self.small)))
            self.count += self.small[game_id] < 0
            self.small[game_id] = where
        else:
            self.count += game_id not in self.large
            self.large[game_id] = where

    def get(self, game_id: int) -> int:
        if 0 <= game_id < len(self.small):
            return self.small[game_id]
        return self.large.get(game_id, -1)

    def items(self) -> Iterator[tuple[int, int]]:
        for game_id, where in enumerate(self.small):
            if where >= 0:
                yield game_id, where
        yield from self.large.items()

    def __len__(self) -> int:
        return self.count
