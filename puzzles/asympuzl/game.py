"""The game as the registry loads it: ``GAME``, its rules, faces and records (the game is described in
``__init__.py``)."""

from __future__ import annotations

from ..base import Faces, Game, Records, ResultsFormat, Rules
from ..positions.rules import POSITION_SCORE_WORDS, Format1, feedback_modes, position_sort_keys, position_upgrade
from .analyses import analyses, message_kinds
from .params import AsymPuzlParams
from .prompt import AsymPuzlPrompter
from .replay import REPLAY
from .rewards import REWARDS
from .rules import ROLES, SOLO, AsymPuzlGame, AsymView, Replace
from .scripted import SCRIPTED
from .seat import SEAT
from .start import new_game


def invalid_examples(state: AsymPuzlGame, role: str) -> list[Replace]:
    """Out of range on both sides, an unknown shape, an unknown color."""
    first = state.truth[0]
    size = state.puzzle.size
    return [
        Replace(0, first.shape, first.color), Replace(size + 1, first.shape, first.color),
        Replace(1, "blob", first.color), Replace(1, first.shape, "transparent"),
    ]


def default_max_turns(params: AsymPuzlParams, roles: tuple[str, ...]) -> int:
    """2N, as in the long paper; one attempt for the single-agent check."""
    return 1 if roles == (SOLO,) else 2 * params.size


GAME: Game[AsymPuzlParams, AsymView, Replace, AsymPuzlGame] = Game(
    name="asympuzl",
    rules=Rules(
        Params=AsymPuzlParams,
        State=AsymPuzlGame,
        rosters=(ROLES, (SOLO,)),
        new=new_game,
        default_max_turns=default_max_turns,
        Action=Replace,
        feedback=feedback_modes(lambda state: (state.truth, state.hypotheses())),
        default_feedback="own_detailed",
        scripted=SCRIPTED,
        invalid_examples=invalid_examples,
    ),
    faces=Faces(
        prompter=AsymPuzlPrompter(),
        seat=SEAT,
        replay=REPLAY,
        description="two agents, shapes and colors (or one agent with both views)",
    ),
    records=Records(
        score_labels={"actions_per_position": "actions/pos", "writes_per_position": "writes/pos"},
        score_words=POSITION_SCORE_WORDS,
        sort_keys=position_sort_keys(),
        instance=AsymPuzlGame.instance,
        analyses=analyses,
        rewards=REWARDS,
        message_kinds=message_kinds,
    ),
    # Version 2: the prompt became a parameter (games recorded before were played with the guided
    # prompt) and actions per position count modifications, writes apart.
    results_format=ResultsFormat(
        version=2,
        upgrade=position_upgrade(prompt="guided"),
        saved_before={"prompt": "guided"},
        format_1=Format1(("size", "distractors", "distractors_in"), played_with={"prompt": "guided"}),
    ),
)

__all__ = ["GAME", "AsymPuzlParams"]
