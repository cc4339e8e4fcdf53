"""What a game and a run are: plain data, validated up front, deterministic by seed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Literal

import msgspec

from feedback.modes import MODES
from puzzles.asympuzl import ALICE, BOB, InvalidParameter, check_params

HistoryLength = int | None  # None keeps the whole conversation


class GameSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=False):
    """Everything that defines one game. ``seed`` fixes the puzzle and every scripted choice."""

    game_id: int
    seed: int
    puzzle: Literal["asympuzl", "asympuzl_solo"] = "asympuzl"
    size: int = 5
    distractors: int = 0
    distractors_in: Literal["alice", "bob"] = ALICE
    feedback: str = "own_detailed"
    max_turns: int = 10
    history: HistoryLength = 1
    agents: dict[str, str] = msgspec.field(
        default_factory=lambda: {ALICE: "share_everything", BOB: "share_everything"}
    )

    def condition_fields(self) -> dict[str, str]:
        """Everything but the game id and seed, as labels: games with equal fields are replicates."""
        fields = {
            "puzzle": self.puzzle,
            "N": str(self.size),
            "D": f"{self.distractors} in {self.distractors_in}" if self.distractors else "0",
            "feedback": self.feedback,
            "T": str(self.max_turns),
            "h": "full" if self.history is None else str(self.history),
        }
        fields.update(self.agents)
        return fields

    def condition(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.condition_fields().items())


def game_seed(run_seed: int, index: int) -> int:
    """The seed of game ``index`` in a run: independent of the condition, so that conditions
    compared within one seed are compared on the same puzzles."""
    digest = hashlib.blake2b(f"{run_seed}:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


class RunConfig(msgspec.Struct, frozen=True, kw_only=True, tag="run"):
    """One condition repeated over ``games`` seeds."""

    games: int = 1000
    seed: int = 0
    size: int = 5
    distractors: int = 0
    distractors_in: Literal["alice", "bob"] = ALICE
    feedback: str = "own_detailed"
    max_turns: int | None = None  # None: 2N
    history: HistoryLength = 1
    alice: str = "share_everything"
    bob: str = "share_everything"

    @property
    def total(self) -> int:
        return self.games

    def specs_for(self, indices: Iterable[int]) -> Iterator[GameSpec]:
        return (self.spec(i) for i in indices)

    @property
    def turn_limit(self) -> int:
        return self.max_turns if self.max_turns is not None else 2 * self.size

    def validate(self) -> None:
        """Raise InvalidParameter (a ValueError) with a one-line reason; ``field`` names the field."""
        if self.games < 1:
            raise InvalidParameter("games", f"games must be at least 1, got {self.games}")
        check_params(self.size, self.distractors, self.distractors_in)
        if self.feedback not in MODES:
            raise InvalidParameter("feedback", f"feedback must be one of {', '.join(MODES)}, got {self.feedback!r}")
        if self.max_turns is not None and self.max_turns < 1:
            raise InvalidParameter("max_turns", f"max_turns must be at least 1, got {self.max_turns}")
        if self.history is not None and self.history < 0:
            raise InvalidParameter("history", f"history must be 0 or more, or full, got {self.history}")

    def spec(self, index: int) -> GameSpec:
        return GameSpec(
            game_id=index,
            seed=game_seed(self.seed, index),
            size=self.size,
            distractors=self.distractors,
            distractors_in=self.distractors_in,
            feedback=self.feedback,
            max_turns=self.turn_limit,
            history=self.history,
            agents={ALICE: self.alice, BOB: self.bob},
        )
