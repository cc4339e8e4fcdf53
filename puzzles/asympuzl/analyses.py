"""AsymPuzl's analyses (``asymgames report RUN --analyses``): per condition and role, the strategy
classes and failure signatures that section 5.3 of the long paper reads from transcripts, as every
position game reads them (``puzzles.positions.analyses`` writes the rules down).

In AsymPuzl a role's facts are its clues: Alice's are her shapes (N, or N + D with distractors in
her clues), each mentioned when a message names the shape; Bob's are his shape-color pairs (N, or
N + D), each mentioned when a message names both the shape and the color. So Alice shares all at
once when her first message names every one of her shapes, Bob when his names every pair. Alice
could fix a position once Bob has named its pair, Bob once Alice has named its shape. The
single-agent check has no partner: its games count in the failure signatures only.
"""

from __future__ import annotations

from ..analyses import PlayedGame
from ..positions.analyses import PositionAnalysis
from ..positions.reading import message_kinds as read_kinds
from .params import AsymPuzlParams
from .rules import Replace
from .start import new_game


def analyses() -> PositionAnalysis:
    """An empty analysis of AsymPuzl games (``Records.analyses``)."""
    return PositionAnalysis(AsymPuzlParams, new_game, Replace)


def message_kinds(game: PlayedGame) -> dict[tuple[int, str], str]:
    """Each message's kind (``Records.message_kinds``), as the strategy classes read messages."""
    return read_kinds(game, AsymPuzlParams, new_game)
