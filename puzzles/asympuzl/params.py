"""AsymPuzl's parameters: the puzzle size N, the distractors D (in Alice's or Bob's clues) and the
prompt the agents are shown."""

from __future__ import annotations

from typing import ClassVar

import msgspec

from ..base import InvalidParameter
from .rules import ALICE, MAX_DISTRACTORS, MAX_PIECES, MIN_SIZE, PROMPTS, DistractorSide, PromptStyle, check_params


class AsymPuzlParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="game", tag="asympuzl"):
    """``size``: positions N (2 to 40, N + D at most 40: the vocabulary). ``distractors``: D extra pieces (0 to 10)
    in the clues of ``distractors_in``. ``prompt``: ``paper`` (the long paper's appendix G) or
    ``guided`` (the paper's prompt with additions of ours, ``puzzles.asympuzl.prompt``)."""

    size: int = 5
    distractors: int = 0
    distractors_in: DistractorSide = ALICE
    prompt: PromptStyle = "paper"

    HELP: ClassVar[dict[str, str]] = {
        "size": f"puzzle size N, {MIN_SIZE} to {MAX_PIECES} (N + D at most {MAX_PIECES})",
        "distractors": f"distractor pieces D, 0 to {MAX_DISTRACTORS}",
        "distractors_in": "whose clues get the distractors",
        "prompt": "paper (the long paper's appendix G) or guided (with our additions: the turn, what the clues mean, an appeal to share)",
    }

    def check(self) -> None:
        check_params(self.size, self.distractors, self.distractors_in)
        if self.prompt not in PROMPTS:
            raise InvalidParameter("prompt", f"prompt must be one of {', '.join(PROMPTS)}, got {self.prompt!r}")

    def labels(self) -> dict[str, str]:
        labels = {
            "N": str(self.size),
            "D": f"{self.distractors} in {self.distractors_in}" if self.distractors else "0",
        }
        if self.prompt != "paper":
            labels["prompt"] = self.prompt
        return labels

    def normal(self) -> AsymPuzlParams:
        """One spelling per condition: with no distractors, their side does not matter."""
        return self if self.distractors else msgspec.structs.replace(self, distractors_in=ALICE)
