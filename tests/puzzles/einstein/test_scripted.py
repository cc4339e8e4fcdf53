"""The scripted players (spec §5.6) over many seeds: what each achieves, from its own view only."""

import random
import statistics

import pytest

from puzzles.turn import TurnContext
from puzzles.einstein.game import GAME
from puzzles.einstein.actions import Ask, Move, Pass, Share, Unreadable, read_action
from puzzles.einstein.params import EinsteinParams
from puzzles.testing import run_now

from .helpers import play

MODES = ["share_ask", "share", "ask", "none", "share_ask/ask", "share/ask", "ask/none", "share_ask/none"]


def lucky(state):
    return sum(c["lucky_guesses"] for c in state.metrics()["actions"].values())


@pytest.mark.parametrize("n", [4, 5, 6])
@pytest.mark.parametrize("actions", MODES)
def test_optimal_solves_every_instance_and_never_beats_the_planner_without_luck(n, actions):
    params = EinsteinParams(blocks=n, actions=actions)
    ratios = []
    for seed in range(40):
        state = play(params, seed, "optimal")
        assert state.outcome() == "success", (state.instance.id, actions)
        best = state.optimal_steps()
        if best is None:
            continue
        ratios.append(state.solved_step / best)
        if not lucky(state):
            assert state.solved_step >= best
    if actions in ("share_ask", "share", "ask"):
        assert 1.0 <= statistics.mean(ratios) <= 1.25  # near the planner; spec: a greedy player lands at 1.1-1.5


def test_optimal_guesses_only_where_no_information_can_come():
    for seed in range(40):
        state = play(EinsteinParams(blocks=5, actions="share_ask"), seed, "optimal")
        assert all(c["guesses"] == 0 for c in state.metrics()["actions"].values())
    guessed = [play(EinsteinParams(blocks=5, actions="none"), seed, "optimal") for seed in range(40)]
    assert all(s.outcome() == "success" for s in guessed)
    assert sum(s.metrics()["errors"]["player1"]["wrong_random_guess"] for s in guessed) > 0


def test_share_everything_shares_what_the_partner_holds_too():
    redundant = 0
    for seed in range(40):
        state = play(EinsteinParams(blocks=5, actions="share"), seed, "share_everything")
        assert state.outcome() == "success"
        redundant += sum(e["redundant_share"] for e in state.metrics()["errors"].values())
        shares = sum(c["shares"] for c in state.metrics()["actions"].values())
        assert shares >= len(state.instance.knowledge["player1"]) - 1
    assert redundant >= 40  # the grounding of block0, held by both, is shared in every game


def test_seek_only_shares_only_to_answer_and_solves_in_the_ask_modes():
    for actions in ("ask", "share_ask"):
        for seed in range(30):
            state = play(EinsteinParams(blocks=5, actions=actions), seed, "seek_only")
            assert state.outcome() == "success"
            history = state.history
            for i, (role, action, failed) in enumerate(history):
                if isinstance(action, Share):
                    before = history[i - 1][1]
                    assert isinstance(before, Ask) and history[i - 1][0] != role


def test_random_moves_rarely_solve():
    for n, most in ((4, 0.3), (6, 0.05)):
        states = [play(EinsteinParams(blocks=n), seed, "random_mover") for seed in range(60)]
        rate = sum(s.outcome() == "success" for s in states) / len(states)
        assert rate <= most
        assert statistics.mean(s.placed() / n for s in states) < 0.8
        assert all(isinstance(action, (Move, Pass)) for s in states for _, action, _ in s.history)


def test_the_same_seed_plays_the_same_game():
    for strategy in GAME.rules.scripted:
        first = [play(EinsteinParams(blocks=5), seed, strategy).history for seed in range(5)]
        again = [play(EinsteinParams(blocks=5), seed, strategy).history for seed in range(5)]
        assert first == again


def test_a_strategy_acts_on_its_prompt_alone():
    """The reply to a view read back from the rendered prompt is the reply to the view itself."""
    for seed in range(10):
        rng = random.Random(seed)
        policies = {name: GAME.rules.scripted[name] for name in GAME.rules.scripted if name != "random_mover"}

        def hook(state, role, action):
            view = state.view(role)
            context = TurnContext(game_id=0, role=role, turn=len(view.history) // 2 + 1, max_turns=15, view=view, feedback=None, conversation=())
            read, _ = GAME.faces.prompter.read(*GAME.faces.prompter.render(context))
            for make in policies.values():
                assert run_now(make(role, rng).reply(context)) == run_now(make(role, rng).reply(read))

        play(EinsteinParams(blocks=5, actions=rng.choice(MODES)), seed, "optimal", hook=hook)


def test_replies_are_in_the_references_format():
    state = GAME.rules.new(EinsteinParams(), 0, ("player1", "player2"), 15)
    context = TurnContext(game_id=0, role="player1", turn=1, max_turns=15, view=state.view("player1"), feedback=None, conversation=())
    text = run_now(GAME.rules.scripted["optimal"]("player1", random.Random(0)).reply(context)).text
    assert text.startswith("<THINK>") and "</THINK><ACTION>" in text and text.endswith("</ACTION>")
    assert not isinstance(read_action(text.split("<ACTION>")[1][: -len("</ACTION>")]), Unreadable)
