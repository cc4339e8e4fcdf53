"""Every game parameter has a bound, checked with a one-line error naming it from the Python API,
a grid's TOML and the command line; the docs quote the bounds the code checks."""

import typing
from pathlib import Path

import msgspec
import pytest

from engine.plan.grid import MAX_TURNS, Grid, grid_from_dict
from puzzles import GAMES, InvalidParameter
from puzzles.asympuzl.rules import MAX_DISTRACTORS, MAX_PIECES, MIN_SIZE
from puzzles.chain.params import MAX_SIZE as CHAIN_MAX_SIZE
from puzzles.chain.rules import MAX_AGENTS as CHAIN_MAX_AGENTS
from puzzles.einstein.board import MAX_BLOCKS, MIN_BLOCKS
from puzzles.einstein.params import DEFAULT_BUDGET, MAX_BUDGET, MAX_CANDIDATES
from puzzles.tsp.params import MAX_DEVIATION, MAX_ROOMS, MIN_ROOMS
from runners.concurrent import main as run_main

DOCS = Path(__file__).resolve().parents[2] / "docs"

# The range of every integer parameter of every game: a parameter added without one fails below.
BOUNDS = {
    ("asympuzl", "size"): (MIN_SIZE, MAX_PIECES),
    ("asympuzl", "distractors"): (0, MAX_DISTRACTORS),
    ("chain", "size"): (MIN_SIZE, CHAIN_MAX_SIZE),
    ("tsp", "rooms"): (MIN_ROOMS, MAX_ROOMS),
    ("tsp", "deviation"): (0, MAX_DEVIATION),
    ("einstein", "blocks"): (MIN_BLOCKS, MAX_BLOCKS),
    ("einstein", "candidates"): (2, MAX_CANDIDATES),
    ("einstein", "planner_budget"): (1, MAX_BUDGET),
}


def _fields():
    for name in GAMES:
        for field in msgspec.structs.fields(GAMES[name].rules.Params):
            yield name, field


def _out_of_range():
    """(game, field, kind, a value out of range) for every parameter of every game."""
    cases = []
    for game, field in _fields():
        if field.type is int:
            low, high = BOUNDS.get((game, field.name), (None, None))
            cases += [(game, field.name, "int", low - 1 if low is not None else None), (game, field.name, "int", high + 1 if high is not None else None)]
        elif field.type is bool:
            cases.append((game, field.name, "bool", "bogus"))
        else:
            cases.append((game, field.name, "choice", "bogus"))
    return cases


CASES = _out_of_range()


def test_every_integer_parameter_has_a_range_and_its_ends_are_accepted():
    integers = {(game, f.name) for game, f in _fields() if f.type is int}
    assert integers == set(BOUNDS)
    for (game, name), ends in BOUNDS.items():
        for value in ends:
            GAMES[game].rules.Params(**{name: value}).check()


def test_every_other_parameter_is_a_choice_or_a_switch():
    for game, field in _fields():
        assert field.type in (int, bool, str) or typing.get_origin(field.type) is typing.Literal, (game, field.name)


@pytest.mark.parametrize("game, name, kind, value", CASES, ids=[f"{g}-{n}-{v}" for g, n, _, v in CASES])
def test_a_value_out_of_range_is_refused_in_one_line_naming_the_parameter(game, name, kind, value, tmp_path, capsys):
    assert value is not None, f"{game} {name} has no bound"
    if kind != "bool":  # the Python API: a switch's type is the struct's to check
        with pytest.raises(InvalidParameter) as caught:
            GAMES[game].rules.Params(**{name: value}).check()
        assert caught.value.field == name and "\n" not in str(caught.value)
    with pytest.raises(ValueError) as caught:  # a grid's TOML
        grid_from_dict({"game": game, name: value})
    assert name in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(InvalidParameter):  # a grid made in Python
        Grid(game=game, params={name: [value]}).validate()
    out = tmp_path / "run"
    flag = "--" + name.replace("_", "-")
    with pytest.raises(SystemExit) as exit_info:  # the command line
        run_main(["--game", game, flag, str(value), "--games", "1", "--out", str(out), "--no-dashboard"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and f"argument {flag}" in err
    assert not out.exists()


@pytest.mark.parametrize("game", list(GAMES))
def test_agents_and_turns_out_of_range_are_refused(game):
    counts = {len(roster) for roster in GAMES[game].rules.rosters}
    with pytest.raises(InvalidParameter) as caught:
        Grid(game=game, agents=[["noisy"] * (max(counts) + 1)]).validate()
    assert caught.value.field == "agents"
    for turns in (0, MAX_TURNS + 1):
        with pytest.raises(InvalidParameter) as caught:
            Grid(game=game, max_turns=[turns]).validate()
        assert caught.value.field == "max_turns"


def _text(page):
    return " ".join((DOCS / page).read_text().split())


@pytest.mark.parametrize("page, phrase", [
    ("command-line.md", f"puzzle size N ({MIN_SIZE} to {MAX_PIECES}, with N + D at most {MAX_PIECES}"),
    ("command-line.md", f"D extra pieces (0 to {MAX_DISTRACTORS})"),
    ("command-line.md", f"turn limit T, 1 to {MAX_TURNS}"),
    ("games/asympuzl.md", f"the same puzzle for 2 to {CHAIN_MAX_AGENTS} agents"),
    ("games/asympuzl.md", f"`--size` from {MIN_SIZE} to {CHAIN_MAX_SIZE}"),
    ("games/einstein.md", f"`--blocks`, {MIN_BLOCKS} to {MAX_BLOCKS}"),
    ("games/einstein.md", f"`--candidates 4`, 2 to {MAX_CANDIDATES}"),
    ("games/einstein.md", f"(default {DEFAULT_BUDGET:,}, at most {MAX_BUDGET:,})"),
    ("games/tsp.md", f"`--rooms {MIN_ROOMS}..{MAX_ROOMS}`"),
    ("games/tsp.md", f"`--deviation`, 0 to {MAX_DEVIATION}"),
])
def test_the_docs_quote_the_bounds_the_code_checks(page, phrase):
    assert phrase in _text(page)
