"""The game as the registry loads it: ``GAME``, its rules, faces and records (the game is described in
``__init__.py``)."""

from __future__ import annotations

from ..base import Faces, Game, Records, Rules
from .analyses import SuggestLengths
from .board import GHOST, LIGHT, board_for_seed, generated_board, paper_board
from .params import TspParams
from .prompter import TspPrompter
from .replay import REPLAY
from .rewards import REWARDS
from .rules import TspAction, TspGame, TspView
from .scripted import SCRIPTED
from .seat import SEAT

MAX_MESSAGES = 15  # per player (spec §2.3)


def make_board(params: TspParams, seed: int):
    params = params.normal()
    if params.generated:
        return generated_board(params.rooms, seed, deviation=params.deviation, filtered=params.filtered)
    if params.board in ("paper", "balanced"):
        return paper_board(board_for_seed(seed, "random" if params.board == "paper" else "balanced"))
    return paper_board(int(params.board))


def new_game(params: TspParams, seed: int, roles: tuple[str, ...], max_turns: int) -> TspGame:
    if tuple(roles) != (LIGHT, GHOST):
        raise ValueError(f"Traveling Adventurers is played by {LIGHT} and {GHOST}, got {', '.join(roles)}")
    return TspGame(make_board(params, seed), params, max_turns, tuple(roles))


def default_max_turns(params: TspParams, roles: tuple[str, ...]) -> int:
    return MAX_MESSAGES


def invalid_examples(state: TspGame, role: str) -> list[TspAction]:
    """Unknown actions, paths that are not lists of rooms, rooms of another house."""
    examples = [
        TspAction("fly", '["L"]'),
        TspAction("end", "the kitchen"),
        TspAction("suggest", '["L", "Z"]'),
        TspAction("agree-inner", "[1, 2]"),
    ]
    if state.params.variant in ("state_tracking", "problem_solving"):
        examples += [TspAction("visit", '"Z"'), TspAction("visit", "7")]
    return examples


GAME: Game[TspParams, TspView, TspAction, TspGame] = Game(
    name="tsp",
    rules=Rules(
        Params=TspParams,
        State=TspGame,
        rosters=((LIGHT, GHOST),),
        new=new_game,
        default_max_turns=default_max_turns,
        Action=TspAction,
        scripted=SCRIPTED,
        invalid_examples=invalid_examples,
    ),
    faces=Faces(
        prompter=TspPrompter(),
        seat=SEAT,
        replay=REPLAY,
        description="Traveling Adventurers: agree on the round trip that collects the most coins together",
    ),
    records=Records(
        score_labels={
            "identical": "Identical", "correct": "Correct", "optimal": "Optimal", "score": "score",
            "percentile": "percentile", "s90": "S>=90", "turns_to_end": "turns to end",
        },
        # The paper's human study (Table 3): Completed is both players submitting the identical path (§3.5).
        human_study={"identical": "Completed", "s90": "Score >= 90", "optimal": "Optimal"},
        score_words={
            "identical": "both of you submitted the same round trip", "correct": "the round trip visits every room once",
            "optimal": "it collects the most coins possible", "score": "coins collected together",
            "percentile": "share of all round trips it beats or equals (%)", "s90": "better than 90% of all round trips",
            "turns_to_end": "turns until the last of you submitted",
        },
        analyses=SuggestLengths,
        rewards=REWARDS,
    ),
)

__all__ = ["GAME", "TspParams"]
