"""Sweeps: grids of conditions on shared seeds, the single-agent check, and the sweep runner."""

from pathlib import Path

import pytest

from engine import RunDir
from engine.plan.grid import Grid, grid_from_dict, load_grid
from runners.sweep import main
from tests.helpers import play_async

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.toml"))


def test_conditions_are_the_product_of_the_axes_with_one_d0_and_swapped_seats():
    grid = grid_from_dict({
        "seeds": 4,
        "agents": [["one_piece", "share_everything"], ["noisy", "noisy"]],
        "swap_seats": True,
        "distractors": [0, 3],
        "distractors_in": ["alice", "bob"],
        "feedback": ["own", "joint"],
    })
    conditions = grid.conditions()
    # 3 rosters (one swapped pair, a same-policy pair not swapped) x (D=0, 3@alice, 3@bob) x 2 modes
    assert len(conditions) == 3 * 3 * 2 and grid.total == 72
    rosters = {tuple(agents.items()) for _, agents, _ in conditions}
    assert (("alice", "share_everything"), ("bob", "one_piece")) in rosters
    assert {(p.distractors, p.distractors_in) for p, _, _ in conditions} == {(0, "alice"), (3, "alice"), (3, "bob")}
    assert all(options.max_turns == 10 for _, _, options in conditions)


def test_every_condition_uses_the_same_seeds_in_the_same_order():
    grid = Grid(seeds=5, feedback=["none", "own", "joint"], params={"size": [3, 5]})
    specs = list(grid.specs_for(range(grid.total)))
    assert [s.game_id for s in specs] == list(range(30))
    by_condition = {}
    for s in specs:
        by_condition.setdefault(s.condition(), []).append(s.seed)
    assert len(by_condition) == 6
    assert len({tuple(seeds) for seeds in by_condition.values()}) == 1
    assert grid.spec(17) == specs[17]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("colour = ['red']", "unknown key 'colour'"),
        ("size = ['five']", "Expected `int`, got `str`"),
        ("feedback = ['lots']", "feedback must be one of"),
        ("agents = [['noisy', 'noisy', 'noisy']]", "asympuzl is played by 1 or 2 agents, got 3"),
        ("game = 'chain'\nagents = [['noisy']]", "chain is played by 2 to 4 agents, got 1"),
        ("game = 'chain'\ndistractors = [1]", "unknown key 'distractors'"),
        ("game = 'tetris'", "unknown game 'tetris'"),
        ("size = [1]", "size must be"),
        ("seeds = 0", "seeds must be at least 1"),
        ("size = [", "is not TOML"),
    ],
)
def test_bad_grids_are_refused_with_a_reason(text, fragment, tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=None) as info:
        load_grid(path)
    assert fragment in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("size", [3, 5, 10, 20])
async def test_single_agent_with_both_views_solves_in_one_attempt(size):
    grid = grid_from_dict({
        "agents": [["share_everything"], ["ignore"]], "feedback": ["none"], "size": [size], "distractors": [0, 5],
        "distractors_in": ["alice", "bob"], "seeds": 3,
    })
    for spec in grid.specs_for(range(grid.total)):
        record = await play_async(spec)
        assert spec.max_turns == 1 and list(spec.agents) == ["solo"]
        if spec.agents["solo"] == "share_everything":
            assert record.outcome == "success" and record.solved_turn == 1
        else:
            assert record.outcome == "failure"


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_grid_runs_offline(example, tmp_path):
    out = tmp_path / "run"
    assert main([str(example), "--seeds", "2", "--out", str(out), "--no-dashboard"]) == 0
    grid = RunDir.open(out).config()
    records = RunDir.open(out).records()
    assert len(records) == grid.total == len(load_grid(example).conditions()) * 2
    assert all(r.outcome != "error" for r in records)


def test_sweep_resume_and_bad_input(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text("seeds = 6\nfeedback = ['own', 'joint']\nagents = [['Noisy', 'noisy']]\n")
    out = tmp_path / "run"
    assert main([str(grid), "--out", str(out), "--no-dashboard"]) == 0
    saved = RunDir.open(out)
    assert saved.config().agents == [["noisy", "noisy"]]  # saved in one spelling
    full = saved.results_path.read_bytes()
    saved.results_path.write_bytes(b"".join(full.splitlines(keepends=True)[:5]))
    assert main(["--resume", str(out), "--no-dashboard"]) == 0
    assert saved.results_path.read_bytes() == full
    capsys.readouterr()
    for argv, fragment in [
        ([], "a grid file is required"),
        ([str(tmp_path / "missing.toml"), "--out", str(tmp_path / "x")], "cannot read"),
        (["--resume", str(out), str(grid)], "uses its saved grid"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and fragment in err and err.count("\n") == 1
    bad = tmp_path / "bad.toml"
    bad.write_text("agents = [['genius', 'noisy']]\n")
    with pytest.raises(SystemExit):
        main([str(bad), "--out", str(tmp_path / "y")])
    assert "unknown policy 'genius'" in capsys.readouterr().err


def test_either_runner_resumes_a_run_of_the_other(tmp_path, capsys):
    """One plan type: a single run is a one-point grid."""
    from runners.concurrent import main as run_main

    single, swept = tmp_path / "single", tmp_path / "swept"
    assert run_main(["--games", "4", "--out", str(single), "--no-dashboard"]) == 0
    grid = tmp_path / "g.toml"
    grid.write_text("seeds = 3\nfeedback = ['own', 'joint']\n")
    assert main([str(grid), "--out", str(swept), "--no-dashboard"]) == 0
    for run in (single, swept):
        results = RunDir.open(run).results_path
        full = results.read_bytes()
        results.write_bytes(b"".join(full.splitlines(keepends=True)[:2]))
        other = main if run == single else run_main
        assert other(["--resume", str(run), "--no-dashboard"]) == 0
        assert results.read_bytes() == full
    capsys.readouterr()
    with pytest.raises(SystemExit):
        run_main(["--resume", str(swept), "--feedback", "own"])
    assert "the run being resumed has --feedback joint, got own" in capsys.readouterr().err


def test_a_grid_plays_another_game_with_game(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text("seeds = 2\nagents = [['share_everything', 'share_everything', 'share_everything']]\nsize = [4]\n")
    with pytest.raises(SystemExit):
        main([str(grid), "--out", str(tmp_path / "x"), "--no-dashboard"])  # three agents: not asympuzl
    assert main([str(grid), "--game", "chain", "--out", str(tmp_path / "run"), "--no-dashboard"]) == 0
    records = RunDir.open(tmp_path / "run").records()
    assert {r.spec.game for r in records} == {"chain"} and all(r.outcome == "success" for r in records)
    assert list(records[0].spec.agents) == ["alice", "bob", "carol"]


def test_games_are_played_seed_by_seed_across_conditions_and_the_prefix_follows_that_order():
    from engine.records.ids import IdSet
    from engine.play.run import RunProgress
    from engine.session.playing import play_order, play_place
    from engine.records.record import GameRecord

    plan = grid_from_dict({"seeds": 4, "agents": [["share_everything", "share_everything"], ["noisy", "noisy"], ["one_piece", "one_piece"]]})
    order = list(play_order(plan, IdSet()))
    assert order == [c * 4 + i for i in range(4) for c in range(3)]  # every condition fills at once
    assert [play_place(plan)(g) for g in order] == list(range(12))
    assert list(play_order(plan, IdSet([0, 5]))) == [g for g in order if g not in (0, 5)]
    progress = RunProgress(total=12, place=play_place(plan))
    for game_id in (0, 4, 8):  # the first seed of each condition: the first three started
        spec = plan.spec(game_id)
        progress.game_finished(spec, GameRecord(game_id=game_id, spec=spec, outcome="success"))
    assert progress.prefix == (3, 3, 3)
