"""AsymPuzl's parameters: the puzzle size N and the distractors D (in Alice's or Bob's clues)."""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from .rules import ALICE, check_params


class AsymPuzlParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="game", tag="asympuzl"):
    """``size``: positions N (2 to 40, N + D at most 40: the vocabulary). ``distractors``: D extra pieces (0 to 10)
    in the clues of ``distractors_in``."""

    size: int = 5
    distractors: int = 0
    distractors_in: Literal["alice", "bob"] = ALICE

    HELP: ClassVar[dict[str, str]] = {
        "size": "puzzle size N, 2 to 40 (N + D at most 40)",
        "distractors": "distractor pieces D, 0 to 10",
        "distractors_in": "whose clues get the distractors",
    }

    def check(self) -> None:
        check_params(self.size, self.distractors, self.distractors_in)

    def labels(self) -> dict[str, str]:
        return {
            "N": str(self.size),
            "D": f"{self.distractors} in {self.distractors_in}" if self.distractors else "0",
        }

    def normal(self) -> AsymPuzlParams:
        """One spelling per condition: with no distractors, their side does not matter."""
        return self if self.distractors else msgspec.structs.replace(self, distractors_in=ALICE)
