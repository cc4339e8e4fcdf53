"""Actors: the base mailbox loop, the Environment (game master) and agents with pluggable policies."""

from .agent import AgentActor, ChatLine, Policy, TurnContext, recent_lines
from .base import GAME_TOPIC, Actor, ActorFailed
from .environment import ENVIRONMENT, FEEDBACK, Environment, GameResult, ProtocolError, TurnLog

__all__ = [
    "ENVIRONMENT", "FEEDBACK", "GAME_TOPIC", "Actor", "ActorFailed", "AgentActor", "ChatLine",
    "Environment", "GameResult", "Policy", "ProtocolError", "TurnContext", "TurnLog", "recent_lines",
]
