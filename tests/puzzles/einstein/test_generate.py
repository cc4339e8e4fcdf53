"""Sampling instances (spec §1.2): the domains have the table's sizes, the sampler draws from them
uniformly, and every instance has one solution, minimal, that neither player reaches alone."""

import collections
import itertools

import pytest

from puzzles.einstein.board import P1_BIN, P2_BIN
from puzzles.einstein.generate import domains, generate

from .helpers import NAME, layouts


def reference_lists(n):
    """The reference's construction: distinct truncated permutations of repeated values, filtered."""
    starts = {x[:n] for x in itertools.permutations([0, 2] * (n // 2 + 1))}
    starts = {s for s in starts if sum(s) in ((n,) if n % 2 == 0 else (n - 1, n + 1))}
    goals = {x[:n] for x in itertools.permutations([0, 1, 2, 3] * (n // 4 + 1)) if set(x[:n]) == {0, 1, 2, 3}}
    anchors = {(0,) + x for x in itertools.product(*(range(i) for i in range(1, n)))}
    splits = {x[: n - 1] for x in itertools.permutations([0, 1, 2] * (n // 3 + 1)) if set(x[: n - 1]) == {0, 1, 2}}
    return starts, goals, anchors, splits


@pytest.mark.parametrize("n, counts", [(4, (6, 24, 6, 6)), (5, (20, 240, 24, 36)), (6, (20, 1080, 120, 150))])
def test_the_domains_have_the_spec_tables_sizes_and_are_the_references(n, counts):
    starts, goals, anchors, splits = domains(n)
    assert (len(starts), len(goals), len(anchors), len(splits)) == counts
    ref_starts, ref_goals, ref_anchors, ref_splits = reference_lists(n)
    assert {tuple(0 if s == P1_BIN else 2 for s in x) for x in starts} == ref_starts
    assert set(goals) == ref_goals and set(anchors) == ref_anchors and set(splits) == ref_splits


def test_the_sampler_draws_only_from_the_domains_and_covers_them():
    starts, goals, anchors, splits = domains(4)
    seen = [collections.Counter() for _ in range(4)]
    for seed in range(3000):
        inst = generate(4, seed)
        parts = (inst.start, inst.goal, inst.anchors, inst.split)
        for counter, domain, part in zip(seen, (starts, goals, anchors, splits), parts):
            assert part in domain
            counter[part] += 1
    for counter, domain in zip(seen, (starts, goals, anchors, splits)):
        assert set(counter) == set(domain)
        expected = 3000 / len(domain)
        assert all(0.6 * expected < c < 1.4 * expected for c in counter.values())  # uniform, loosely


def test_the_same_seed_gives_the_same_instance():
    assert [generate(5, s) for s in range(20)] == [generate(5, s) for s in range(20)]
    assert len({generate(5, s).id for s in range(20)}) > 15


def _constraints(inst, items):
    groundings, relations = [], []
    kinds = {0: "bin", 1: "column", 2: "row", 3: "diagonal"}
    for i in items:
        item = inst.items[i]
        if len(item) == 2:
            groundings.append((item[0], NAME[item[1]]))
        else:
            relations.append((item[0], item[1], kinds[item[2]]))
    return groundings, relations


@pytest.mark.parametrize("n", [4, 5, 6])
def test_the_solution_is_unique_minimal_and_split_between_the_players(n):
    for seed in range(15 if n < 6 else 4):
        inst = generate(n, seed)
        every = range(n)
        found = list(layouts(n, *_constraints(inst, every)))
        assert found == [tuple(NAME[g] for g in inst.goal)]  # unique: the goal
        for dropped in every:  # minimal: without any one constraint, more than one layout
            assert len(list(layouts(n, *_constraints(inst, [i for i in every if i != dropped])))) > 1
        for role in ("player1", "player2"):  # neither alone
            assert len(list(layouts(n, *_constraints(inst, inst.knowledge[role])))) > 1
        assert set(inst.knowledge["player1"]) | set(inst.knowledge["player2"]) == set(every)
        shared = set(inst.knowledge["player1"]) & set(inst.knowledge["player2"])
        assert 0 in shared and len(shared) >= 2  # the grounding and at least one relation held by both
        assert set(inst.knowledge["player1"]) - shared and set(inst.knowledge["player2"]) - shared


@pytest.mark.parametrize("n", [4, 5, 6])
def test_no_block_starts_in_a_destination_or_the_common_bin(n):
    for seed in range(50):
        assert set(generate(n, seed).start) <= {P1_BIN, P2_BIN}
