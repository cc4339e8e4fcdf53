"""What start-up imports: a run whose agents are all scripted calls no model, so it imports no HTTP
client and no provider SDK (they load when a model's backend is built, ``engine.backends.build``).

A test of what is imported, never of how long it takes."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Every module a model call needs and an offline run must not load.
HTTP = ("aiohttp", "openai", "anthropic", "httpx", "yarl", "multidict", "aiohappyeyeballs", "frozenlist")

# Runs the main job as ``python -m runners.concurrent`` does, and writes the names of the modules
# loaded by the time the process exits.
WRAPPER = """
import atexit, json, runpy, sys
out, *args = sys.argv[1:]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["runners.concurrent", *args]
runpy.run_module("runners.concurrent", run_name="__main__", alter_sys=True)
"""


def loaded_by(tmp_path: Path, *args: str) -> set[str]:
    listing = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, str(listing), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(listing.read_text()))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.partition(".")[0] in HTTP)


def test_an_offline_run_imports_no_http_client_or_sdk(tmp_path):
    out = tmp_path / "run"
    modules = loaded_by(tmp_path, "--games", "3", "--no-dashboard", "--out", str(out))
    assert len((out / "results.jsonl").read_text().splitlines()) == 3  # the games were played
    assert {"engine.play.game", "engine.policies.factory"} <= modules
    assert heavy(modules) == []


def test_help_imports_no_http_client_or_sdk(tmp_path):
    modules = loaded_by(tmp_path, "--help")
    assert "engine.policies.factory" in modules
    assert heavy(modules) == []


def test_the_engine_api_imports_no_http_client_or_sdk():
    # Importing the engine's public names (and building a factory) loads no client either.
    code = (
        "import sys\n"
        "from engine import PolicyFactory, RunDir, Grid, play_game, run_games\n"
        "import engine.backends as b\n"
        "b.BackendSettings, b.ModelOptions, b.split_name\n"
        "PolicyFactory()\n"
        f"print(sorted(m for m in sys.modules if m.partition('.')[0] in {HTTP!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"
