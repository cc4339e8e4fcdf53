"""Traveling Adventurers' parameters: the board, the agent variant the prompts and state follow,
and switches for the reference code's behaviour where it differs from ours."""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from ..base import InvalidParameter

VARIANTS = ("baseline", "grounding", "state_tracking", "problem_solving")
PAPER_ROOMS = 6
MIN_ROOMS, MAX_ROOMS = 3, 8
MAX_DEVIATION = 10
BOARD_CHOICES = ("paper", "balanced", "generated", "1", "2", "3", "4", "5", "6")


class TspParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="game", tag="tsp"):
    """See ``HELP``. A board is one of the paper's six (chosen from the game's seed, or in turn, or
    one named) or generated from the seed; ``rooms`` other than 6 means a generated board."""

    board: str = "paper"
    rooms: int = PAPER_ROOMS
    deviation: int = 3
    filtered: bool = False
    variant: Literal["baseline", "grounding", "state_tracking", "problem_solving"] = "baseline"
    drop_after_error: bool = False
    notices: bool = False
    prompt_fidelity: bool = False
    reference_grounding: bool = False

    HELP: ClassVar[dict[str, str]] = {
        "board": "paper (one of the paper's six, from the seed), balanced (the six in turn), 1..6 (one of them), "
        "or generated",
        "rooms": f"rooms of a generated board, {MIN_ROOMS} to {MAX_ROOMS} (other than {PAPER_ROOMS} means generated)",
        "deviation": f"generated boards: how far a weight may stray from the running mean, 0 to {MAX_DEVIATION}",
        "filtered": "generated boards: only boards where neither player's own best tour is the joint best",
        "variant": "agent variant (prompt fields and visit bookkeeping): baseline, grounding, state_tracking, "
        "problem_solving",
        "drop_after_error": "the reference's parsing: one bad action drops the rest of the reply",
        "notices": "tell an agent which of its actions were rejected and why (the reference does not)",
        "prompt_fidelity": "the reference prompts' slips, word for word (room counts, world names)",
        "reference_grounding": "the reference grounding module: reversed edges dropped, repeats added up",
    }

    def check(self) -> None:
        if self.board not in BOARD_CHOICES:
            raise InvalidParameter("board", f"board must be one of {', '.join(BOARD_CHOICES)}, got {self.board!r}")
        if not isinstance(self.rooms, int) or not MIN_ROOMS <= self.rooms <= MAX_ROOMS:
            raise InvalidParameter("rooms", f"rooms must be an integer from {MIN_ROOMS} to {MAX_ROOMS}, got {self.rooms!r}")
        if self.generated and self.board not in ("paper", "generated"):
            raise InvalidParameter("rooms", f"the paper's boards have {PAPER_ROOMS} rooms; board {self.board} cannot have {self.rooms}")
        if not isinstance(self.deviation, int) or not 0 <= self.deviation <= MAX_DEVIATION:
            raise InvalidParameter("deviation", f"deviation must be an integer from 0 to {MAX_DEVIATION}, got {self.deviation!r}")
        if self.variant not in VARIANTS:
            raise InvalidParameter("variant", f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")

    @property
    def generated(self) -> bool:
        return self.board == "generated" or self.rooms != PAPER_ROOMS

    def labels(self) -> dict[str, str]:
        board = self.normal()
        if board.generated:
            shown = f"generated d={board.deviation}" + (" filtered" if board.filtered else "")
        else:
            shown = board.board if board.board in ("paper", "balanced") else f"paper {board.board}"
        labels = {"rooms": str(board.rooms), "board": shown, "variant": board.variant}
        switches = [name for name in ("drop_after_error", "notices", "prompt_fidelity", "reference_grounding") if getattr(board, name)]
        if switches:
            labels["reference"] = "+".join(switches)
        return labels

    def normal(self) -> TspParams:
        """One spelling per condition: a board with other than 6 rooms is generated; the generator's
        settings matter only for generated boards."""
        if self.generated:
            return msgspec.structs.replace(self, board="generated")
        return msgspec.structs.replace(self, deviation=3, filtered=False)
