"""Actors: the base mailbox loop, the Environment (game master) and agents with pluggable policies."""

from puzzles.turn import ChatLine, TurnContext
from puzzles.policy import Answer, Policy
from puzzles.referee import GameResult, ProtocolError, TurnLog

from .agent import AgentActor, recent_lines
from .base import GAME_TOPIC, Actor, ActorFailed, run_actors
from .environment import ENVIRONMENT, FEEDBACK, Environment

__all__ = [
    "ENVIRONMENT", "FEEDBACK", "GAME_TOPIC", "Actor", "ActorFailed", "AgentActor", "Answer", "ChatLine",
    "Environment", "GameResult", "Policy", "ProtocolError", "TurnContext", "TurnLog", "recent_lines", "run_actors",
]
