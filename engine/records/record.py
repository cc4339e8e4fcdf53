"""The record of one game, as written to the results file (one JSON line per game).

``scores`` are the game's graded results (booleans and numbers, aggregated by every report);
``metrics`` is game-owned detail, written as the game gives it.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from bus.channel import Delivery
from bus.messages import USAGE_COUNTS, USAGE_TIMES
from puzzles.referee import TurnLog

from engine.policies.seat import HumanSeat
from engine.plan.spec import GameSpec

Outcome = Literal["success", "failure", "error"]


INFRA_ERROR = "infra_error"


def is_infra_error(record: Any) -> bool:
    """A game lost to the provider or the network (a record or a record key)."""
    return record.error is not None and record.error.kind == INFRA_ERROR


class ErrorInfo(msgspec.Struct, frozen=True):
    """Why a game ended in error. ``actor`` is the address of the actor that raised, if one did."""

    kind: str
    type: str
    message: str
    actor: str | None = None
    where: str | None = None


class UsageTotals(msgspec.Struct, omit_defaults=True):
    """One agent's model calls in one game, summed. ``cost_usd`` is None when a call's price is unknown.

    The fields are ``bus.Usage``'s less the model (``USAGE_COUNTS``, ``USAGE_TIMES``, the cost), in
    the order results.jsonl has always written them."""

    calls: int = 0
    cache_hits: int = 0  # of the calls, those answered from the response cache: no tokens, no cost
    batched: int = 0  # of the calls, those answered through a provider's batch API (--batch), at its price
    cut: int = 0  # of the calls, those whose reply the server cut at the token limit (--max-tokens)
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    message_tokens: int = 0
    latency: float = 0.0
    waited: float = 0.0
    cost_usd: float | None = 0.0

    def add(self, usage) -> None:
        for name in USAGE_COUNTS:
            setattr(self, name, getattr(self, name) + getattr(usage, name))
        for name in USAGE_TIMES:
            setattr(self, name, round(getattr(self, name) + getattr(usage, name), 4))
        if self.cost_usd is not None:
            self.cost_usd = None if usage.cost_usd is None else round(self.cost_usd + usage.cost_usd, 8)


def usage_totals(turn_log: list[TurnLog]) -> dict[str, UsageTotals] | UnsetType:
    """Per role, the model calls of a game; UNSET when no turn came from a model."""
    totals: dict[str, UsageTotals] = {}
    for turn in turn_log:
        if turn.usage is not UNSET:
            totals.setdefault(turn.role, UsageTotals()).add(turn.usage)
    return totals or UNSET


def cut_replies(turn_log: list[TurnLog], roles: list[str]) -> dict[str, int] | UnsetType:
    """Per role, the replies the run's token limit cut and that then could not be read; UNSET when none."""
    if all(turn.cut is UNSET for turn in turn_log):
        return UNSET
    return {r: sum(t.cut is not UNSET for t in turn_log if t.role == r) for r in roles}


class GameRecord(msgspec.Struct, kw_only=True):
    game_id: int
    spec: GameSpec
    outcome: Outcome
    turns: int = 0
    solved_turn: int | None = None
    scores: dict[str, bool | float] = {}
    metrics: dict[str, Any] = {}
    format_errors: dict[str, int] = {}  # per role: replies that could not be read, the model's failure
    # Written only when the run's token limit cut a reply that then could not be read: per role, such
    # replies (the run's doing, not the model's: not in ``format_errors``).
    cut_replies: dict[str, int] | UnsetType = UNSET
    invalid_actions: dict[str, int] = {}
    message_chars: dict[str, list[int]] = {}
    turn_log: list[TurnLog] = []
    error: ErrorInfo | None = None
    # Written only when the game used channel policies: what each channel did to each message.
    channel_log: list[Delivery] | UnsetType = UNSET
    # Written only when a model played: per agent, its calls, tokens, latency and cost.
    usage: dict[str, UsageTotals] | UnsetType = UNSET
    # Written only when a person played a seat: per role, the participant id, the front end, the
    # turns, timeouts and response time (``engine.policies.seat.HumanSeat``; each turn's is in the turn log).
    humans: dict[str, HumanSeat] | UnsetType = UNSET
    # Written only when a model played: how its calls were made (temperature, top_p, max_tokens, seed, structured).
    sampling: dict[str, Any] | UnsetType = UNSET


class _ErrorKind(msgspec.Struct):
    kind: str


class RecordKey(msgspec.Struct):
    """The part of a record that resuming needs; decodes far faster than the whole record."""

    game_id: int
    outcome: str
    error: _ErrorKind | None = None
    scores: dict[str, bool | float] = {}


encode_record = msgspec.json.Encoder().encode
decode_record = msgspec.json.Decoder(GameRecord).decode
decode_key = msgspec.json.Decoder(RecordKey).decode


def unrecordable(record: GameRecord, exc: BaseException) -> GameRecord:
    """The record of a game whose own record could not be written: an error that says why."""
    error = ErrorInfo(kind="unrecordable", type=type(exc).__name__, message=str(exc)[:500])
    return GameRecord(game_id=record.game_id, spec=record.spec, outcome="error", turns=record.turns, error=error)


def encode_storable(record: GameRecord) -> bytes:
    """The record as a JSON line; a record that cannot be encoded becomes an error record, so no
    game's content can stop a run."""
    try:
        return encode_record(record)
    except (UnicodeEncodeError, msgspec.EncodeError, TypeError, ValueError, OverflowError) as exc:
        return encode_record(unrecordable(record, exc))
