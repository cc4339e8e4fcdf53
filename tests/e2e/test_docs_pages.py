"""The documentation a newcomer reads first holds to the code: every subcommand on the set-up page,
every ``docs/...`` page that code or docs cite exists, every example on the Examples page, and the
module form of a run in the README."""

from __future__ import annotations

import re
from pathlib import Path

from asymgames.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
CITED = re.compile(r"\bdocs/[\w./-]+?\.md\b")
SOURCES = ("asymgames", "runners", "engine", "puzzles", "bus", "actors", "feedback", "examples", "benchmarks")


def test_the_setup_page_lists_every_subcommand():
    page = (ROOT / "docs" / "setup.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([\w-]+)` \|", page, re.M)
    assert sorted(listed) == sorted(COMMANDS)


def test_every_docs_page_that_code_or_docs_cite_exists():
    cited: dict[str, set[str]] = {}
    files = [p for folder in SOURCES for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".toml", ".html", ".js")]
    files += [ROOT / "README.md", ROOT / "mkdocs.yml", ROOT / "pyproject.toml", *(ROOT / "docs").rglob("*.md")]
    for path in files:
        for found in CITED.findall(path.read_text(encoding="utf-8")):
            cited.setdefault(found, set()).add(str(path.relative_to(ROOT)))
    assert len(cited) >= 5
    missing = {page: sorted(where) for page, where in cited.items() if not (ROOT / page).is_file()}
    assert missing == {}


def test_the_study_help_cites_a_page_that_exists(capsys):
    import pytest

    from runners.study.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    pages = CITED.findall(" ".join(capsys.readouterr().out.split()))
    assert pages and all((ROOT / page).is_file() for page in pages)


def test_the_examples_page_names_every_example():
    page = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    examples = [p for p in (ROOT / "examples").rglob("*") if p.suffix in (".py", ".toml") and p.name != "__init__.py"]
    assert len(examples) >= 10
    unnamed = [str(p.relative_to(ROOT)) for p in examples if f"`{p.relative_to(ROOT)}`" not in page]
    assert unnamed == []


def test_the_readme_shows_a_run_as_a_module():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python -m runners.concurrent --games 1000" in readme
