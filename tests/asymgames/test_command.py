"""The ``asymgames`` command: subcommands, help, and a user's own modules in the working directory."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import asymgames
from asymgames import cli

ROOT = Path(__file__).resolve().parents[2]


def command() -> str:
    found = shutil.which("asymgames", path=str(Path(sys.executable).parent))
    assert found, "the asymgames command is not installed: pip install -e ."
    return found


def test_the_package_imports_with_its_version_and_public_names():
    assert asymgames.__version__ == "0.1.0"
    from engine import run_games
    from puzzles import GAMES

    assert asymgames.run_games is run_games and asymgames.GAMES is GAMES


def test_help_lists_every_command_with_examples(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("run", "sweep", "report", "play", "view", "replay", "fake-llm", "forecast"):
        assert f"\n  {name} " in out
    assert "examples:" in out and "asymgames run --games 1000" in out


def test_an_unknown_command_is_one_line_and_status_2(capsys):
    assert cli.main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "frobnicate" in err


def test_a_runner_missing_from_the_installation_is_named(monkeypatch, capsys):
    monkeypatch.setitem(cli.COMMANDS, "ghost", ("runners.no_such_runner", "main", ""))
    assert cli.main(["ghost", "RUN_DIR"]) == 2
    assert "ghost is not available in this installation (runners.no_such_runner is missing)" in capsys.readouterr().err


def test_run_hands_its_arguments_to_the_runner_under_the_commands_name(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli.main(["run", "--games", "6", "--out", str(out), "--no-dashboard"]) == 0
    assert len((out / "results.jsonl").read_text().splitlines()) == 6
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "--games", "zero"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("asymgames run: error: argument --games")


def test_forecast_is_a_dry_run_of_a_run_or_of_a_sweep(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["forecast", "--games", "4", "--out", str(tmp_path / "run")])
    assert exit_info.value.code == 0
    assert "Forecast: 4 games, no model plays" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["forecast", str(ROOT / "examples" / "table1_feedback.toml"), "--seeds", "3"])
    assert "no model plays" in capsys.readouterr().out
    assert not (tmp_path / "run").exists()


def test_forecast_of_a_provider_model_needs_no_key_and_speaks_as_forecast(tmp_path, capsys, monkeypatch):
    """A forecast sends nothing, so a provider's API key is not asked for; its errors name the command given."""
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["forecast", "--games", "2000", "--model", "openai:gpt-4o", "--out", str(tmp_path / "run")])
    assert exit_info.value.code == 0
    printed = capsys.readouterr()
    assert "openai:gpt-4o" in printed.out and "2000 games to play" in printed.out and printed.err == ""
    assert not (tmp_path / "run").exists()
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["forecast", "--games", "20", "--model", "openai:gpt-4o", "--size", "99"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("asymgames forecast: error: argument --size")
    with pytest.raises(SystemExit) as exit_info:  # a sweep's forecast too
        cli.main(["forecast", str(ROOT / "examples" / "table1_feedback.toml"), "--seeds", "0"])
    assert exit_info.value.code == 2 and capsys.readouterr().err.startswith("asymgames forecast: error: argument --seeds")
    with pytest.raises(SystemExit) as exit_info:  # a run that would send asks for the key still
        cli.main(["run", "--games", "2", "--model", "openai:gpt-4o", "--out", str(tmp_path / "real")])
    assert exit_info.value.code == 2 and "needs the environment variable OPENAI_API_KEY" in capsys.readouterr().err


def test_a_users_own_engine_module_in_the_working_directory_breaks_nothing(tmp_path):
    """Python puts PYTHONPATH and, for ``-m``, the working directory before the installed packages."""
    (tmp_path / "engine.py").write_text("raise ImportError('the user engine')\n")
    (tmp_path / "bus.py").write_text("x = 1\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    shadowed = subprocess.run(
        [sys.executable, "-m", "runners.concurrent", "--games", "3"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=120,
    )
    assert shadowed.returncode != 0 and "Error" in shadowed.stderr  # the problem the command avoids
    for how in ([command()], [sys.executable, "-m", "asymgames"]):
        out = tmp_path / f"run{len(how)}"
        done = subprocess.run(
            [*how, "run", "--games", "5", "--out", str(out), "--no-dashboard"], cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        assert [r["game_id"] for r in records] == list(range(5))


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_command_answers_help_under_its_own_name(name, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main([name, "--help"])
    assert stopped.value.code == 0
    usage = capsys.readouterr().out
    assert usage.startswith(f"usage: asymgames {name} "), usage[:80]


@pytest.mark.parametrize("argv", [["run", "--model-s", "3"], ["run", "--gam", "tsp"], ["fake-llm", "--po", "1"]])
def test_a_flag_is_never_taken_as_an_abbreviation_of_another(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments" in err and argv[1] in err
