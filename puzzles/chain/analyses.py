"""The chain puzzle's analyses (``asymgames report RUN --analyses``): AsymPuzl's strategy classes
and failure signatures for 2 to 4 agents, as every position game reads them
(``puzzles.positions.analyses`` writes the rules down), so that the long paper's "three or more
agents" follow-up can be read as the two-agent game is.

A role's facts are its clues: Alice's are her shapes, each mentioned when a message names the
shape; every other role's are its links (Bob's shape -> color, Carol's color -> pattern, Dave's
pattern -> material), each mentioned when a message names both values. A role could fix a position
once every other role's fact at that position has been named by someone other than itself (a relay
counts).
"""

from __future__ import annotations

from ..analyses import PlayedGame
from ..positions.analyses import PositionAnalysis
from ..positions.reading import message_kinds as read_kinds
from .params import ChainParams
from .rules import ChainReplace
from .start import new_game


def analyses() -> PositionAnalysis:
    """An empty analysis of chain games (``Records.analyses``)."""
    return PositionAnalysis(ChainParams, new_game, ChainReplace)


def message_kinds(game: PlayedGame) -> dict[tuple[int, str], str]:
    """Each message's kind (``Records.message_kinds``), as the strategy classes read messages."""
    return read_kinds(game, ChainParams, new_game)
