"""Who plays a seat: a policy name becomes a policy (``factory``), and a person in a seat (``seat``)."""

from engine.policies.factory import PolicyFactory, is_human, is_model, models_play, scripted_rng, strategy_of
from engine.policies.seat import (
    DEFAULT_ABSENT_AFTER, DEFAULT_TURN_SECONDS, HUMAN, ChosenAction, FrontEnd, FrontKind, HumanAbsent, HumanPolicy,
    SeatAnswer, SeatTurn, participant_id,
)

__all__ = [
    "DEFAULT_ABSENT_AFTER", "DEFAULT_TURN_SECONDS", "HUMAN", "ChosenAction", "FrontEnd", "FrontKind", "HumanAbsent", "HumanPolicy",
    "PolicyFactory", "SeatAnswer", "SeatTurn", "is_human", "is_model", "models_play", "participant_id", "scripted_rng",
    "strategy_of",
]
