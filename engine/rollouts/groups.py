"""Groups: the K games of one condition on one seed that a rollout plays (``Grid.group``), and the
K branches of one point of a branch run (``engine.plan.branching``), each with every seat's
trajectory and its group-relative advantage.

A plan with groups numbers its games so that a group's members are neighbours in the condition
order (the member is the grid's innermost axis): game ``(b * K + m) * seeds + i`` is member ``m``
of base condition ``b`` on seed ``i``, and its group is ``b * seeds + i``.

Advantages are leave-one-out (``engine.analysis.leave_one_out``): a trajectory's reward less the
mean of the same seat's rewards in the group's other games; a game that ended in an error has
none and is left out of the others'. A branch run's groups carry, on the turn each branch changed,
that branch's leave-one-out advantage as the branch report computes it (``engine.analysis.advantages``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

from puzzles import Game

from engine.analysis import advantages, condition_of, leave_one_out
from engine.plan import Grid
from engine.records import GameRecord
from engine.rollouts.build import trajectories
from engine.rollouts.trajectory import Group, Trajectory


class GroupIds:
    """A plan's groups by number: which group a game is in, and its members' game ids."""

    def __init__(self, plan: Grid) -> None:
        if plan.group < 1:
            raise ValueError(f"the plan {plan.name!r} plays no groups: give it a group size (group = K)")
        self.k, self.seeds = plan.group, plan.seeds
        self.count = plan.total // plan.group

    def of(self, game_id: int) -> int:
        return (game_id // self.seeds) // self.k * self.seeds + game_id % self.seeds

    def members(self, group: int) -> list[int]:
        base, i = divmod(group, self.seeds)
        return [(base * self.k + m) * self.seeds + i for m in range(self.k)]


def condition_without_member(record: GameRecord) -> str:
    fields = record.spec.condition_fields()
    fields.pop("member", None)
    return " ".join(f"{k}={v}" for k, v in fields.items())


def add_advantages(trajectories: list[Trajectory]) -> None:
    """Each seat's leave-one-out advantage over the games that have a reward (two or more)."""
    seats: dict[str, list[Trajectory]] = defaultdict(list)
    for trajectory in trajectories:
        if trajectory.reward is not None:
            seats[trajectory.role].append(trajectory)
    for seat in seats.values():
        if len(seat) >= 2:
            for trajectory, advantage in zip(seat, leave_one_out([t.reward for t in seat if t.reward is not None])):
                trajectory.advantage = advantage


def make_group(
    number: int, games: Sequence[tuple[GameRecord, bytes | None]], game: Game, *,
    trained: Collection[str] | None = None, reward: str = "reward", tokens: bool = False,
) -> Group:
    """Group ``number`` of its games' records and full transcript lines, in member order."""
    made = [t for record, line in games for t in trajectories(record, line, game, trained=trained, reward=reward, tokens=tokens)]
    add_advantages(made)
    first = games[0][0]
    return Group(group=number, seed=first.spec.seed, condition=condition_without_member(first),
                 games=[record.game_id for record, _ in games], trajectories=made)


def branch_groups(
    games: Sequence[tuple[GameRecord, bytes | None]], game: Game, *,
    trained: Collection[str] | None = None, reward: str = "reward", tokens: bool = False,
) -> list[Group]:
    """A branch run's points with two or more finished branches, each a group of its branches:
    the turn a branch changed carries that branch's advantage (``engine.analysis.advantages``)."""
    credit = {a.branch_game: a.advantage for a in advantages(record for record, _ in games)}
    points: dict[tuple, list[tuple[GameRecord, bytes | None]]] = defaultdict(list)
    for record, line in games:
        point = record.spec.option("branch", None)
        if point is not None and record.game_id in credit:
            points[(condition_of(record), record.spec.seed, point.turn, point.role, point.alternative)].append((record, line))
    groups = []
    for number, key in enumerate(sorted(points)):
        members = sorted(points[key], key=lambda pair: pair[0].game_id)
        made = []
        for record, line in members:
            point = record.spec.options.branch
            for trajectory in trajectories(record, line, game, trained=trained, reward=reward, tokens=tokens):
                for step in trajectory.steps:
                    if trajectory.role == point.role and step.turn == point.turn:  # type: ignore[union-attr]
                        step.advantage = credit[record.game_id]
                made.append(trajectory)
        groups.append(Group(group=number, seed=key[1], condition=key[0], games=[r.game_id for r, _ in members], trajectories=made))
    return groups
