"""The examples run as the docs say (docs/examples.md, docs/command-line.md, docs/sweeps.md), and do
what they say."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(script: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_third_agent_written_in_code_plays_the_chain_game():
    out = run("third_agent.py")
    assert "topology=all: success 100% over 100 games, solved at round 2.0" in out
    assert "topology=chain: success 100% over 100 games, solved at round 3.0" in out


def test_a_custom_policy_that_shares_half_rarely_solves():
    out = run("custom_policy.py")
    assert "alice=half bob=share_everything" in out and "over 200 games" in out
    rate = float(out.split("success ")[1].split("%")[0])
    assert rate < 50


GRIDS = sorted(p.name for p in (ROOT / "examples").glob("*.toml"))


def asymgames(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = Path(sys.executable).parent / "asymgames"
    return subprocess.run([str(command), *args], cwd=cwd, capture_output=True, text=True, timeout=600)


import pytest  # noqa: E402


@pytest.mark.parametrize("grid", GRIDS)
def test_every_example_grid_is_swept_and_reported_in_every_format(grid, tmp_path):
    """Two seeds a condition, from the project's root as docs/sweeps.md runs them; the report's text,
    LaTeX, HTML and plots (with the newest matplotlib pyproject allows) are written."""
    run = tmp_path / "run"
    swept = asymgames("sweep", f"examples/{grid}", "--seeds", "2", "--out", str(run), "--no-dashboard", cwd=ROOT)
    assert swept.returncode == 0, swept.stderr
    reported = asymgames("report", str(run), "--plot-format", "png", cwd=ROOT)
    assert reported.returncode == 0, reported.stderr
    written = {p.suffix for p in (run / "report").iterdir()}
    assert {".md", ".tex", ".html", ".png"} <= written, written


def test_the_documented_custom_policy_runs_from_the_project_s_root(tmp_path):
    """The command of docs/command-line.md ("Policies of your own"), with fewer games."""
    page = (ROOT / "docs" / "command-line.md").read_text()
    assert "asymgames run --agent alice=examples.custom_policy:HalfSharer" in page
    done = asymgames("run", "--agent", "alice=examples.custom_policy:HalfSharer", "--games", "4", "--out",
                     str(tmp_path / "run"), "--no-dashboard", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert '"alice":"examples.custom_policy:HalfSharer"' in (tmp_path / "run" / "results.jsonl").read_text()


def test_the_size_table_plays_its_five_piece_column_as_the_feedback_table_s_both_column():
    """The long paper's Table 2 at N = 5 gives every model Table 1's "Both" figures: the same games."""
    import msgspec

    from engine.plan.grid import load_grid

    def played(spec):
        return msgspec.json.encode([spec.params, spec.agents, spec.options, spec.seed])

    sizes = {played(s) for s in load_grid(ROOT / "examples" / "table2_size.toml").condition_specs() if s.params.size == 5}
    feedback = load_grid(ROOT / "examples" / "table1_feedback.toml").condition_specs()
    both = {played(s) for s in feedback if s.options.feedback == "both"}
    assert sizes and sizes <= both
