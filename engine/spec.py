"""What a game and a run are: plain data, validated up front, deterministic by seed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from bus.channel import ChannelSpec
from feedback.modes import MODES
from puzzles.asympuzl import ALICE, BOB, InvalidParameter, check_params

HistoryLength = int | None  # None keeps the whole conversation


Topology = Literal["all", "directed", "chain"]
TurnOrder = Literal["round_robin", "simultaneous"]
Memory = Literal["reinject", "scratchpad"]


class GameSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=False):
    """Everything that defines one game. ``seed`` fixes the puzzle and every scripted choice.

    The fields after ``agents`` are extensions; left unset they are not written at all, so a default
    game's record is the same as before they existed. ``agents`` maps each role, in turn order, to
    its policy: alice and bob, or for the chain puzzle alice, bob, carol (and dave).
    - ``topology``: who may talk to whom: "all" (everyone hears every message), "directed" (every
      message goes to one partner named in the reply), "chain" (neighbours in the roster only).
    - ``turn_order``: "round_robin", or "simultaneous" (all act on the previous round's messages).
    - ``channel``: what every channel does to messages (budgets, noise, delay, drops).
    - ``max_actions``: actions applied per agent turn. ``memory``: "reinject" (clues shown every
      turn) or "scratchpad" (clues on the first turn; then the agent's own notes).
    - ``leak_audit``: check every agent input for words private to other agents.
    """

    game_id: int
    seed: int
    puzzle: Literal["asympuzl", "asympuzl_solo", "chain"] = "asympuzl"
    size: int = 5
    distractors: int = 0
    distractors_in: Literal["alice", "bob"] = ALICE
    feedback: str = "own_detailed"
    max_turns: int = 10
    history: HistoryLength = 1
    agents: dict[str, str] = msgspec.field(
        default_factory=lambda: {ALICE: "share_everything", BOB: "share_everything"}
    )
    topology: Topology | UnsetType = UNSET
    turn_order: TurnOrder | UnsetType = UNSET
    channel: ChannelSpec | UnsetType = UNSET
    max_actions: int | UnsetType = UNSET
    memory: Memory | UnsetType = UNSET
    leak_audit: bool | UnsetType = UNSET

    def option(self, name: str, default):
        value = getattr(self, name)
        return default if value is UNSET else value

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
        for name in ("topology", "turn_order", "max_actions", "memory"):
            if getattr(self, name) is not UNSET:
                fields[name] = str(getattr(self, name))
        if self.channel is not UNSET:
            fields["channel"] = channel_label(self.channel)
        return fields

    def condition(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.condition_fields().items())


def channel_label(spec: ChannelSpec) -> str:
    """The channel settings that differ from an unlimited channel, as one label."""
    plain = ChannelSpec()
    parts = [f"{f}={getattr(spec, f)}" for f in spec.__struct_fields__ if getattr(spec, f) != getattr(plain, f)]
    return ",".join(parts) or "unlimited"


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
    # Extensions (None: not used, and not written into the game specs).
    puzzle: Literal["asympuzl", "chain"] = "asympuzl"
    carol: str | None = None  # chain puzzle: the third agent's policy
    dave: str | None = None  # chain puzzle: the fourth agent's policy
    topology: Topology | None = None
    turn_order: TurnOrder | None = None
    channel: ChannelSpec | None = None
    max_actions: int | None = None
    memory: Memory | None = None
    leak_audit: bool = False

    @property
    def roster(self) -> dict[str, str]:
        agents = {ALICE: self.alice, BOB: self.bob}
        if self.carol is not None:
            agents["carol"] = self.carol
        if self.dave is not None:
            agents["dave"] = self.dave
        return agents

    @property
    def total(self) -> int:
        return self.games

    def specs_for(self, indices: Iterable[int]) -> Iterator[GameSpec]:
        return (self.spec(i) for i in indices)

    def condition_specs(self) -> list[GameSpec]:
        """One game of each condition (here there is one)."""
        return [self.spec(0)]

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
        check_extensions(self.puzzle, self.roster, self.distractors, self.max_actions, self.channel)

    def spec(self, index: int) -> GameSpec:
        options = {
            name: getattr(self, name)
            for name in ("topology", "turn_order", "channel", "max_actions", "memory")
            if getattr(self, name) is not None
        }
        if self.leak_audit:
            options["leak_audit"] = True
        return GameSpec(
            game_id=index,
            seed=game_seed(self.seed, index),
            puzzle=self.puzzle,
            size=self.size,
            distractors=self.distractors,
            distractors_in=self.distractors_in,
            feedback=self.feedback,
            max_turns=self.turn_limit,
            history=self.history,
            agents=self.roster,
            **options,
        )


def check_extensions(puzzle: str, agents: dict[str, str], distractors: int, max_actions: int | None, channel: ChannelSpec | None) -> None:
    """Raise InvalidParameter for extension settings that do not fit together."""
    if puzzle == "chain":
        if distractors:
            raise InvalidParameter("distractors", "the chain puzzle has no distractors")
        if "dave" in agents and "carol" not in agents:
            raise InvalidParameter("dave", "a fourth agent needs a third (carol)")
    elif len(agents) > 2:
        raise InvalidParameter("carol", "more than two agents need the chain puzzle (--puzzle chain)")
    if max_actions is not None and max_actions < 0:
        raise InvalidParameter("max_actions", f"max_actions must be 0 or more, got {max_actions}")
    if channel is not None:
        try:
            channel.check()
        except ValueError as exc:
            raise InvalidParameter("channel", str(exc)) from None
