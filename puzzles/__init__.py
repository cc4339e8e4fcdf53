"""Games: one folder each behind one contract (``puzzles.base``), looked up by name in the registry.

The engine, actors and runners use only what this module exports; a game's own names stay in its
folder.
"""

from .analyses import Analysis, AnalysisTable, PlayedGame, PlayedTurn
from .base import (
    AgentModules,
    BestOfN,
    Ending,
    Faces,
    FeedbackFn,
    Game,
    GameState,
    InvalidParameter,
    Prompter,
    Records,
    ReplyGrammar,
    ResultsFormat,
    Rewards,
    Rules,
    Say,
    Secrets,
    Step,
)
from .turn import ChatLine, Rejected, Reply, ReplyFormatError, TurnContext
from .optional import implements
from .policy import Answer, Demonstration, DemonstrationsFn, Policy, SamplingPolicy, ScriptedFactory
from .referee import GameResult, ProtocolError, Referee, Turn, TurnLog
from .registry import DEFAULT_GAME, FORMAT_1_NAMES, GAMES, AnyParams, game_of, get_game

__all__ = [
    "DEFAULT_GAME", "FORMAT_1_NAMES", "GAMES", "AgentModules", "Analysis", "AnalysisTable", "Answer", "AnyParams", "BestOfN", "ChatLine", "Demonstration", "DemonstrationsFn", "Ending", "Faces",
    "FeedbackFn", "Game", "GameResult", "GameState", "InvalidParameter", "Policy", "Prompter", "ProtocolError", "Records", "ReplyGrammar",
    "Referee", "ResultsFormat", "Rewards", "PlayedGame", "PlayedTurn", "Rejected", "Reply", "ReplyFormatError", "Rules", "SamplingPolicy", "Say", "ScriptedFactory", "Secrets",
    "Step", "Turn", "TurnContext", "TurnLog", "game_of", "get_game", "implements",
]
