"""The training trajectories (the paper's App. B): every chosen plan plays out in the game as a valid,
solved game; the first is the planner's optimum; the others are distinct and at most two steps
longer; none passes twice in a row; where the players can both share and ask, both are used, and
where they guess, some plan tries a wrong bin first; the demonstrations' replies read back."""

import pytest

from puzzles.einstein.actions import Move, Pass
from puzzles.einstein.board import BIN_OF, ROLES
from puzzles.einstein.generate import generate
from puzzles.einstein.optima import optimum
from puzzles.einstein.params import EinsteinParams
from puzzles.einstein.prompt import parse_reply
from puzzles.einstein.rules import EinsteinGame
from puzzles.einstein.trajectories import cost, demonstrations, plans, turns

MODES = ("share_ask", "share", "ask", "none")
SEEDS = range(40, 48)


def played(instance, mode, path):
    """The plan played step by step in the game: the game, and whether each step failed."""
    game = EinsteinGame(instance, EinsteinParams(blocks=instance.n, actions=mode), 15)
    failed = []
    for i, (role, action, _) in enumerate(turns(path, instance)):
        assert role == ROLES[i % 2], "the plan does not alternate the players"
        assert not game.done(), "the game ended before the plan did"
        game.step(role, (action,))
        failed.append(game.history[-1][2])
    return game, failed


@pytest.mark.parametrize("n", [4, 5, 6])
@pytest.mark.parametrize("mode", MODES)
def test_every_chosen_plan_is_a_valid_solved_game_within_two_steps_of_the_optimum(n, mode):
    for seed in SEEDS:
        instance = generate(n, seed)
        found = plans(instance, (mode, mode), 5, seed)
        best = optimum(instance, (mode, mode), 2_000_000).steps
        assert found.optimum == best and found.chosen
        assert cost(found.chosen[0]) == best
        assert len(set(found.chosen)) == len(found.chosen)
        for path in found.chosen:
            assert best <= cost(path) <= best + 2
            game, failed = played(instance, mode, path)
            assert game.solved() and game.steps == cost(path)
            moves = [a for _, a, _ in turns(path, instance)]
            # only guesses fail (the reference logs every guess as failed), never a move, share or ask
            for action, bad, step in zip(moves, failed, [s for p in path for s in ([p, p] if p.kind == "ask" else [p])]):
                assert not bad or step.kind in ("guess", "pass"), (instance.id, step)
            passes = [isinstance(a, Pass) for a in moves]
            assert not any(a and b for a, b in zip(passes, passes[1:]))


def test_plans_mix_sharing_and_asking_where_both_are_allowed():
    asks = shares = 0
    for seed in SEEDS:
        for path in plans(generate(5, seed), ("share_ask", "share_ask"), 5, seed).chosen:
            asks += sum(s.kind == "ask" for s in path)
            shares += sum(s.kind == "share" for s in path)
    assert asks > 0 and shares > 0
    assert 1 / 3 < asks / shares < 3


def test_where_players_guess_some_plans_try_a_wrong_bin_first():
    wrong = 0
    for seed in SEEDS:
        instance = generate(5, seed)
        for path in plans(instance, ("none", "none"), 5, seed).chosen:
            for role, action, _ in turns(path, instance):
                if isinstance(action, Move) and BIN_OF[action.target] < 4 and BIN_OF[action.target] != instance.goal[action.block]:
                    wrong += 1
    assert wrong > 0


@pytest.mark.parametrize("cot", [True, False])
def test_demonstrations_are_the_plans_as_replies_with_or_without_reasoning(cot):
    params = EinsteinParams(blocks=4, actions="share_ask", cot=cot)
    instance = generate(4, 7)
    shown = demonstrations(params, 7, 5, 15)
    found = plans(instance, ("share_ask", "share_ask"), 5, 7)
    assert [d.label for d in shown][0] == "optimal" and len(shown) == len(found.chosen)
    for demo, path in zip(shown, found.chosen):
        expected = turns(path, instance)
        replies = {role: list(demo.replies[role]) for role in ROLES}
        for role, action, _ in expected:
            text = replies[role].pop(0)
            assert text.startswith("<THINK>") == cot and text.endswith("</ACTION>")
            assert parse_reply(text).actions == (action,)
        assert replies == {"player1": [], "player2": []}


def test_the_same_seed_gives_the_same_demonstrations():
    params = EinsteinParams(blocks=5, actions="ask")
    assert demonstrations(params, 3, 5, 15) == demonstrations(params, 3, 5, 15)
