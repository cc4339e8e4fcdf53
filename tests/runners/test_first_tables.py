"""What a new user reads first: the table at the end of a run, piped or on a terminal, counts in
words, and a model name quoted as it was written."""

import io
import re

import anyio
import pytest
from rich.console import Console

from engine import PolicyFactory, RunProgress, run_games, summarize
from engine.plan.grid import Grid
from runners.concurrent import main
from runners.dashboard.final_table import print_summary
from runners.words import counted

INTERVAL = re.compile(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]")


@pytest.fixture(scope="module")
def summaries():
    grid = Grid(seeds=20)
    records = []
    anyio.run(lambda: run_games(grid.specs_for(range(grid.total)), factory=PolicyFactory(), concurrency=4,
                                on_record=records.append, progress=RunProgress(total=grid.total)))
    return summarize(records)


def printed(summaries, width: int, terminal: bool) -> str:
    out = io.StringIO()
    print_summary(Console(file=out, width=width, force_terminal=terminal, color_system=None), summaries)
    return out.getvalue()


def test_piped_the_end_of_run_table_keeps_every_score_whole_on_one_line(summaries):
    text = printed(summaries, 132, terminal=False)
    scores = list(summaries[0].scores)
    assert len(scores) == 4
    row = next(line for line in text.splitlines() if line.startswith("│") and "100.0" in line)
    assert len(INTERVAL.findall(row)) == 4  # every score with its interval in the one row
    assert "No room" not in text


def test_on_a_narrow_terminal_the_scores_left_out_are_named_never_wrapped(summaries):
    text = printed(summaries, 80, terminal=True)
    assert max(len(line) for line in text.splitlines()) <= 80
    for line in text.splitlines():
        if line.startswith("│"):
            assert not re.search(r"\[\d\.\d\d,\s*│", line)  # no interval cut at its comma
    assert "No room at this width for:" in text and "asymgames report" in text and "runners.report" not in text


def test_counts_are_written_in_the_singular_for_one():
    assert [counted(n, "call") for n in (0, 1, 2)] == ["0 calls", "1 call", "2 calls"]
    assert counted(1, "turn") == "1 turn" and counted(3, "match", "matches") == "3 matches"


def test_a_report_of_one_game_says_one_game_in_one_condition(tmp_path, capsys):
    out = tmp_path / "one"
    assert main(["--games", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    from runners.report.cli import main as report
    report([str(out), "--no-plots"])
    assert "1 game in 1 condition, from" in capsys.readouterr().out


def test_a_model_name_without_its_provider_is_quoted_as_written(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--games", "1", "--model", "gpt-4o"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "unknown policy 'gpt-4o'" in err and "gpt_4o" not in err
