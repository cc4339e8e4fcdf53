"""Games: one folder each behind one contract (``puzzles.base``), looked up by name in the registry.

The engine, actors and runners use only what this module exports; a game's own names stay in its
folder.
"""

from .base import (
    ChatLine, FeedbackFn, Game, GameState, InvalidParameter, Policy, Prompter, Rejected, Reply,
    ReplyFormatError, Say, ScriptedFactory, Step, TurnContext,
)
from .referee import GameResult, ProtocolError, Referee, Turn, TurnLog
from .registry import DEFAULT_GAME, FORMAT_1_NAMES, GAMES, AnyParams, game_of, get_game

__all__ = [
    "DEFAULT_GAME", "FORMAT_1_NAMES", "GAMES", "AnyParams", "ChatLine", "FeedbackFn", "Game", "GameResult", "GameState",
    "InvalidParameter", "Policy", "Prompter", "ProtocolError", "Referee", "Rejected", "Reply",
    "ReplyFormatError", "Say", "ScriptedFactory", "Step", "Turn", "TurnContext", "TurnLog", "game_of",
    "get_game",
]
