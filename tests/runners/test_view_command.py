"""``asymgames view`` where it cannot write its page: one line and status 2, no traceback."""

from __future__ import annotations

import os
import stat

import pytest

from runners.concurrent import main as run_main
from runners.view.cli import main as view_main


@pytest.fixture
def run(tmp_path):
    out = tmp_path / "run"
    assert run_main(["--games", "2", "--out", str(out), "--no-dashboard"]) == 0
    return out


def _refused(argv, capsys) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        view_main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_a_read_only_run_directory_is_one_line_naming_the_way_out(run, capsys):
    run.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(run, os.W_OK):
            pytest.skip("a read-only folder is writable to this user (root)")
        err = _refused([str(run)], capsys)
    finally:
        run.chmod(stat.S_IRWXU)
    assert f"cannot write {run / 'view.html'}: Permission denied" in err and "--out FILE" in err and "--serve" in err


def test_a_page_that_cannot_be_written_is_one_line_naming_the_way_out(run, capsys):
    (run / "view.html").mkdir()  # what stands where the page goes is a folder
    err = _refused([str(run)], capsys)
    assert f"cannot write {run / 'view.html'}: Is a directory" in err and "--out FILE" in err
    assert view_main([str(run), "--out", str(run.parent / "page.html")]) == 0
