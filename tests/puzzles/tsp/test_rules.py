"""Traveling Adventurers' rules: each action's effect and every rejection's reason, the end rule,
and the scores checked against an independent computation over all tours."""

from __future__ import annotations

import itertools
import json

import pytest

from puzzles.tsp.game import GAME
from puzzles.tsp.params import TspParams
from puzzles.tsp.rules import TspAction

ROLES = ("light", "ghost")


def new(seed: int = 0, **params):
    return GAME.rules.new(TspParams(**params), seed, ROLES, 15)


def act(name: str, value) -> TspAction:
    return TspAction(name, value if isinstance(value, str) else json.dumps(value))


def all_tour_scores(state) -> list[int]:
    """Every directed round trip from L, scored by hand from both players' weight lists."""
    weights = {}
    for role in ROLES:
        for a, b, w in state.board.weights[role]:
            weights[frozenset((a, b))] = weights.get(frozenset((a, b)), 0) + w
    rooms = state.rooms
    scores = []
    for order in itertools.permutations(rooms[1:]):
        tour = ("L", *order, "L")
        scores.append(sum(weights[frozenset(pair)] for pair in zip(tour, tour[1:])))
    return scores


def score_of(state, tour) -> int:
    return sum(state.board.weight(r, a, b) for r in ROLES for a, b in zip(tour, tour[1:]))


@pytest.mark.parametrize("seed", range(6))
def test_an_agreed_optimal_tour_scores_identical_correct_optimal_and_percentile_100(seed):
    state = new(seed)
    scores = all_tour_scores(state)
    best = max(scores)
    tour = next(
        ("L", *order, "L") for order in itertools.permutations(state.rooms[1:]) if score_of(state, ("L", *order, "L")) == best
    )
    for role in ROLES:
        state.step(role, (act("end", list(tour)),))
    assert state.done()
    got = state.scores()
    assert got["identical"] and got["correct"] and got["optimal"] and got["s90"]
    assert got["score"] == best == state.metrics()["optimum"]
    assert got["percentile"] == 100.0
    assert state.outcome() == "success"


def test_a_worse_tour_is_correct_not_optimal_with_its_percentile_counted_independently():
    state = new(3)
    tours = [("L", *order, "L") for order in itertools.permutations(state.rooms[1:])]
    worst = min(tours, key=lambda t: score_of(state, t))
    middle = sorted(tours, key=lambda t: score_of(state, t))[len(tours) // 2]
    for role in ROLES:
        state.step(role, (act("end", list(middle)),))
    got = state.scores()
    assert got["correct"] and not got["optimal"]
    everything = all_tour_scores(state)  # directed tours: each cycle twice, the same shares
    expected = 100 * sum(s <= score_of(state, middle) for s in everything) / len(everything)
    assert got["percentile"] == pytest.approx(expected, abs=0.01)
    assert got["s90"] == (expected >= 90)
    below = 100 * sum(s < score_of(state, worst) for s in everything) / len(everything)
    assert below == 0 and state.stats.percentile(score_of(state, worst)).below == 0


def test_different_submissions_end_the_game_but_are_not_identical():
    state = new(1)
    state.step("light", (act("end", ["L", "E", "K", "B", "C", "A", "L"]),))
    assert not state.done()
    state.step("ghost", (act("end", ["L", "A", "C", "B", "K", "E", "L"]),))
    assert state.done()
    got = state.scores()
    assert not got["identical"] and not got["correct"] and not got["optimal"]
    assert "score" not in got and "percentile" not in got
    assert state.outcome() == "failure"
    assert state.metrics()["submission_scores"]["light"] == score_of(state, ["L", "E", "K", "B", "C", "A", "L"])


@pytest.mark.parametrize("path", [
    ["L", "E", "K", "B", "C", "L"],  # a room left out
    ["L", "E", "K", "B", "C", "A", "E", "L"],  # a room twice
    ["E", "L", "K", "B", "C", "A", "E"],  # not from the living room
])
def test_an_identical_path_that_is_no_round_trip_is_not_correct(path):
    state = new(2)
    for role in ROLES:
        state.step(role, (act("end", path),))
    got = state.scores()
    assert got["identical"] and not got["correct"] and not got["optimal"] and not got["s90"]
    assert got["score"] == score_of(state, path)  # every pair is a hallway, so it has a score
    assert state.outcome() == "failure"


def test_a_path_through_a_repeated_room_or_an_unknown_room_has_no_score():
    state = new(2)
    path = ["L", "L", "E", "K", "B", "C", "A", "L"]
    for role in ROLES:
        state.step(role, (act("end", path),))
    assert "score" not in state.scores() and state.metrics()["submission_scores"]["light"] is None


def test_a_later_end_replaces_the_submission_and_turns_to_end_counts_rounds():
    state = new(0)
    state.step("light", (act("end", ["L", "E", "K", "B", "C", "A", "L"]),))
    state.step("ghost", ())
    state.step("light", (act("end", ["L", "A", "C", "B", "K", "E", "L"]),))
    state.step("ghost", (act("end", ["L", "A", "C", "B", "K", "E", "L"]),))
    assert state.scores()["identical"] and state.scores()["turns_to_end"] == 2


@pytest.mark.parametrize("action, reason", [
    (TspAction("fly", '["L"]'), "unknown action"),
    (TspAction("end", "the kitchen"), "Python list"),
    (TspAction("end", "[]"), "Python list"),
    (TspAction("suggest", '["L", "Z"]'), "not a room"),
    (TspAction("reject", "[1, 2]"), "Python list"),
    (TspAction("agree-inner", "__import__('os')"), "Python list"),
])
def test_bad_actions_are_rejected_one_by_one_with_a_reason(action, reason):
    state = new(0)
    good = act("agree-inner", ["L", "E"])
    step = state.step("light", (action, good))
    assert step.applied == 1 and len(step.rejected) == 1 and reason in step.rejected[0].reason
    assert state.players["light"].agreements["agree-inner"] == ["['L', 'E']"]


def test_drop_after_error_drops_the_rest_of_the_reply_as_the_reference_does():
    state = new(0, drop_after_error=True)
    step = state.step("light", (act("end", "oops("), act("end", ["L", "E", "K", "B", "C", "A", "L"])))
    assert step.applied == 0 and len(step.rejected) == 2 and "dropped" in step.rejected[1].reason
    assert state.players["light"].submitted is None


def test_visits_move_the_players_own_lists_in_the_state_variants_only():
    state = new(0, variant="state_tracking")
    step = state.step("light", (act("visit", "Kitchen"), act("visit", '"K"'), act("visit", '"Z"')))
    assert step.applied == 1 and [r.reason for r in step.rejected] == ["room K is not in [Remaining]", step.rejected[1].reason]
    view = state.view("light")
    assert view.visited == ("L", "K") and "K" not in view.remaining and "L" in view.remaining
    assert state.view("ghost").visited == ("L",)  # per player: nothing checks that they agree
    baseline = new(0)
    assert baseline.step("light", (act("visit", '"K"'),)).applied == 1
    assert baseline.view("light").visited == ("L",)


def test_history_keeps_the_action_lines_as_the_variant_says():
    for variant, expected in (("baseline", 1), ("grounding", 2), ("state_tracking", 0)):
        state = new(0, variant=variant)
        state.step("light", (act("suggest", ["L", "E"]), act("agree-inner", ["L", "E"])))
        state.step("light", (act("end", ["L", "E", "K", "B", "C", "A", "L"]),))
        assert len(state.view("light").history) == expected, variant
    assert new(0).view("light").history == ()


def test_paper_boards_follow_the_seed_and_generated_boards_have_their_rooms():
    sources = {new(seed).board.source for seed in range(60)}
    assert sources == {f"paper:{k}" for k in range(1, 7)}
    assert [new(seed, board="balanced").board.source for seed in range(6)] == [f"paper:{1 + s % 6}" for s in range(6)]
    assert new(5, board="4").board.source == "paper:4"
    small = new(7, rooms=4)
    assert small.board.source == "generated" and len(small.rooms) == 4
    assert new(7, rooms=4).board == small.board and new(8, rooms=4).board != small.board


def test_parameters_refuse_what_cannot_be_played():
    for bad, field in ((TspParams(board="7"), "board"), (TspParams(rooms=9), "rooms"), (TspParams(board="3", rooms=5), "rooms"),
                       (TspParams(deviation=-1), "deviation")):
        with pytest.raises(ValueError) as caught:
            bad.check()
        assert caught.value.field == field
    assert TspParams(rooms=4).normal().board == "generated"
    assert TspParams(board="paper", deviation=5).normal() == TspParams()
    assert TspParams(rooms=5).labels()["board"] == "generated d=3"
