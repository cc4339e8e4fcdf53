"""The study's plain parts: the study file (typed, every mistake one line naming its key), the design
(cells, the block's plan, the balancing rule, deterministic by seed), and the journal that a
restart reads back (a cut last line dropped, games counted once)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from engine.records.record import decode_key
from engine.study.design import (
    Cell, NOTHING, agents, block_grid, block_order, block_orders, cells, choose, grid_condition, slot, target,
)
from engine.study.ledger import Done, Ended, Interrupted, Joined, Journal, Left, Started, token_hash
from engine.study.spec import StudyError, load_study, study_from_dict
from puzzles import GAMES

TWO = GAMES["tsp"].rules.rosters[0]


def _study(**changes):
    data = {
        "name": "s", "model": "openai:gpt-4o", "seed": 3,
        "blocks": [{
            "game": "tsp", "rounds": 2, "max_turns": 4,
            "conditions": [{"name": "model", "games": 8}, {"name": "pair", "partner": "person", "games": 4},
                           {"name": "grounded", "games": 8, "params": {"variant": "grounding"}}],
        }],
    }
    data.update(changes)
    return study_from_dict(data)


@pytest.mark.parametrize("change, message", [
    ({"colour": 1}, "unknown key 'colour'"),
    ({"time": {"turn": -1}}, "time.turn: give seconds > 0"),
    ({"time": {"turns": 5}}, "time: unknown key 'turns'"),
    ({"texts": {"end": "Thanks!"}}, "texts.end: the end page must show the completion code"),
    ({"name": "my study"}, "name: 'my study' is not a name"),
    ({"completion_code": "C 1"}, "completion_code"),
    ({"block_order": "random"}, "block_order: 'fixed' or 'balanced'"),
    ({"model": ""}, "model: blocks[0].conditions[0] plays with the model"),
    ({"blocks": []}, "blocks: list at least one block"),
    ({"blocks": [{"game": "chess", "conditions": [{"name": "a"}]}]}, "blocks[0].game: unknown game 'chess'"),
    ({"blocks": [{"game": "tsp", "conditions": [{"name": "a", "partner": "full_share"}]}]}, "blocks[0].conditions[0].partner: 'full_share' is a scripted strategy"),
    ({"blocks": [{"game": "tsp", "conditions": [{"name": "a", "partner": "nobody"}]}]}, "blocks[0].conditions[0].partner:"),
    ({"blocks": [{"game": "tsp", "conditions": [{"name": "a", "partner": "person"}]}]}, "needs a condition with a model partner"),
    ({"blocks": [{"game": "tsp", "seats": ["red"], "conditions": [{"name": "a"}]}]}, "blocks[0].seats: 'red' is not a role"),
    ({"blocks": [{"game": "tsp", "conditions": [{"name": "a"}, {"name": "a"}]}]}, "blocks[0].conditions[1].name"),
    ({"blocks": [{"game": "tsp", "conditions": [{"name": "a", "params": {"rooms": "six"}}]}]}, "blocks[0].conditions[0].params"),
    ({"blocks": [{"game": "tsp", "conditions": [{"name": "a", "feedback": "loud"}]}]}, "blocks[0].conditions[0].feedback"),
    ({"blocks": [{"game": "tsp", "conditions": [{"name": "a", "games": 0}]}]}, "blocks[0].conditions[0].games"),
    ({"blocks": [{"game": "tsp", "conditions": [{"name": "a", "fallback": "b"}]}]}, "only a condition with a person partner falls back"),
])
def test_every_mistake_is_one_line_naming_its_key(change, message):
    with pytest.raises(StudyError) as caught:
        _study(**change)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_scripted_partner_is_for_tests_only_and_a_file_names_itself_in_its_errors(tmp_path):
    blocks = [{"game": "tsp", "conditions": [{"name": "a", "partner": "full_share"}]}]
    assert study_from_dict({"name": "t", "allow_scripted": True, "blocks": blocks}).blocks[0].conditions[0].partner == "full_share"
    path = tmp_path / "study.toml"
    path.write_text('name = "t"\n[[blocks]]\ngame = "tsp"\n[[blocks.conditions]]\nname = "a"\npartner = "full_share"\n')
    with pytest.raises(StudyError, match=r"study.toml: blocks\[0\].conditions\[0\].partner"):
        load_study(path)
    path.write_text("name = \n")
    with pytest.raises(StudyError, match="the study file .* is not TOML"):
        load_study(path)


def test_the_cells_their_agents_and_the_blocks_plan():
    study = _study()
    found = cells(study, 0)
    assert [c.label for c in found] == ["model@light", "model@ghost", "pair", "grounded@light", "grounded@ghost"]
    assert [target(study, c) for c in found] == [4, 4, 4, 4, 4]
    assert agents(study, found[1]) == {TWO[0]: "openai:gpt-4o", TWO[1]: "human"}
    assert agents(study, found[2]) == {TWO[0]: "human", TWO[1]: "human"}
    grid = block_grid(study, 0)
    indices = [grid_condition(study, grid, c) for c in found]
    assert len(set(indices)) == len(found)
    for cell, index in zip(found, indices):  # the plan's game of each cell is the cell's
        spec = grid.spec(index * grid.seeds)
        assert spec.agents == agents(study, cell) and spec.max_turns == 4
        assert spec.params.variant == ("grounding" if cell.condition == "grounded" else "baseline")


def _simulate(study, people: int, block: int = 0):
    """Participants one after another, each playing the block's rounds; every game counts."""
    counts, at_place, sequences = Counter(), Counter(), []
    for _ in range(people):
        had_conditions, had_seats, mine = Counter(), Counter(), []
        for place in range(study.blocks[block].rounds):
            from engine.study.design import Had

            cell = choose(study, block, counts, at_place, Had(had_conditions, had_seats, frozenset()), place)
            if cell is None:
                break
            counts[cell] += 1
            at_place[(place, cell.condition)] += 1
            had_conditions[cell.condition] += 1
            had_seats[cell.seat or TWO[0]] += 1
            mine.append(cell)
        sequences.append(mine)
    return counts, at_place, sequences


def test_the_rule_fills_every_cell_to_its_target_and_spreads_conditions_and_orders():
    study = _study(blocks=[{"game": "tsp", "rounds": 3, "conditions": [{"name": n, "games": 12} for n in "abc"]}], model="m:x")
    counts, at_place, sequences = _simulate(study, 12)
    assert all(counts[c] == target(study, c) for c in cells(study, 0))
    assert all(len({c.condition for c in seq}) == 3 for seq in sequences)  # each person meets every condition once
    for place in range(3):  # and every condition comes first, second and third equally often
        assert {at_place[(place, n)] for n in "abc"} == {4}
    seats = Counter(c.seat for seq in sequences for c in seq)
    assert seats[TWO[0]] == seats[TWO[1]]
    assert _simulate(study, 12)[2] == sequences  # deterministic
    other = _study(blocks=[{"game": "tsp", "rounds": 3, "conditions": [{"name": n, "games": 12} for n in "abc"]}], model="m:x", seed=4)
    assert _simulate(other, 12)[2] != sequences  # ties go by the seed


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_block_orders_are_a_balanced_latin_square(n):
    orders = block_orders(n)
    assert all(sorted(o) == list(range(n)) for o in orders)
    for place in range(n):  # every block at every place equally often
        assert len(set(Counter(o[place] for o in orders).values())) == 1 and len({o[place] for o in orders}) == n
    follows = Counter((o[i], o[i + 1]) for o in orders for i in range(n - 1))
    assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1  # every block after every other equally often


def test_each_participant_gets_the_block_order_given_least():
    blocks = [{"game": "tsp", "conditions": [{"name": "m", "games": 4}]}] * 3
    study = _study(blocks=blocks, block_order="balanced")
    given: Counter = Counter()
    for _ in range(12):
        given[block_order(study, given)] += 1
    assert set(given) == set(block_orders(3)) and set(given.values()) == {2}
    assert block_order(_study(blocks=blocks), Counter()) == (0, 1, 2)  # "fixed", the default: the file's order
    assert block_order(_study(blocks=blocks, block_order="balanced", seed=4), Counter()) in block_orders(3)


def test_a_full_block_gives_no_cell_and_a_slot_is_never_a_seed_played_before():
    study = _study()
    full = Counter({c: target(study, c) for c in cells(study, 0)})
    assert choose(study, 0, full, Counter(), NOTHING, 0) is None
    assert slot(used={0, 1}, had={2, 4}, seeds=6) == 3
    assert slot(used=range(6), had=(), seeds=6) is None


def test_the_journal_reads_back_after_a_kill_and_counts_each_game_once(tmp_path):
    journal = Journal(tmp_path / "journal.jsonl")
    journal.open()
    a, b = "pa", "pb"
    events = [
        Joined(a, token_hash("ta"), "CODEA", 1.0), Joined(b, token_hash("tb"), "CODEB", 2.0),
        Started(0, 5, "pair", None, 5, {TWO[0]: a, TWO[1]: b}, 0, 3.0),
        Ended(0, 5, "failure", "human_absent", b, 4.0),
        Started(0, 6, "model", TWO[0], 6, {TWO[0]: a}, 1, 5.0),
        Interrupted(0, 6, 6.0),
        Started(0, 7, "model", TWO[1], 7, {TWO[1]: a}, 1, 7.0),
        Left(b, "gone", 8.0),
    ]
    for event in events:
        journal.add(event)
    journal.close()
    with (tmp_path / "journal.jsonl").open("ab") as f:
        f.write(b'{"type": "done", "participant": "pa", "at"')  # a kill in the middle of a line
    ledger = journal.read()
    assert ledger.events == len(events)
    person = ledger.person("ta")
    assert person.id == a and ledger.person("nope") is None
    assert person.rounds(0) == 0 and person.unfinished() == 2 and person.walked_away() == 0  # the partner walked away; a restart
    assert person.playing().started.game_id == 7
    assert ledger.people[b].rounds(0) == 1 and ledger.people[b].walked_away() == 1  # their own absence counts as theirs
    assert person.had(0).slots == {5, 6, 7}
    assert ledger.counts(0) == Counter({Cell(0, "pair", None): 1, Cell(0, "model", TWO[1]): 1})  # not the interrupted one
    assert ledger.used(0, 0, 10) == {5, 6, 7}
    assert [g.started.game_id for g in ledger.open_games()] == [7]
    assert ledger.people[b].left.reason == "gone"
    journal.open()
    journal.add(Done(a, 9.0))
    journal.close()
    assert journal.read().people[a].done is not None


def test_the_grid_of_every_cell_plays_every_seed_once():
    """Cells of one block share seeds (paired): slot i of every condition is the same instance."""
    study = _study()
    grid = block_grid(study, 0)
    seeds = {grid.spec(grid_condition(study, grid, c) * grid.seeds + 2).seed for c in cells(study, 0)}
    assert len(seeds) == 1
    assert decode_key  # the block's records are ordinary ones (read by the report as any run's)
    assert list(itertools.islice(grid.specs_for([0]), 1))[0].game == "tsp"


def test_every_example_study_file_loads():
    from pathlib import Path

    from engine.study.spec import load_study

    found = sorted((Path(__file__).resolve().parents[2] / "examples" / "studies").glob("*.toml"))
    assert found
    for path in found:
        assert load_study(path).blocks, path
