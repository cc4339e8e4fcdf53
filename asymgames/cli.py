"""The ``asymgames`` command: one entry point for every runner.

    asymgames run --games 1000
    asymgames sweep GRID.toml
    asymgames report RUN_DIR

Each subcommand hands the rest of the command line to its runner (``runners.concurrent``,
``runners.sweep``, ...), which parses it as ``python -m runners.X`` does, under the command's own name
(``asymgames run``) in its usage lines and the commands it prints. The dispatch is hand-written
rather than argparse subparsers because every runner owns its parser (and its ``--help``).

The project's packages have generic top-level names (``engine``, ``bus``, ...). Python puts the
working directory (or ``PYTHONPATH``) before the installed packages, so a user's own ``engine.py``
would be imported instead of the project's. The command therefore takes the working directory off
``sys.path``, imports the project's packages, and then puts it back at the end, so that a user's own
modules (a policy named as ``package.module:Class``) are still found.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from pathlib import Path

from . import __version__

PROJECT_PACKAGES = ("bus", "actors", "puzzles", "feedback", "engine", "runners")
ROOT = Path(__file__).resolve().parent.parent

# command -> (module, function taking argv, what it does)
COMMANDS = {
    "run": ("runners.concurrent", "main", "run games of one condition concurrently (python -m runners.concurrent)"),
    "sweep": ("runners.sweep", "main", "run every condition of a grid file (python -m runners.sweep)"),
    "branch": ("runners.branch", "main", "play a run's games again with one message changed at a time (python -m runners.branch)"),
    "rollouts": ("runners.rollouts", "main", "rollouts for training: K games of each seed, every seat's trajectory, rewards and advantages as JSONL (python -m runners.rollouts)"),
    "serve-env": ("runners.serve_env", "main", "serve one seat of a game as an OpenEnv environment for a trainer, the engine playing the others (python -m runners.serve_env)"),
    "report": ("runners.report.cli", "main", "tables, plots and an HTML page from a run (python -m runners.report)"),
    "play": ("runners.play", "main", "a person plays a seat in the browser (python -m runners.play)"),
    "study": ("runners.study.cli", "main", "serve a study to many people at once: waiting room, balanced conditions (python -m runners.study)"),
    "view": ("runners.view.cli", "main", "look through a run's games (python -m runners.view)"),
    "replay": ("runners.replay", "main", "show one game of a run turn by turn (python -m runners.replay)"),
    "transcript": ("runners.transcript", "main", "one game as a transcript for an appendix: md, html or tex (python -m runners.transcript)"),
    "fake-llm": ("runners.fake_llm.cli", "main", "a local server that speaks the model APIs and plays scripted (python -m runners.fake_llm)"),
    "forecast": ("runners.concurrent", "main", "calls, tokens, cost and time of a run, before spending (run or sweep with --dry-run)"),
    "batches": ("runners.batches", "main", "a run's batches (--batch) at the provider; --cancel cleans up after a stopped run (python -m runners.batches)"),
    "cache": ("runners.cache", "main", "the response cache (--cache): stats, and prune old entries (python -m runners.cache)"),
    "dataset": ("runners.dataset", "main", "training data from scripted or planned play: each turn's chat and the reply played (python -m runners.dataset)"),
    "traces": ("runners.traces", "main", "reasoning traces for a dataset's samples, written by a model (python -m runners.traces)"),
    "train": ("runners.train", "main", "a LoRA adapter trained on a dataset with TRL (the train extra; python -m runners.train)"),
    "merge": ("runners.merge", "main", "merge runs of one plan into a new run directory (python -m runners.merge)"),
    "setup-llamacpp": ("runners.setup_llamacpp", "main", "build llama.cpp's server and fetch a small chat model, for real models offline"),
    "setup-vllm": ("runners.setup_vllm", "main", "install vLLM for this machine's CPU and make a small chat model's folder for it"),
}
EXAMPLES = """\
examples:
  asymgames run --games 1000                                  scripted agents, offline
  asymgames run --game NAME --help                            a game's parameters and roles as flags
  asymgames run --games 300 --agent ROLE=openai:gpt-4o        a model for one role (key from OPENAI_API_KEY)
  asymgames run --agent ROLE=openrouter:meta-llama/llama-3.1-70b-instruct   a named endpoint
  asymgames run --endpoints my_endpoints.toml --agent ROLE=mine:MODEL       endpoints of your own
  asymgames run --agent ROLE=mypackage.policies:MyPolicy      a policy class of your own
  asymgames forecast --games 2000 --agent ROLE=openai:gpt-4o  the cost before spending
  asymgames forecast examples/table1_feedback.toml            the same for a sweep
  asymgames sweep examples/table1_feedback.toml
  asymgames run --resume runs/20261121-101500
  asymgames report runs/20261121-101500
  asymgames batches runs/20261121-101500 --cancel              cancel a stopped run's batches
  asymgames replay runs/20261121-101500 7
  asymgames transcript runs/20261121-101500 7 --format tex   one game for a paper's appendix
  asymgames run --game tsp --agent ghost=human                a person plays a seat at this terminal
  asymgames play --game tsp --seat light --partner openai:gpt-4o   ... or in the browser
  asymgames study examples/studies/tsp.toml                      a study: one link for many people
  asymgames dataset --game einstein --demonstrations 5 --out data/einstein   training data
  asymgames rollouts --game einstein --group 8 --games 100    rollouts for RL trainers: groups as JSONL
  asymgames serve-env --game NAME --seat ROLE --port 8010     one seat as an OpenEnv environment for a trainer
  asymgames fake-llm --port 8000                               the local model server
  asymgames setup-llamacpp                                     llama.cpp's server and a small model, then:
  asymgames run --model llamacpp:smollm2 --games 4 --structured   a real model, served by the engine
  asymgames setup-vllm                                         vLLM for this CPU and the same model, then:
  asymgames run --model vllm:smollm2 --games 4 --structured       served by vLLM, which the engine starts

Every subcommand has its own --help."""


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"usage: asymgames COMMAND [ARGS ...]   (asymgames {__version__})", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, _, text) in COMMANDS.items()]
    return "\n".join([*lines, "", EXAMPLES])


def _is_cwd(entry: str, cwd: str) -> bool:
    if entry in ("", "."):
        return True
    try:
        return os.path.samefile(entry, cwd)
    except OSError:
        return False


def isolate_from_cwd() -> None:
    """Import the project's packages, never a same-named module of the working directory's; then
    leave the working directory at the end of ``sys.path`` for the user's own modules."""
    cwd = os.getcwd()
    if _is_cwd(str(ROOT), cwd) and (ROOT / "engine" / "__init__.py").exists():
        # the project's own checkout: its packages are the ones in the working directory, which a
        # console script does not have on its path (its first entry is the script's folder)
        if not any(_is_cwd(entry, cwd) for entry in sys.path):
            sys.path.append(cwd)
        return
    sys.path[:] = [entry for entry in sys.path if not _is_cwd(entry, cwd)]
    for name in PROJECT_PACKAGES:
        import_module(name)
    sys.path.append(cwd)


def _forecast_argv(rest: list[str]) -> tuple[str, list[str]]:
    """``forecast GRID.toml ...`` forecasts a sweep; anything else a run."""
    module = "runners.sweep" if rest and rest[0].endswith(".toml") else "runners.concurrent"
    return module, rest if "--dry-run" in rest else [*rest, "--dry-run"]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] in ("-V", "--version"):
        print(f"asymgames {__version__}")
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"asymgames: error: unknown command {command!r}; choose from {', '.join(COMMANDS)} (asymgames --help)", file=sys.stderr)
        return 2
    module_name, function, _ = COMMANDS[command]
    if command == "forecast":
        module_name, rest = _forecast_argv(rest)
    isolate_from_cwd()
    try:
        module = import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module_name.startswith(exc.name):
            raise
        print(f"asymgames: error: {command} is not available in this installation ({module_name} is missing)", file=sys.stderr)
        return 2
    program = f"asymgames {command}"
    result = getattr(module, function)(rest, prog=program)  # usage lines and resume commands spell the command
    return int(result or 0)
