"""The suite's own configuration: what a newcomer sees at the end of a run."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_suite_prints_why_each_skipped_test_was_skipped(tmp_path):
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n"
        "def test_needs_a_tool():\n"
        "    pytest.skip('the tool is not installed here')\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", str(tmp_path / "test_skips.py")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert "1 skipped" in done.stdout
    assert "SKIPPED [1]" in done.stdout and "the tool is not installed here" in done.stdout
