"""The game as the registry loads it: ``GAME``, its rules, faces and records (the game is described in
``__init__.py``)."""

from __future__ import annotations

from ..base import Faces, Game, Records, ResultsFormat, Rules
from ..positions.rules import POSITION_SCORE_WORDS, Format1, feedback_modes, position_sort_keys, position_upgrade
from .analyses import analyses, message_kinds
from .params import ChainParams
from .prompt import ChainPrompter
from .replay import REPLAY
from .rewards import REWARDS
from .rules import CHAIN_ROLES, ChainGame, ChainReplace, ChainView
from .scripted import SCRIPTED
from .seat import SEAT
from .start import new_game


def invalid_examples(state: ChainGame, role: str) -> list[ChainReplace]:
    """Out of range on both sides, and an unknown word for each attribute."""
    truth = state.truth[0]
    size = state.puzzle.size
    bad = [ChainReplace(0, truth), ChainReplace(size + 1, truth)]
    for k in range(len(truth)):
        bad.append(ChainReplace(1, truth[:k] + ("blob",) + truth[k + 1:]))
    return bad


def default_max_turns(params: ChainParams, roles: tuple[str, ...]) -> int:
    return 2 * params.size


GAME: Game[ChainParams, ChainView, ChainReplace, ChainGame] = Game(
    name="chain",
    rules=Rules(
        Params=ChainParams,
        State=ChainGame,
        rosters=tuple(CHAIN_ROLES[:k] for k in range(2, len(CHAIN_ROLES) + 1)),
        new=new_game,
        default_max_turns=default_max_turns,
        Action=ChainReplace,
        feedback=feedback_modes(lambda state: (state.truth, state.hypotheses())),
        default_feedback="own_detailed",
        scripted=SCRIPTED,
        invalid_examples=invalid_examples,
    ),
    faces=Faces(
        prompter=ChainPrompter(),
        seat=SEAT,
        replay=REPLAY,
        description="2 to 4 agents, each holding one link of a chain of attributes",
    ),
    records=Records(
        score_labels={"actions_per_position": "actions/pos", "writes_per_position": "writes/pos"},
        score_words=POSITION_SCORE_WORDS,
        sort_keys=position_sort_keys(),
        instance=ChainGame.instance,
        analyses=analyses,
        rewards=REWARDS,
        message_kinds=message_kinds,
    ),
    # Version 2: actions per position count modifications, writes apart.
    results_format=ResultsFormat(version=2, upgrade=position_upgrade(), format_1=Format1(("size",))),
)

__all__ = ["GAME", "ChainParams"]
