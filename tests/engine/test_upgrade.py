"""Run directories written by results format 1 still report and resume, and end byte for byte as a
run made now."""

import json

from engine import RunDir
from engine.results import decode_any_record
from runners.concurrent import main as run_main
from tests.e2e.make_golden import GOLDEN, GOLDEN_V1

# The first condition of the golden records (8 games, run seed 1), as format 1 saved it.
V1_CONFIG = {
    "format": 1,
    "config": {
        "type": "run", "games": 8, "seed": 1, "size": 5, "distractors": 0, "distractors_in": "alice",
        "feedback": "own_detailed", "max_turns": None, "history": 1, "alice": "share_everything",
        "bob": "share_everything", "puzzle": "asympuzl", "carol": None, "dave": None, "topology": None,
        "turn_order": None, "channel": None, "max_actions": None, "memory": None, "leak_audit": False,
    },
}


def _v1_run(path, games_recorded):
    path.mkdir()
    (path / "config.json").write_text(json.dumps(V1_CONFIG, indent=2))
    lines = GOLDEN_V1.read_bytes().splitlines(keepends=True)[:games_recorded]
    (path / "results.jsonl").write_bytes(b"".join(lines))
    return RunDir.open(path)


def test_a_format_1_run_reads_as_format_2(tmp_path):
    run = _v1_run(tmp_path / "old", 8)
    plan = run.config()
    assert (plan.game, plan.seeds, plan.seed, plan.params["size"]) == ("asympuzl", 8, 1, [5])
    new = GOLDEN.read_bytes().splitlines(keepends=True)[:8]
    assert run.records() == [decode_any_record(line) for line in new]
    assert run.format() == 1  # reading changes nothing on disk


def test_a_format_1_run_resumes_and_ends_as_a_run_made_now(tmp_path, capsys):
    run = _v1_run(tmp_path / "old", 5)
    assert run_main(["--resume", str(run.path), "--no-dashboard"]) == 0
    assert run.format() == 2
    assert run.results_path.read_bytes() == b"".join(GOLDEN.read_bytes().splitlines(keepends=True)[:8])
    made_now = tmp_path / "new"
    assert run_main(["--games", "8", "--seed", "1", "--out", str(made_now), "--no-dashboard"]) == 0
    assert (made_now / "results.jsonl").read_bytes() == run.results_path.read_bytes()


def test_a_format_1_sweep_of_the_single_agent_check_upgrades():
    from engine.upgrade import upgrade_plan

    old = {
        "type": "grid", "name": "table4", "seeds": 3, "seed": 0, "puzzle": "asympuzl_solo",
        "agents": [["share_everything"], ["noisy"]], "swap_seats": False, "size": [3, 5], "distractors": [0],
        "distractors_in": ["alice"], "feedback": ["none"], "history": [1], "max_turns": [1], "topology": [],
        "turn_order": [], "max_actions": [], "memory": [], "channel": [], "leak_audit": False,
    }
    plan = upgrade_plan(old)
    plan.validate()
    assert plan.total == 2 * 2 * 3
    assert [s.agents for s in plan.condition_specs()][:2] == [{"solo": "share_everything"}, {"solo": "share_everything"}]
    assert {s.params.size for s in plan.condition_specs()} == {3, 5}
