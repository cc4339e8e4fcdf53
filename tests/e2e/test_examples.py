"""The Python examples run as the README says, and do what they say."""

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
