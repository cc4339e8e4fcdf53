"""Records checked against the plan: another seed, game, parameter, option or agents is refused by
--resume and the report, and moved aside by --repair."""

import json

import pytest

from engine import Grid, RunDir
from engine.records.planned import PlanCheck
from runners.concurrent import main as run_main
from runners.report.cli import main as report_main
from tests.engine.test_upgrade import _v1_run


def _edit(path, index, change):
    """Change record ``index`` of the results at ``path`` in place; the record as it was."""
    lines = path.read_text().splitlines()
    record = json.loads(lines[index])
    changed = json.loads(lines[index])
    change(changed["spec"])
    lines[index] = json.dumps(changed, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n")
    return record


def _size(spec):
    spec["params"]["size"] = 6


def _max_turns(spec):
    spec["options"]["max_turns"] += 1


def _feedback(spec):
    spec["options"]["feedback"] = "none"


def _game(spec):
    spec["params"] = {"game": "chain", "size": 5}


@pytest.mark.parametrize("change, what", [
    (_size, "another size (6)"),
    (_max_turns, "another max_turns"),
    (_feedback, 'another feedback ("none")'),
    (_game, "another game (chain)"),
])
def test_a_killed_run_with_a_record_that_contradicts_the_plan_is_refused_then_repaired(tmp_path, capsys, change, what):
    whole, edited = tmp_path / "whole", tmp_path / "edited"
    args = ["--games", "6", "--feedback", "own_detailed", "--no-dashboard"]
    assert run_main([*args, "--out", str(whole)]) == 0
    assert run_main([*args, "--out", str(edited), "--limit", "4"]) == 0
    record = _edit(edited / "results.jsonl", 2, change)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--resume", str(edited), "--no-dashboard"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert f"results.jsonl line 3 holds game {record['game_id']} with {what}" in err
    assert f"--resume {edited} --repair" in err
    assert run_main(["--resume", str(edited), "--repair", "--no-dashboard"]) == 0
    assert "Repaired: 1 damaged line moved to" in capsys.readouterr().out
    assert (edited / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()  # the game played again
    assert json.loads((edited / "results.damaged.jsonl").read_text())["game_id"] == record["game_id"]


def test_the_report_refuses_a_finished_run_whose_record_has_another_parameter(tmp_path, capsys):
    run = tmp_path / "run"
    assert run_main(["--games", "4", "--no-dashboard", "--out", str(run)]) == 0
    _edit(run / "results.jsonl", 1, _size)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        report_main([str(run), "--no-plots"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert "results.jsonl line 2 holds game 1 with another size (6) than the run's plan gives it" in err


def test_a_record_is_compared_on_the_fields_it_holds_and_in_the_one_spelling(tmp_path):
    plan = Grid(seeds=2, params={"size": [4]}, max_turns=[5])
    run = RunDir.create(tmp_path / "run", plan)
    assert run_main(["--resume", str(run.path), "--no-dashboard"]) == 0
    lines = run.results_path.read_bytes().splitlines(keepends=True)
    check = PlanCheck(plan)
    assert [check.differs(line) for line in lines] == [(0, None), (1, None)]
    record = json.loads(lines[0])
    del record["spec"]["params"]["prompt"]  # saved before the parameter existed: the plan's
    record["spec"]["params"]["distractors_in"] = "bob"  # with no distractors, the side does not matter
    assert check.differs(json.dumps(record).encode()) == (0, None)
    record["spec"]["params"]["distractors"] = 2
    assert check.differs(json.dumps(record).encode()) == (0, "another distractors (2)")
    record["game_id"] = 7  # not the plan's: another check says so
    assert check.differs(json.dumps(record).encode()) == (7, None)
    record["game_id"], record["spec"]["params"] = 0, {"game": "asympuzl", "size": "four"}
    with pytest.raises(ValueError):  # a record that does not read is damage, not a contradiction
        check.differs(json.dumps(record).encode())


def test_a_format_1_run_agrees_with_its_plan(tmp_path):
    run = _v1_run(tmp_path / "old", 8)
    assert list(run.contradictions(run.config())) == []


def test_a_game_recorded_twice_differently_is_refused_by_resume_as_by_merge_then_repaired(tmp_path, capsys):
    """A record pasted in twice with other contents: resume does not keep the later copy silently;
    ``merge`` refuses the same; --repair moves every record of the game aside and plays it again."""
    from runners.merge import main as merge_main

    whole, edited = tmp_path / "whole", tmp_path / "edited"
    args = ["--games", "6", "--no-dashboard"]
    assert run_main([*args, "--out", str(whole)]) == 0
    assert run_main([*args, "--out", str(edited), "--limit", "4"]) == 0
    results = edited / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    other = json.loads(lines[1])
    other["turns"] += 1  # the same game, another record
    results.write_text("".join(lines) + json.dumps(other, separators=(",", ":")) + "\n" + lines[1])  # and the first again: identical, no conflict
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        merge_main([str(tmp_path / "merged"), str(edited), str(whole)])
    assert exit_info.value.code == 2 and f"hold different records of game {other['game_id']}" in capsys.readouterr().err
    assert not (tmp_path / "merged").exists()
    with pytest.raises(SystemExit) as exit_info:
        run_main(["--resume", str(edited), "--no-dashboard"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert f"results.jsonl lines 2 and 5 hold different records of game {other['game_id']}" in err
    assert f"--resume {edited} --repair" in err
    assert run_main(["--resume", str(edited), "--repair", "--no-dashboard"]) == 0
    assert "Repaired: 3 damaged lines moved to" in capsys.readouterr().out
    assert results.read_bytes() == (whole / "results.jsonl").read_bytes()  # the game played again
    aside = [json.loads(line) for line in (edited / "results.damaged.jsonl").read_text().splitlines()]
    assert [r["game_id"] for r in aside] == [other["game_id"]] * 3


def test_a_game_recorded_twice_alike_or_lost_then_played_again_is_no_conflict(tmp_path):
    run = tmp_path / "run"
    assert run_main(["--games", "4", "--no-dashboard", "--out", str(run)]) == 0
    results = run / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    lost = json.loads(lines[2])
    lost.update(outcome="error", error={"kind": "infra_error", "type": "InfraError", "message": "HTTP 503"})
    results.write_text(json.dumps(lost, separators=(",", ":")) + "\n" + "".join(lines) + lines[0])
    assert list(RunDir.open(run).conflicts()) == []
    assert run_main(["--resume", str(run), "--no-dashboard"]) == 0
