"""Each game's rewards for training (``puzzles/<game>/rewards.py``), checked against the game played
again from its seed and the trajectories' actions, measured here on the game's state: the positions
right, the blocks in their bins, the rooms walked, and the TSP percentile counted over every tour."""

from __future__ import annotations

from itertools import pairwise, permutations
from pathlib import Path

import anyio
import msgspec
import pytest

from engine.plan import Grid
from engine.rollouts import Group, Settings, Trajectory, rollouts
from puzzles import GAMES

PLAYS = {  # parameters, rosters: play that solves some games and not others, and in between
    "asympuzl": ({"size": [4]}, [["noisy", "noisy"], ["ignore", "noisy"]]),
    "chain": ({"size": [4]}, [["noisy", "noisy", "noisy"], ["ignore", "noisy", "one_piece"]]),
    "tsp": ({"board": ["generated"]}, [["joint_greedy", "joint_greedy"], ["selfish", "full_share"]]),
    "einstein": ({"blocks": [4]}, [["random_mover", "optimal"], ["random_mover", "random_mover"]]),
}


def play(tmp_path: Path, name: str, k: int = 3, seeds: int = 3, settings: Settings = Settings()) -> list[Group]:
    params, agents = PLAYS[name]
    grid = Grid(game=name, seeds=seeds, agents=agents, params=params)

    async def collect() -> list[Group]:
        async with rollouts(grid, k=k, out=tmp_path / name, settings=settings) as groups:
            return [group async for group in groups]

    return anyio.run(collect)


def measure(name: str, state, role: str) -> float:
    """The share of the way ``role`` has come, measured here."""
    if name in ("asympuzl", "chain"):
        return sum(h == t for h, t in zip(state._hypotheses[role], state.truth)) / len(state.truth)
    if name == "einstein":
        return sum(b == g for b, g in zip(state.board, state.instance.goal)) / state.instance.n
    player = state.players[role]
    return 1.0 if player.submitted is not None else (len(player.visited) - 1) / len(state.rooms)


def replayed(name: str, game_trajectories: list[Trajectory], grid_params):
    """The game played again from its seed with the turns' actions: the state at the end and, per
    (turn, seat), the seat's share of the way after the turn and before it (its previous turn's)."""
    game = GAMES[name]
    first = game_trajectories[0]
    roles = tuple(t.role for t in game_trajectories)
    state = game.rules.new(grid_params, first.seed, roles, game.rules.default_max_turns(grid_params, roles))
    last = {role: measure(name, state, role) for role in roles}
    turns = sorted(((step.turn, roles.index(t.role), t.role, step) for t in game_trajectories for step in t.steps), key=lambda x: x[:2])
    seen = {}
    for turn, _, role, step in turns:
        actions = tuple(msgspec.convert(a, game.rules.Action) for a in step.actions)
        state.step(role, actions)
        now = measure(name, state, role)
        seen[turn, role] = (now, now - last[role])
        last[role] = now
    return state, seen


def tsp_percentile(state, path) -> float:
    rooms = state.rooms
    scores = []
    for middle in permutations(rooms[1:]):
        if middle[0] < middle[-1]:  # each undirected tour once
            scores.append(sum(state.board.joint(a, b) for a, b in pairwise((rooms[0], *middle, rooms[0]))))
    agreed = sum(state.board.joint(a, b) for a, b in pairwise(path))
    return 100 * sum(s <= agreed for s in scores) / len(scores)


@pytest.mark.parametrize("name", sorted(PLAYS))
def test_rewards_match_the_game_measured_again(tmp_path, name):
    groups = play(tmp_path, name)
    assert groups and all(len(g.games) == 3 for g in groups)
    params = GAMES[name].rules.Params(**{k: v[0] for k, v in PLAYS[name][0].items()})
    checked_turns, rewards_seen = 0, set()
    for group in groups:
        for game_id in group.games:
            of_game = [t for t in group.trajectories if t.game_id == game_id]
            state, seen = replayed(name, of_game, params)
            for trajectory in of_game:
                assert trajectory.outcome in ("success", "failure")
                for step in trajectory.steps:
                    progress, change = seen[step.turn, trajectory.role]
                    assert step.progress == pytest.approx(progress, abs=1e-3)
                    assert step.reward == pytest.approx(change, abs=1e-3)
                    checked_turns += 1
                rewards, role = trajectory.rewards, trajectory.role
                assert rewards["reward"] == trajectory.reward
                rewards_seen.add(trajectory.reward)
                if name in ("asympuzl", "chain"):
                    right = {r: measure(name, state, r) for r in state.roles}
                    solved = all(value == 1.0 for value in right.values())
                    assert rewards == {"reward": float(solved), "success": float(solved), "correct": right[role],
                                       "team_correct": pytest.approx(sum(right.values()) / len(right))}
                elif name == "einstein":
                    solved = list(state.board) == list(state.instance.goal)
                    assert rewards["success"] == float(solved) == rewards["reward"]
                    assert rewards["partial"] == pytest.approx(measure(name, state, role))
                    steps = state.solved_step if solved else None
                    assert rewards["step_efficiency"] == (pytest.approx(state.optimal_steps() / steps) if solved else 0.0)
                    failed = sum(1 for who, _, bad in state.history if who == role and bad)
                    assert rewards["failed_steps"] == pytest.approx(-0.1 * failed)
                else:
                    paths = {p.submitted for p in state.players.values()}
                    agreed = paths.pop() if len(paths) == 1 else None
                    tour = agreed is not None and agreed[0] == agreed[-1] and sorted(agreed[:-1]) == sorted(state.rooms)
                    assert rewards["success"] == float(tour)
                    assert rewards["reward"] == (pytest.approx(tsp_percentile(state, agreed) / 100) if tour else 0.0)
    assert checked_turns > 0
    assert len(rewards_seen) >= 2  # the rewards told games apart


def test_a_group_shares_its_seed_and_its_advantages_are_leave_one_out(tmp_path):
    groups = play(tmp_path, "chain", k=4, seeds=2, settings=Settings(reward="correct"))
    advantages = []
    for group in groups:
        assert {t.seed for t in group.trajectories} == {group.seed}
        assert sorted({t.member for t in group.trajectories}) == [0, 1, 2, 3]
        for role in ("alice", "bob", "carol"):
            seat = group.seat(role)
            assert [t.reward for t in seat] == [t.rewards["correct"] for t in seat]
            for t in seat:
                others = [r.reward for r in seat if r is not t]
                assert t.advantage == pytest.approx(t.reward - sum(others) / len(others))
                advantages.append(t.advantage)
    assert any(a != 0 for a in advantages)  # the members played differently
