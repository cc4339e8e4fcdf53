"""The game as the registry loads it: ``GAME``, its rules, faces and records (the game is described in
``__init__.py``)."""

from __future__ import annotations

from ..base import Faces, Game, Records, ResultsFormat, Rules
from .actions import Action, Ask, Grounding, Move, Relation, Share
from .analyses import EinsteinAnalyses
from .board import BIN_NAMES, MAX_BLOCK_NUMBER, ROLES
from .generate import generate
from .optima import optimum
from .params import EinsteinParams
from .prompt import EinsteinPrompter
from .replay import REPLAY
from .rewards import REWARDS
from .rules import EinsteinGame
from .view import EinsteinView
from .scripted import SCRIPTED
from .seat import SEAT
from .trajectories import demonstrations

DEFAULT_ROUNDS = 15  # 30 steps: rounds of (player1, player2)


def new_game(params: EinsteinParams, seed: int, roles: tuple[str, ...], max_turns: int) -> EinsteinGame:
    if tuple(roles) != ROLES:
        raise ValueError(f"the Einstein game's roles are {', '.join(ROLES)}, got {', '.join(roles)}")
    return EinsteinGame(generate(params.blocks, seed), params, max_turns)


def default_max_turns(params: EinsteinParams, roles: tuple[str, ...]) -> int:
    return DEFAULT_ROUNDS


def prepare(params: EinsteinParams, seed: int) -> None:
    """Plan the instance's optimum into the cache (the engine calls this in a worker thread, so the
    game's scores never plan on the event loop)."""
    optimum(generate(params.blocks, seed), params.modes, params.planner_budget, answers=params.seek_answers)


def invalid_examples(state: EinsteinGame, role: str) -> list[Action]:
    """Actions no reply can name (a block or bin that does not exist, a relation of no type): the
    game rejects them without spending the step."""
    big = MAX_BLOCK_NUMBER + 1
    return [
        Move(big, BIN_NAMES[0], BIN_NAMES[1]),
        Move(0, "moon_bin", BIN_NAMES[6]),
        Ask(-1),
        Share(Relation(0, 1, "near")),
        Share(Grounding(big, BIN_NAMES[0])),
    ]


GAME: Game[EinsteinParams, EinsteinView, Action, EinsteinGame] = Game(
    name="einstein",
    rules=Rules(
        Params=EinsteinParams,
        State=EinsteinGame,
        rosters=(ROLES,),
        new=new_game,
        default_max_turns=default_max_turns,
        Action=Action,
        scripted=SCRIPTED,
        invalid_examples=invalid_examples,
        prepare=prepare,
        demonstrations=demonstrations,
    ),
    faces=Faces(
        prompter=EinsteinPrompter(),
        seat=SEAT,
        replay=REPLAY,
        description="two players sort blocks into bins from split constraints, moving, sharing and asking",
    ),
    records=Records(
        score_labels={
            "success": "SR", "partial": "Sub.R", "steps": "steps", "step_ratio": "StepR",
            "step_ratio_all": "StepR (all)", "corrected_rate": "Corr.R",
        },
        # The paper's human study (Table 4) reports the success rate and the step ratio.
        human_study={"success": "SR", "step_ratio": "StepR"},
        # Table 1: a row per action space, with and without the verifier (and CoT); N across.
        table_rows=("actions", "cot", "verifier"),
        score_words={
            "success": "solved", "partial": "share of the blocks in their right bins",
            "steps": "steps taken",
            "step_ratio": "steps taken for each step the reference planner's plan needs (1: as few; below 1: a lucky guess)",
            "step_ratio_all": "the same, counting an unsolved game at the step limit",
            "corrected_rate": "share of steps the verifier corrected",
        },
        # How much each player shares and asks, in solved and unsolved games; Table 1 as the paper prints it.
        analyses=EinsteinAnalyses,
        # The paper's StepR divides by its planner's optimum, which places a block only where the
        # players can know its bin: a guess that happens to land beats it.
        score_notes={
            "step_ratio": "StepR: steps taken over the optimal steps of the paper's planner, which places a block "
                          "only where its bin can be known (guessing only where no information can reach a player); "
                          "a guess that lands can beat it, so StepR can be below 1.",
            "step_ratio_all": "StepR (all): the same, an unsolved game counted at the step limit.",
        },
        rewards=REWARDS,
    ),
    # Version 2: a game solved on its last step failed by default until the paper's rule became the default.
    results_format=ResultsFormat(version=2, default_was={"success_on_last_step": False}),
)

__all__ = ["GAME", "EinsteinGame", "EinsteinParams"]
