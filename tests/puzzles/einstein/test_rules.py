"""The game's step rules (spec §2) against a plain second implementation, and what a step returns."""

import random

import msgspec
import pytest

from puzzles.base import Say
from puzzles.turn import TurnContext
from puzzles.einstein.game import GAME
from puzzles.einstein.actions import Ask, Grounding, Move, Pass, Relation, Share, Unreadable, action_text
from puzzles.einstein.board import BIN_NAMES, instance_from_id
from puzzles.einstein.params import EinsteinParams
from puzzles.einstein.planner import plan
from puzzles.einstein.rules import EinsteinGame
from puzzles.testing import run_now

from .helpers import play
from .model import Model, as_struct

ROLES = ("player1", "player2")


def random_action(rng, state, role):
    n = state.instance.n
    pick = rng.random()
    if pick < 0.3:
        return Move(rng.randrange(n + 1), rng.choice(BIN_NAMES), rng.choice(BIN_NAMES))
    if pick < 0.5:
        if rng.random() < 0.7:
            return Share(as_struct(rng.choice(state.instance.items)))
        return Share(Relation(*sorted(rng.sample(range(n), 2)), rng.choice(["row", "column", "diagonal", "bin"])))
    if pick < 0.65:
        return Ask(rng.randrange(n + 1))
    if pick < 0.75:
        return Pass()
    if pick < 0.8:
        return Unreadable("move it")
    # a board-aware move: something within reach, to any bin within reach
    board = state.board
    mine = [b for b in range(n) if BIN_NAMES[board[b]] in state.view(role).reach]
    if not mine:
        return Pass()
    b = rng.choice(mine)
    return Move(b, BIN_NAMES[board[b]], rng.choice(state.view(role).reach))


@pytest.mark.parametrize("actions", ["share_ask", "share", "ask", "none", "share_ask/ask", "ask/share"])
@pytest.mark.parametrize("random_guess", [True, False])
def test_every_step_is_valid_exactly_when_the_second_implementation_says(actions, random_guess):
    params = EinsteinParams(blocks=4, actions=actions, random_guess=random_guess)
    kinds = set()
    for seed in range(12):
        rng = random.Random(seed)
        state = GAME.rules.new(params, seed, ROLES, 15)
        model = Model(state.instance, params.modes, random_guess=random_guess)
        strategies = {r: GAME.rules.scripted[rng.choice(list(GAME.rules.scripted))](r, random.Random(seed)) for r in ROLES}
        while not state.done():
            role = ROLES[state.steps % 2]
            if rng.random() < 0.5:
                ctx = TurnContext(game_id=0, role=role, turn=1, max_turns=15, view=state.view(role), feedback=None, conversation=())
                action = GAME.faces.prompter.parse(run_now(strategies[role].reply(ctx)).text, ctx).actions[0]
            else:
                action = random_action(rng, state, role)
            valid, guessed = model.step(role, action)
            step = state.step(role, (action,))
            who, done, failed = state.history[-1]
            assert (who, done) == (role, action)
            assert failed == (not valid and not model.solved()), (action, state.instance.id)
            assert [BIN_NAMES[b] for b in state.board] == model.board
            for r in ROLES:
                assert list(state.view(r).knowledge) == model.explicit[r]
            assert step.applied == (1 if valid or guessed else 0)
            assert len(step.rejected) == (0 if valid or guessed else 1)
            if valid and isinstance(action, (Share, Ask)):
                assert step.say == (Say(action_text(action)),)
            else:
                assert step.say == ()
            kinds.add((type(action).__name__, valid, guessed))
    assert {("Move", True, False), ("Move", False, False), ("Pass", False, False)} <= kinds
    if actions != "none":
        assert ("Share", True, False) in kinds
    if random_guess:
        assert ("Move", False, True) in kinds
    if "ask" in actions:
        assert ("Ask", True, False) in kinds


def _game(game_id="4_0202_3120_0002_210", **params):
    return EinsteinGame(instance_from_id(game_id), EinsteinParams(**params), 15)


def test_a_pass_and_an_unreadable_reply_are_failed_passes_that_spend_the_step():
    state = _game()
    state.step("player1", (Pass(),))
    state.step("player2", (Unreadable("I move block1"),))
    assert state.steps == 2
    assert [(e.mine, e.text, e.failed) for e in state.view("player1").history] == [
        (True, "pass the turn", True), (False, "pass the turn", True),
    ]


def test_the_reference_s_reward_is_minus_a_tenth_per_failed_step_of_each_player():
    state = _game()
    state.step("player1", (Pass(),))
    state.step("player2", (Unreadable("I move block1"),))
    state.step("player1", (Pass(),))
    assert state.metrics()["reward"] == {"player1": -0.2, "player2": -0.1}


def test_only_the_first_action_of_a_turn_is_taken():
    state = _game()
    step = state.step("player1", (Pass(), Ask(1)))
    assert state.steps == 1 and len(step.rejected) == 2 and "only the first" in step.rejected[1].reason


def test_an_empty_turn_is_a_failed_pass():
    state = _game()
    step = state.step("player1", ())
    assert state.steps == 1 and state.history[-1][2] and len(step.rejected) == 1


def test_actions_no_reply_can_name_are_rejected_without_spending_the_step():
    state = _game()
    before = msgspec.json.encode([state.view(r) for r in ROLES])
    for action in GAME.rules.invalid_examples(state, "player1"):
        step = state.step("player1", (action,))
        assert step.applied == 0 and len(step.rejected) == 1 and step.rejected[0].reason
    assert state.steps == 0 and msgspec.json.encode([state.view(r) for r in ROLES]) == before


def test_a_lucky_guess_reaches_the_board_but_is_logged_as_failed_unless_fixed():
    # 4_0202_3120_0002_210: block3 starts in player2_bin, goal top_left (digit 0), and only player1
    # holds the relation that places it
    for fix in (False, True):
        state = _game(fix_guess_flag=fix)
        assert state.minds["player2"].know[3] >= 4
        state.step("player1", (Pass(),))
        step = state.step("player2", (Move(3, "player2_bin", "top_left_bin"),))
        assert state.board[3] == 0 and step.applied == 1 and step.rejected == ()
        assert state.history[-1][2] is (not fix)
        assert state.minds["player2"].know[3] == 0  # learned from the board
        assert state.metrics()["actions"]["player2"]["lucky_guesses"] == 1


def test_a_wrong_guess_is_refused_and_a_guess_into_the_common_bin_is_taken():
    state = _game()
    state.step("player1", (Pass(),))
    step = state.step("player2", (Move(3, "player2_bin", "top_right_bin"),))
    assert state.board[3] == 5 and step.applied == 0 and "refused" in step.rejected[0].reason
    state.step("player1", (Pass(),))
    step = state.step("player2", (Move(3, "player2_bin", "commonbin"),))
    assert state.board[3] == 6 and step.applied == 1 and state.history[-1][2]


def test_without_random_guesses_an_invalid_move_never_reaches_the_board():
    state = _game(random_guess=False)
    state.step("player1", (Pass(),))
    state.step("player2", (Move(3, "player2_bin", "top_left_bin"),))
    assert state.board[3] == 5


def test_a_seek_mode_answer_is_valid_only_right_after_the_ask():
    # 4_0202_3120_0002_210: relation 3 (block2, block3) is player1's only; player2 cannot place block3
    state = _game(actions="ask")
    item = as_struct(state.instance.items[3])
    assert item in state.view("player1").knowledge and state.minds["player2"].know[3] >= 4
    state.step("player1", (Share(item),))
    assert state.history[-1][2]  # not asked: failed
    state.step("player2", (Ask(3),))
    assert not state.history[-1][2]
    step = state.step("player1", (Share(item),))
    assert not state.history[-1][2] and step.say
    assert state.view("player2").knowledge[-1] == item and state.minds["player2"].know[3] < 4
    no_answers = _game(actions="ask", seek_answers=False)
    no_answers.step("player1", (Pass(),))
    no_answers.step("player2", (Ask(3),))
    no_answers.step("player1", (Share(item),))
    assert no_answers.history[-1][2]


def test_an_item_both_hold_may_be_shared_once_and_then_never_again():
    state = _game()
    common = Share(Grounding(0, BIN_NAMES[state.instance.goal[0]]))
    state.step("player1", (common,))
    assert not state.history[-1][2]
    assert state.view("player2").knowledge.count(common.item) == 1  # not appended twice
    state.step("player2", (common,))
    assert state.history[-1][2]  # marked shared for both
    assert state.metrics()["errors"]["player1"]["redundant_share"] == 1


def test_the_game_ends_after_thirty_steps_and_a_solve_on_the_last_one_succeeds_unless_the_code_rule_is_asked_for():
    inst_id = "4_2002_0132_0001_012"  # optimum 4
    found = plan(instance_from_id(inst_id), ("share_ask", "share_ask"), with_path=True)
    assert found.steps == 4
    for allowed in (None, False, True):  # None: the default, the paper's "completed within 30 steps"
        state = _game(inst_id) if allowed is None else _game(inst_id, success_on_last_step=allowed)
        for i in range(26):
            state.step(ROLES[i % 2], (Pass(),))
        for step in found.path:
            assert step.kind == "move"
            b, src, dst = step.args
            state.step(step.role, (Move(b, BIN_NAMES[src], BIN_NAMES[dst]),))
        assert state.done() and state.solved() and state.steps == 30
        assert state.outcome() == ("failure" if allowed is False else "success")
        assert state.scores().get("step_ratio") == (None if allowed is False else 30 / 4)
    unsolved = _game(inst_id)
    for i in range(30):
        unsolved.step(ROLES[i % 2], (Pass(),))
    assert unsolved.done() and unsolved.outcome() == "failure"
    scores = unsolved.scores()
    assert scores["success"] is False and "step_ratio" not in scores and scores["step_ratio_all"] == 30 / 4
    assert scores["partial"] == 0 and scores["steps"] == 30
    assert unsolved.step("player1", (Pass(),)).rejected[0].reason == "the game is over"


def test_scores_of_a_solved_game():
    state = play(EinsteinParams(blocks=4), 3, "optimal")
    scores = state.scores()
    best = state.optimal_steps()
    assert scores["success"] is True and scores["partial"] == 1.0
    assert scores["step_ratio"] == scores["step_ratio_all"] == scores["steps"] / best
    metrics = state.metrics()
    assert metrics["game_id"] == state.instance.id and metrics["optimal_steps"] == best
    counts = metrics["actions"]
    assert sum(c["steps"] for c in counts.values()) == state.steps


def test_a_view_shows_the_partners_items_only_once_shared():
    state = _game()
    p2_only = [as_struct(state.instance.items[i]) for i in state.instance.knowledge["player2"] if i not in state.instance.knowledge["player1"]]
    assert p2_only and not set(p2_only) & set(state.view("player1").knowledge)
    assert state.private("player2") == tuple(as_struct(state.instance.items[i]) for i in state.instance.knowledge["player2"])
    state.step("player1", (Pass(),))
    state.step("player2", (Share(p2_only[0]),))
    assert state.view("player1").knowledge[-1] == p2_only[0]
