"""What a model or a person wrote reaches the terminal with its control characters shown, not obeyed."""

import subprocess
import sys
from pathlib import Path

from runners.concurrent import main as run_main
from runners.printable import printable, printable_all
from tests.helpers import HOSTILE_TEXT


def test_controls_and_direction_overrides_become_visible_escapes_and_the_rest_stays():
    assert printable("a\x1b[2Jb\x07\r\u202ec\u00e9\u4e2d\t\n") == "a\\x1b[2Jb\\x07\\x0d\\u202ec\u00e9\u4e2d\t\n"
    assert printable_all({"k\x1b": ["\x9b", ("x\x00",)], "n": 3}) == {"k\\x1b": ["\\x9b", ("x\\x00",)], "n": 3}


def test_a_replay_prints_a_hostile_message_as_text(tmp_path):
    run = tmp_path / "run"
    assert run_main(["--games", "1", "--size", "2", "--agent", "alice=tests.helpers:HostileTalker",
                     "--out", str(run), "--no-dashboard"]) == 0
    command = Path(sys.executable).parent / "asymgames"
    done = subprocess.run([str(command), "replay", str(run), "0", "--full"], capture_output=True, text=True,
                          timeout=120, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\u202e" not in done.stdout
    assert "\\x1b[2J\\x1b]0;pwned\\x07" in done.stdout and "\\u202etxet" in done.stdout
    assert HOSTILE_TEXT.split("\x1b")[0].strip() in done.stdout  # the HTML part, as text
