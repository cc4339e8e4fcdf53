"""Run directories written by results format 1 still report and resume, and end byte for byte as a
run made now with the prompt they were played with, but for the modifications format 1 did not count.
Records written before the prompt was a parameter and modifications were counted read as played
with the guided prompt, their figures as writes."""

import json

import anyio
import msgspec

from engine import Grid, PolicyFactory, RunDir, play_game
from engine.records.record import encode_record
from engine.records.rundir import decode_any_record
from runners.concurrent import main as run_main
from tests.e2e.make_golden import DATA, GOLDEN, GOLDEN_V1
from tests.e2e.test_golden import as_format_1_recorded

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
    assert run.records() == [decode_any_record(as_format_1_recorded(line, prompt="guided")) for line in new]
    assert plan.params["prompt"] == ["guided"]  # as its games were played
    assert run.format() == 1  # reading changes nothing on disk


def test_a_format_1_run_resumes_and_ends_as_a_run_made_now(tmp_path, capsys):
    run = _v1_run(tmp_path / "old", 5)
    assert run_main(["--resume", str(run.path), "--no-dashboard"]) == 0
    assert run.format() == 2
    made_now = tmp_path / "new"
    assert run_main(["--games", "8", "--seed", "1", "--prompt", "guided", "--out", str(made_now), "--no-dashboard"]) == 0
    now = (made_now / "results.jsonl").read_bytes().splitlines(keepends=True)
    resumed = run.results_path.read_bytes().splitlines(keepends=True)
    assert resumed[:5] == [as_format_1_recorded(line) for line in now[:5]]  # recorded by format 1
    assert resumed[5:] == now[5:]  # played on resume, with the prompt the run began with


def test_records_written_before_modifications_were_counted_read_as_writes_and_the_guided_prompt():
    lines = (DATA / "records_before_modifications.jsonl").read_bytes().splitlines()
    for line in lines:
        old = json.loads(line)
        record = decode_any_record(line)
        assert "prompt" not in old["spec"]["params"] and record.spec.params.prompt == "guided"
        assert "prompt=guided" in record.spec.condition()
        writes = {k.replace("actions_per_position", "writes_per_position"): v for k, v in old["scores"].items()}
        assert record.scores == writes and record.metrics["position_writes"] == old["metrics"]["position_actions"]
        assert "position_actions" not in record.metrics
        again = decode_any_record(encode_record(record))
        assert again == record  # an upgraded record is current


def test_a_format_1_sweep_of_the_single_agent_check_upgrades():
    from engine.records.upgrade import upgrade_plan

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


def test_a_format_2_run_saved_before_the_prompt_was_a_parameter_resumes_with_the_guided_prompt(tmp_path):
    made_now = tmp_path / "guided"
    assert run_main(["--games", "6", "--seed", "2", "--prompt", "guided", "--out", str(made_now), "--no-dashboard"]) == 0
    old = tmp_path / "old"
    assert run_main(["--games", "6", "--seed", "2", "--prompt", "guided", "--out", str(old), "--no-dashboard"]) == 0
    saved = json.loads((old / "config.json").read_text())
    del saved["config"]["params"]["prompt"]  # as a run saved before the prompt was a parameter
    (old / "config.json").write_text(json.dumps(saved))
    kept = []
    for line in (old / "results.jsonl").read_bytes().splitlines(keepends=True)[:3]:
        record = json.loads(line)
        del record["spec"]["params"]["prompt"]  # recorded before the prompt was a parameter
        kept.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    (old / "results.jsonl").write_bytes(b"".join(kept))
    run = RunDir.open(old)
    assert run.config().params["prompt"] == ["guided"]
    assert run_main(["--resume", str(old), "--no-dashboard"]) == 0
    now = (made_now / "results.jsonl").read_bytes().splitlines(keepends=True)
    assert run.results_path.read_bytes().splitlines(keepends=True)[3:] == now[3:]  # played on with the guided prompt


def test_a_grid_that_left_the_prompt_at_its_default_resumes_with_it(tmp_path):
    plan = Grid(game="asympuzl", seeds=4, agents=[["share_everything", "share_everything"]], params={"size": [4]})
    run = RunDir.create(tmp_path / "grid", plan)
    assert run.config().params == {"size": [4]}  # nothing recorded yet
    with run.writer() as writer:
        for spec in plan.specs_for(range(1)):
            writer.write(play_spec(spec))
    assert run.config().params == {"size": [4]}  # its records have the prompt: played with the default


def play_spec(spec):
    return anyio.run(play_game, spec, PolicyFactory())


def test_a_grid_that_left_a_parameter_at_a_default_that_changed_since_resumes_with_the_earlier_one(tmp_path):
    """Einstein's ``success_on_last_step`` was False by default: a sweep that did not name it and
    recorded games with False plays on with False; one begun with today's default keeps True."""
    plan = Grid(game="einstein", seeds=3, agents=[["optimal", "optimal"]], params={"blocks": [4]})
    old = RunDir.create(tmp_path / "old", plan)
    with old.writer() as writer:
        record = play_spec(next(plan.specs_for(range(1))))
        params = msgspec.structs.replace(record.spec.params, success_on_last_step=False)  # as recorded before
        writer.write(msgspec.structs.replace(record, spec=msgspec.structs.replace(record.spec, params=params)))
    assert old.config().params == {"blocks": [4], "success_on_last_step": [False]}
    assert {s.params.success_on_last_step for s in old.config().condition_specs()} == {False}
    now = RunDir.create(tmp_path / "now", plan)
    with now.writer() as writer:
        writer.write(play_spec(next(plan.specs_for(range(1)))))
    assert now.config().params == {"blocks": [4]}
