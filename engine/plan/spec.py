"""What one game is: plain data, deterministic by seed.

A game spec is the game's parameters (a struct tagged with the game's name), one policy per role,
and the engine's options. Nothing here knows any game: parameters, roles and feedback modes are
looked up in the game's entry of ``puzzles.registry``.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from bus.channel import ChannelSpec
from puzzles import AnyParams, game_of

from engine.plan.branching import BranchPoint

HistoryLength = int | None  # None keeps the whole conversation
Topology = Literal["all", "directed", "chain"]
TurnOrder = Literal["round_robin", "simultaneous"]
Memory = Literal["reinject", "scratchpad"]
EXTENSIONS = ("topology", "turn_order", "channel", "max_actions", "memory", "leak_audit", "branch", "member")


class Options(msgspec.Struct, frozen=True, kw_only=True):
    """How the engine plays a game, whatever the game.

    - ``feedback``: the game's feedback mode. ``max_turns``: rounds before the game ends unfinished.
      ``history``: how many of each sender's latest messages an agent is shown (None: all).
    The rest are extensions; left unset they are not written at all, so a game's record is the same
    as before they existed.
    - ``topology``: who may talk to whom: "all" (everyone hears every message), "directed" (every
      message goes to one partner named in the reply), "chain" (neighbours in the roster only).
    - ``turn_order``: "round_robin", or "simultaneous" (all act on the previous round's messages).
    - ``channel``: what every channel does to messages (budgets, noise, delay, drops).
    - ``max_actions``: actions applied per agent turn. ``memory``: "reinject" (private information
      shown every turn) or "scratchpad" (on the first turn; then the agent's own notes).
    - ``leak_audit``: check every agent input for facts private to other agents.
    - ``branch``: one turn of one role played with another message (``engine.plan.branching``).
    - ``member``: the game is member k of a group, the K games a rollout plays on one seed
      (``Grid.group``): the seats' randomness is drawn anew for each member (``GameSpec.policy_seed``)
      and a model's every call is sample k, as a resample of the whole game.
    """

    feedback: str
    max_turns: int
    history: HistoryLength = 1
    topology: Topology | UnsetType = UNSET
    turn_order: TurnOrder | UnsetType = UNSET
    channel: ChannelSpec | UnsetType = UNSET
    max_actions: int | UnsetType = UNSET
    memory: Memory | UnsetType = UNSET
    leak_audit: bool | UnsetType = UNSET
    branch: BranchPoint | UnsetType = UNSET
    member: int | UnsetType = UNSET

    def get(self, name: str, default: Any = None) -> Any:
        value = getattr(self, name)
        return default if value is UNSET else value


class GameSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Everything that defines one game. ``seed`` fixes the game's instance and every scripted choice;
    ``agents`` maps each role, in turn order, to its policy."""

    game_id: int
    seed: int
    params: AnyParams
    agents: dict[str, str]
    options: Options

    @property
    def game(self) -> str:
        return game_of(self.params)

    @property
    def member(self) -> int:
        """The game's place in its group (0 outside groups)."""
        return self.options.get("member", 0)

    @property
    def policy_seed(self) -> int:
        """The seed of the seats' own randomness (scripted choices, the local model server's
        players): the game's seed, drawn again from it for each member of a group after the first,
        so that member 0 is the game a run without groups plays."""
        return game_seed(self.seed, self.member) if self.member else self.seed

    @property
    def max_turns(self) -> int:
        return self.options.max_turns

    def option(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)

    def condition_fields(self) -> dict[str, str]:
        """Everything but the game id and seed, as labels: games with equal fields are replicates."""
        o = self.options
        fields = {"game": self.game}
        fields.update(self.params.labels())
        fields["feedback"] = o.feedback
        fields["T"] = str(o.max_turns)
        fields["h"] = "full" if o.history is None else str(o.history)
        fields.update(self.agents)
        for name in ("topology", "turn_order", "max_actions", "memory", "member"):
            if getattr(o, name) is not UNSET:
                fields[name] = str(getattr(o, name))
        if o.channel is not UNSET:
            fields["channel"] = channel_label(o.channel)
        if o.branch is not UNSET:
            fields["branch"] = o.branch.label()
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
    compared within one seed are compared on the same instances."""
    digest = hashlib.blake2b(f"{run_seed}:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
