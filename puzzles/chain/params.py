"""The chain puzzle's parameters: the puzzle size N (the number of agents is the roster's)."""

from __future__ import annotations

from typing import ClassVar

import msgspec

from ..base import InvalidParameter
from .rules import MIN_SIZE, VOCABULARIES

MAX_SIZE = min(len(v) for v in VOCABULARIES.values())  # positions: a word of each vocabulary each


class ChainParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="game", tag="chain"):
    """``size``: positions N (2 to 40)."""

    size: int = 5

    HELP: ClassVar[dict[str, str]] = {"size": f"puzzle size N, {MIN_SIZE} to {MAX_SIZE}"}

    def check(self) -> None:
        if not isinstance(self.size, int) or not MIN_SIZE <= self.size <= MAX_SIZE:
            raise InvalidParameter("size", f"size must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {self.size!r}")

    def labels(self) -> dict[str, str]:
        return {"N": str(self.size)}

    def normal(self) -> ChainParams:
        return self
