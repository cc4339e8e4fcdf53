"""The record of one game, as written to the results file (one JSON line per game)."""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from actors.environment import TurnLog
from bus.channel import Delivery

from .spec import GameSpec

Outcome = Literal["success", "failure", "error"]


class ErrorInfo(msgspec.Struct, frozen=True):
    """Why a game ended in error. ``actor`` is the address of the actor that raised, if one did."""

    kind: str
    type: str
    message: str
    actor: str | None = None
    where: str | None = None


class GameRecord(msgspec.Struct, kw_only=True):
    game_id: int
    spec: GameSpec
    outcome: Outcome
    turns: int = 0
    solved_turn: int | None = None
    actions_per_position: dict[str, float] = {}
    position_actions: dict[str, list[int]] = {}
    correct_positions: dict[str, int] = {}
    format_errors: dict[str, int] = {}
    invalid_actions: dict[str, int] = {}
    message_chars: dict[str, list[int]] = {}
    turn_log: list[TurnLog] = []
    error: ErrorInfo | None = None
    # Written only when the game used channel policies: what each channel did to each message.
    channel_log: list[Delivery] | UnsetType = UNSET


class _ErrorKind(msgspec.Struct):
    kind: str


class RecordKey(msgspec.Struct):
    """The part of a record that resuming needs; decodes far faster than the whole record."""

    game_id: int
    outcome: str
    error: _ErrorKind | None = None


encode_record = msgspec.json.Encoder().encode
decode_record = msgspec.json.Decoder(GameRecord).decode
decode_key = msgspec.json.Decoder(RecordKey).decode
