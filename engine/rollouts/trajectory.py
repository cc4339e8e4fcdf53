"""What a trainer receives: each seat's trajectory through one game, and the groups of K games
played on one seed. Plain msgspec Structs, written as JSON (``docs/rollouts.md`` shows a line).

A trajectory is one seat of one game: its turns in order (each turn a boundary: the prompt as chat
messages, the reply the seat played, what the game read from it, the turn's reward), the seat's
rewards when the game ended, who played it (the policy; for a model, its name, which for a served
adapter names the weights) with the run's sampling settings, and whether a trainer trains it
(``trainable``: a model seat the rollout trains; never a scripted seat). Token ids and
log-probabilities are there only where the rollout asked for them and the server returned them
(``bus.Tokens``); without them a trajectory is text only.
"""

from __future__ import annotations

from typing import Any

import msgspec

from bus import Tokens


class Weights(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Which weights played a model's seat in a game (a rollout whose trainer swaps them in as it
    trains, ``engine.rollouts.weights``): the version (0 for the weights the run started with, one
    more for each the trainer handed over), the name the server serves it under, and the SHA-256 of
    the adapter's files (``engine.serving.swap.adapter_digest``; None for the base model alone)."""

    version: int
    served: str
    sha256: str | None = None


class ChatMessage(msgspec.Struct, frozen=True):
    """One message of a prompt, in the chat form every trainer takes (``role``: system, user or
    assistant)."""

    role: str
    content: str


class TurnStep(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One turn of a seat. ``messages`` is the prompt the model was sent (empty for a seat no model
    played); ``reply`` the text played; ``message``, ``actions`` and ``rejected`` what the game read
    and did with it (``format_error`` when it could not be read); ``delivered`` the message as each
    partner received it through its channel (a partner missing: nothing reached it, dropped, refused
    or held past the game's end); ``reward`` the turn's reward (the
    change of the seat's progress, as a share, since its previous turn) and ``progress`` the share
    after it. ``advantage``: in a branch run's group, the leave-one-out advantage of the turn the
    branches changed. ``cut``: the reply could not be read because the run's token limit cut it."""

    turn: int
    messages: list[ChatMessage] = []
    reply: str = ""
    message: str = ""
    actions: list[Any] = []
    rejected: list[Any] = []
    format_error: str | None = None
    delivered: dict[str, str] = {}
    cut: bool = False
    reward: float = 0.0
    progress: float = 0.0
    tokens: Tokens | None = None
    advantage: float | None = None


class Trajectory(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One seat of one game. ``reward`` is the seat's reward by the name the rollout chose
    (``rewards`` holds every one the game names); None for a game that ended in an error.
    ``advantage``: the reward less the mean of the same seat's in the group's other games.
    ``weights``: the weights that played the seat, where the trainer swaps them in (else None)."""

    game_id: int
    seed: int
    member: int
    game: str
    role: str
    policy: str
    model: str | None = None
    trainable: bool = False
    sampling: dict[str, Any] = {}
    outcome: str
    reward: float | None = None
    rewards: dict[str, float] = {}
    advantage: float | None = None
    steps: list[TurnStep] = []
    error: str | None = None
    weights: Weights | None = None


class Group(msgspec.Struct, kw_only=True):
    """The games of one group: K games of one condition on one seed (a rollout's members), or the
    K branches of one branch point; every seat of each. ``group`` numbers it in its run;
    ``condition`` is the games' condition without the member (or branch point)."""

    group: int
    seed: int
    condition: str
    games: list[int]
    trajectories: list[Trajectory]

    def seat(self, role: str) -> list[Trajectory]:
        """The trajectories of one seat, one per game, in member order."""
        return [t for t in self.trajectories if t.role == role]


encode_group = msgspec.json.Encoder().encode
decode_group = msgspec.json.Decoder(Group).decode
