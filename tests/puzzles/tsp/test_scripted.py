"""Traveling Adventurers' scripted players reach the outcomes the specification predicts (spec §5.4),
checked against tours computed independently here."""

from __future__ import annotations

import itertools

import pytest

from engine import Grid
from puzzles.tsp.game import GAME
from puzzles.tsp.params import TspParams

from tests.helpers import play

ROLES = ("light", "ghost")


def game(strategies: tuple[str, str], index: int, **params):
    """Game ``index`` of a run of these players, and the board it was played on."""
    plan = Grid(game="tsp", seeds=index + 1, agents=[list(strategies)], params={k: [v] for k, v in params.items()})
    spec = plan.spec(index)
    return play(spec), GAME.rules.new(spec.params, spec.seed, ROLES, 15)


def joint(state, a: str, b: str) -> int:
    return sum(state.board.weight(r, a, b) for r in ROLES)


def best_score(state) -> int:
    tours = (("L", *o, "L") for o in itertools.permutations(state.rooms[1:]))
    return max(sum(joint(state, a, b) for a, b in zip(t, t[1:])) for t in tours)


@pytest.mark.parametrize("board", ["1", "2", "3", "4", "5", "6"])
def test_full_share_agrees_on_the_optimum_by_the_lights_second_message(board):
    result, state = game(("full_share", "full_share"), 0, board=board)
    assert result.scores["identical"] and result.scores["correct"] and result.scores["optimal"]
    assert result.scores["score"] == best_score(state)
    assert result.turns == 2 and len(result.turn_log) == 3  # light, ghost, light


@pytest.mark.parametrize("rooms", [4, 5, 6, 7])
def test_joint_greedy_takes_a_hop_with_the_most_joint_coins_at_every_room(rooms):
    optimal = 0
    for index in range(8):
        result, state = game(("joint_greedy", "joint_greedy"), index, rooms=rooms)
        assert result.scores["correct"]
        tour = result.metrics["submitted"]["light"]
        for k in range(1, len(tour) - 2):  # the last hop and the way home are forced
            left = [r for r in state.rooms if r not in tour[:k + 1]] + [tour[k + 1]]
            assert joint(state, tour[k], tour[k + 1]) == max(joint(state, tour[k], r) for r in left)
        assert result.scores["optimal"] == (result.scores["score"] == best_score(state))
        optimal += result.scores["optimal"]
    assert optimal < 8 or rooms == 4  # greedy is not always optimal


def test_ibp_node_always_agrees_on_a_round_trip_and_often_the_optimum():
    optimal = 0
    for index in range(30):
        result, state = game(("ibp_node", "ibp_node"), index, board="generated")
        assert result.scores["identical"] and result.scores["correct"], index
        assert result.scores["optimal"] == (result.scores["score"] == best_score(state))
        optimal += result.scores["optimal"]
    assert 0 < optimal <= 30


def own_greedy_hops_coincide(state) -> bool:
    tour = ["L"]
    while len(tour) < len(state.rooms):
        left = sorted(r for r in state.rooms if r not in tour)
        hops = {max(left, key=lambda r, role=role: state.board.weight(role, tour[-1], r)) for role in ROLES}
        if len(hops) > 1:
            return False
        tour.append(hops.pop())
    return True


def test_selfish_players_agree_only_where_their_own_greedy_hops_coincide():
    agreed = 0
    for index in range(20):
        result, state = game(("selfish", "selfish"), index, rooms=4)
        assert result.scores["identical"] == own_greedy_hops_coincide(state), index
        agreed += result.scores["identical"]
    assert agreed < 20


def test_silent_players_time_out_with_every_score_false():
    result, _ = game(("silent", "silent"), 0)
    assert result.outcome == "failure" and result.turns == 15
    assert not any(result.scores[k] for k in ("identical", "correct", "optimal", "s90"))
    assert "turns_to_end" not in result.scores


def test_a_full_share_player_with_a_silent_partner_never_ends():
    result, _ = game(("full_share", "silent"), 0)
    assert result.outcome == "failure" and result.turns == 15 and result.metrics["submitted"]["ghost"] is None
