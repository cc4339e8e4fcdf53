"""The documentation: the site builds with warnings as errors, its API reference holds every public
name, the README's links reach the pages, and every ``asymgames`` command line the docs show is
accepted by that subcommand's parser (a renamed or removed flag fails here, naming the command)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import puzzles.base

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


# --- the site ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """``mkdocs build --strict`` into a fresh folder; mkdocstrings reads the sources with griffe
    (statically: nothing imported, nothing fetched), so it builds offline."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice about its successor, not a warning
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        "mkdocs build --strict failed (the dev extra installs mkdocs, mkdocs-material and mkdocstrings):\n"
        + done.stdout + done.stderr)
    return out


def test_the_site_builds_with_warnings_as_errors(site):
    for page in DOCS.rglob("*.md"):
        assert (site / page.relative_to(DOCS).with_suffix(".html")).is_file(), page


def heading_ids(html: str) -> set[str]:
    return set(re.findall(r'id="([\w.]+)"', html))


def test_the_api_reference_documents_every_public_name(site):
    """Every name ``engine`` and ``puzzles`` export has its entry (a heading whose id is the name's
    full path); a name exported later and not added to docs/api/*.md fails here."""
    import engine
    import puzzles

    for package, page in ((engine, "engine"), (puzzles, "puzzles")):
        ids = heading_ids((site / "api" / f"{page}.html").read_text())
        missing = [name for name in package.__all__ if not any(i.endswith(f".{name}") for i in ids)]
        assert not missing, f"docs/api/{page}.md does not document {missing}"
    engine_page = (site / "api" / "engine.html").read_text()
    assert 'id="engine.play.run.run_games"' in engine_page and 'id="engine.policies.factory.PolicyFactory"' in engine_page
    contract = heading_ids((site / "api" / "puzzles.html").read_text())
    assert {f"puzzles.base.{name}" for name in ("Game", "Rules", "Faces", "Records")} <= contract
    assert "puzzles.analyses.Analysis" in contract


def test_the_readme_s_links_reach_the_pages(site):
    """The README links into docs/ (mkdocs checks the links between pages, not the README's)."""
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(((?!https?:)[^)\s]+)\)", readme)
    assert links
    for link in links:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README.md links to {link}, which is not there"
        if anchor:
            page = site / target.relative_to(DOCS).with_suffix(".html")
            assert f'id="{anchor}"' in page.read_text(), f"README.md links to {link}: no such heading"


# --- the command lines ------------------------------------------------------------------------------

FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
SHELLS = {"bash", "console", "sh", "shell"}
SEPARATORS = {"&&", "||", ";", "&", "|"}
PLACEHOLDER_RUN = re.compile(r"\S*<[^<>\s]+>\S*")  # runs/<run>, runs/table1-<time>: a run directory
# Files of the reader's own that a documented command names, and that its parser reads.
READERS_FILES = {
    "my_endpoints.toml": '[mine]\nkind = "openai"\nurl = "http://127.0.0.1:8000/v1"\n',
}


def command_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, command line) of every shell block: continued lines joined, ``$ `` dropped."""
    for block in FENCE.finditer(text):
        if block.group("lang") not in SHELLS:
            continue
        first = text.count("\n", 0, block.start("body")) + 1
        pending, start = "", None
        for offset, raw in enumerate(block.group("body").splitlines()):
            line = raw.strip()
            line = line[2:] if line.startswith("$ ") else line
            start = first + offset if start is None else start
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            yield start, pending + line
            pending, start = "", None


def asymgames_commands(line: str) -> Iterator[list[str]]:
    """The arguments of each ``asymgames`` command on a shell line (``&&``, ``;``, ``|`` and ``&``
    separate commands; ``VAR=value`` before one is its environment; ``#`` starts a comment)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    segment: list[str] = []
    for token in [*lexer, ";"]:
        if token not in SEPARATORS:
            segment.append(token)
            continue
        while segment and re.fullmatch(r"[A-Za-z_]\w*=.*", segment[0]):
            segment.pop(0)
        if segment and Path(segment[0]).name == "asymgames":
            yield segment[1:]
        segment = []


def documented_commands(run_dir: Path, files: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """(where and what, the arguments) of every documented command, a placeholder for a run
    directory replaced by a real one and a file of the reader's own by one written for the test."""
    found = []
    for page in PAGES:
        for lineno, line in command_lines(page.read_text()):
            for argv in asymgames_commands(PLACEHOLDER_RUN.sub(str(run_dir), line)):
                argv = [str(files.get(arg, arg)) for arg in argv]
                found.append((f"{page.relative_to(ROOT)}:{lineno}: {line}\n    as asymgames {shlex.join(argv)}", argv))
    return found


class Parsed(Exception):
    """The command line was read: stop before the command does anything."""


def parse_only(argv: list[str], monkeypatch) -> str | None:
    """Dispatch ``argv`` as the ``asymgames`` command does, but stop at the subcommand's
    ``parse_args``: None when it reads the line (or prints its help), else what it said."""
    from asymgames import cli

    original = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):
        original(self, args, namespace)  # exits with status 2 and one line on a bad argument
        raise Parsed

    out, err = io.StringIO(), io.StringIO()
    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", parse_args)
        patch.setattr(sys, "path", list(sys.path))  # the command moves the working directory in sys.path
        patch.chdir(ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(list(argv))
            except Parsed:
                return None
            except SystemExit as exc:
                status = exc.code
    if status == 0:  # --help, or a command that needed no parsing
        return None
    return err.getvalue().strip() or out.getvalue().strip() or f"exit status {status}"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A real run directory, played offline, for the commands that name one (``runs/<run>``)."""
    out = tmp_path_factory.mktemp("docs-run") / "run"
    command = Path(sys.executable).parent / "asymgames"
    done = subprocess.run([str(command), "run", "--games", "16", "--out", str(out), "--no-dashboard"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def test_the_command_lines_are_found():
    """The extraction itself: a continued line is one command, ``&&`` and ``&`` separate commands,
    an environment variable and a comment are not arguments."""
    text = "```bash\n$ FOO=1 .venv/bin/asymgames run --games 2 \\\n    --size 3  # two games\npip install x && asymgames report runs/x &\n```\n"
    lines = list(command_lines(text))
    assert lines == [(2, "FOO=1 .venv/bin/asymgames run --games 2  --size 3  # two games"),
                     (4, "pip install x && asymgames report runs/x &")]
    assert [argv for _, line in lines for argv in asymgames_commands(line)] == [
        ["run", "--games", "2", "--size", "3"], ["report", "runs/x"]]


def test_the_check_catches_a_bad_flag_and_an_unknown_command(monkeypatch):
    assert parse_only(["run", "--games", "2"], monkeypatch) is None
    assert "--no-such-flag" in parse_only(["run", "--no-such-flag"], monkeypatch)
    assert "unknown command" in parse_only(["no-such-command"], monkeypatch)


def test_every_documented_command_line_parses(run_dir, tmp_path, monkeypatch):
    """Every ``asymgames ...`` line in a shell block of README.md and docs/ is read by its
    subcommand's parser, as the command dispatches it, without running it."""
    files = {name: tmp_path / name for name in READERS_FILES}
    for name, text in READERS_FILES.items():
        files[name].write_text(text)
    commands = documented_commands(run_dir, files)
    assert len(commands) >= 40, len(commands)
    assert {argv[0] for _, argv in commands} >= {"run", "sweep", "report", "view", "replay", "transcript", "play", "fake-llm", "forecast"}
    failures = [f"{where}\n    {said}" for where, argv in commands if (said := parse_only(argv, monkeypatch)) is not None]
    assert not failures, "command lines in the docs that their parser refuses:\n" + "\n".join(failures)


# --- running them -----------------------------------------------------------------------------------

# What a documented command needs that a test machine has not: a model provider, a cluster, a person,
# a server that runs until stopped, a build of several minutes. Such commands are parsed above only.
NOT_OFFLINE_COMMANDS = {"fake-llm", "play", "serve-env", "setup-llamacpp", "setup-vllm", "study", "train"}  # train: the train extra, and minutes; serve-env: a server until stopped
NOT_OFFLINE_FLAGS = {"--serve", "--executor", "--ray-address", "--vllm-url", "--endpoint", "--endpoints"}
PLAYED_HERE = re.compile(r"^(openai|anthropic|vllm):")  # through the local server, which plays any model name
LIMIT = "12"  # games a documented run or sweep plays here: every command runs, none for minutes


def offline(argv: list[str]) -> bool:
    if argv[0] in NOT_OFFLINE_COMMANDS or NOT_OFFLINE_FLAGS & set(argv):
        return False
    alternatives = {b for a, b in zip(argv, argv[1:]) if a == "--alternative"}  # a branch run's truncate:N, policy:NAME
    policies = [a.split("=", 1)[-1] for a in argv if ":" in a and not a.startswith(("http", "/")) and a not in alternatives]
    if "--dry-run" in argv or argv[0] == "forecast":
        return True  # no call is made
    models = [p for p in policies if re.match(r"^[\w.-]+:", p) and not p.startswith("examples.")]
    return all(PLAYED_HERE.match(p) for p in models) and "human" not in argv


def runnable(argv: list[str], fake_url: str) -> list[str]:
    argv = [a.replace("http://127.0.0.1:8000", fake_url) for a in argv]
    if argv[0] in ("run", "sweep") and "--dry-run" not in argv and "--limit" not in argv and "--resume" not in argv:
        argv += ["--limit", LIMIT, "--no-dashboard"]
    return argv


@pytest.mark.slow
def test_the_documented_commands_run_offline(run_dir, tmp_path, monkeypatch):
    """Each page's commands in order (a later one reads the run an earlier one wrote), in a fresh
    working directory beside the project's ``examples/``; every OpenAI, Anthropic and vLLM model goes
    to the local server (the providers' base URLs in the environment, as a reader would point them),
    which plays any model name as the game's default strategy; runs and sweeps play their first
    ``LIMIT`` games (``--limit``). A command that needs a cluster, a person, a server that runs until
    stopped, a named endpoint elsewhere or a long build is parsed only (above)."""
    from asymgames import cli
    from tests.e2e.test_model_runs import server_process

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-docs-0000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-docs-0000")
    ran, failures = [], []
    with server_process("--latency", "0") as url:
        for variable, base in (("OPENAI_BASE_URL", url + "/v1"), ("ANTHROPIC_BASE_URL", url), ("VLLM_BASE_URL", url + "/v1")):
            monkeypatch.setenv(variable, base)
        for page in PAGES:
            work = tmp_path / page.relative_to(ROOT).as_posix().replace("/", "_")
            work.mkdir()
            (work / "examples").symlink_to(ROOT / "examples")
            last_run: str | None = None
            for lineno, line in command_lines(page.read_text()):
                line = PLACEHOLDER_RUN.sub(last_run or str(run_dir), line)  # the page's last run, else one made here
                for argv in asymgames_commands(line):
                    if not offline(argv):
                        continue
                    argv = runnable(argv, url)
                    out, err = io.StringIO(), io.StringIO()
                    with monkeypatch.context() as patch:
                        patch.setattr(sys, "path", list(sys.path))
                        patch.chdir(work)
                        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                            try:
                                status = cli.main(list(argv))
                            except SystemExit as exc:
                                status = exc.code
                    ran.append(argv)
                    if argv[0] in ("run", "sweep", "branch") and "--dry-run" not in argv:  # where it wrote: --out, else runs/<name-time>
                        made = sorted((work / "runs").glob("*"), key=lambda p: p.stat().st_mtime)
                        last_run = argv[argv.index("--out") + 1] if "--out" in argv else str(made[-1]) if made else last_run
                    if status not in (0, None):
                        failures.append(f"{page.relative_to(ROOT)}:{lineno}: asymgames {shlex.join(argv)}\n"
                                        f"    exit {status}: {(err.getvalue() or out.getvalue())[-600:]}")
    assert len(ran) >= 30 and {a[0] for a in ran} >= {"run", "sweep", "report", "replay", "transcript", "view", "forecast"}
    assert not failures, "documented commands that fail offline:\n" + "\n".join(failures)


# --- the other code blocks --------------------------------------------------------------------------


def code_blocks(language: str) -> list[tuple[str, str]]:
    """(where, text) of every fenced block in ``language`` in the README and the pages."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for block in FENCE.finditer(text):
            if block.group("lang") == language:
                line = text.count("\n", 0, block.start("body")) + 1
                found.append((f"{page.relative_to(ROOT)}:{line}", textwrap.dedent(block.group("body"))))
    return found


def test_every_python_block_runs():
    """Each Python block, executed as it is; a name it leaves to the reader (``my_model``: your model)
    is given a stand-in that answers with text no game reads."""
    blocks = code_blocks("python")
    assert blocks
    for where, code in blocks:
        namespace = {"__name__": "docs_block", "my_model": lambda system, user: "a reply in no game's format"}
        try:
            exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the docs' own code
        except Exception as exc:  # noqa: BLE001 - named in the failure
            pytest.fail(f"{where}: {type(exc).__name__}: {exc}")
        if "run_games(" in code:  # the block plays its policies itself
            continue
        for value in list(namespace.values()):  # a policy class the block itself defines answers a turn
            if isinstance(value, type) and value.__module__ == "docs_block" and "reply" in vars(value):
                import anyio

                from puzzles import Answer

                answer = anyio.run(value("alice", None).reply, None)
                assert isinstance(answer, Answer), where


def test_every_toml_block_is_a_grid_the_sweep_reads():
    from engine.plan.grid import grid_from_dict

    blocks = code_blocks("toml")
    assert blocks
    for where, text in blocks:
        try:
            grid_from_dict(tomllib.loads(text)).validate()
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            pytest.fail(f"{where}: {exc}")


# --- the design page --------------------------------------------------------------------------------


@pytest.mark.parametrize("part", ["rules", "faces", "records", "results_format"])
def test_the_design_page_lists_every_field_of_each_part_of_the_game_contract(part):
    """The bullet of ``docs/design.md`` that describes a part of ``Game`` names exactly its fields:
    every name it quotes (a call's arguments aside) that is not a class of the contract is a field."""
    kind = {f.name: str(f.type).partition("[")[0] for f in dataclasses.fields(puzzles.base.Game)}[part]  # its class
    page = (DOCS / "design.md").read_text()
    found = re.search(rf"^- `{part}` \(`{kind}`, (.*?)\n(?=- |\n)", page, re.M | re.S)
    assert found, f"docs/design.md has no bullet for Game.{part}"
    named = set(re.findall(r"`(\w+)(?:\([^`]*\))?`", found.group(1))) - set(vars(puzzles.base))
    assert named == {f.name for f in dataclasses.fields(getattr(puzzles.base, kind))}
