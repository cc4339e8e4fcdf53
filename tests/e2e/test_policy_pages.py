"""The pages on writing a policy (docs/policies/): one per game, and each table of fields names
exactly the fields of the class its heading names, the view a seat is really given among them."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import anyio
import pytest

from engine import Grid, PolicyFactory, run_games
from puzzles import GAMES, Answer

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "policies"
HEADING = re.compile(r"^#+ .*?`(puzzles\.[\w.]+)`\s*$", re.M)
ROW = re.compile(r"^\| `(\w+)` \|", re.M)


def tables(page: Path) -> dict[str, list[str]]:
    """The class each heading names, and the fields its table lists (the first column)."""
    text = page.read_text(encoding="utf-8")
    found = {}
    starts = list(HEADING.finditer(text))
    for heading, after in zip(starts, [*starts[1:], None]):
        body = text[heading.end(): after.start() if after else len(text)]
        found[heading.group(1)] = ROW.findall(body.split("\n## ")[0])
    return found


def class_named(path: str) -> type:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_every_game_has_a_page_and_the_index_links_each():
    index = (PAGES / "index.md").read_text(encoding="utf-8")
    for name in GAMES:
        assert (PAGES / f"{name}.md").exists(), f"no docs/policies/{name}.md"
        assert f"({name}.md)" in index


@pytest.mark.parametrize("page", sorted(p.name for p in PAGES.glob("*.md")))
def test_each_table_lists_exactly_the_fields_of_its_class(page):
    found = tables(PAGES / page)
    assert found, f"docs/policies/{page} names no class"
    classes = {path: class_named(path) for path in found}
    assert any(isinstance(c, type) for c in classes.values())
    for path, cls in classes.items():
        if not isinstance(cls, type):  # the reply's helper: a function, named for its signature
            assert callable(cls) and not found[path]
            continue
        fields = found[path]
        assert fields == list(cls.__struct_fields__), f"docs/policies/{page}: the table of {path}"


class Spy:
    """Records the class of the view and feedback each seat is given, and answers nothing readable."""

    seen: dict[str, set] = {}

    def __init__(self, role, rng):
        pass

    async def reply(self, context):
        Spy.seen.setdefault(context.view.__class__.__module__, set()).add((context.view.__class__, context.feedback.__class__))
        return Answer("nothing to read")


@pytest.mark.parametrize("name", sorted(GAMES))
def test_each_page_names_the_view_and_feedback_a_seat_is_given(name):
    plan = Grid(game=name, seeds=1, agents=[["spy"] * len(GAMES[name].rules.rosters[0])], max_turns=[1])
    Spy.seen.clear()
    anyio.run(lambda: run_games(plan.specs_for(range(plan.total)), factory=PolicyFactory(own={"spy": Spy}), concurrency=1, on_record=lambda r: None))
    ((view, feedback),) = {pair for pairs in Spy.seen.values() for pair in pairs}
    text = (PAGES / f"{name}.md").read_text(encoding="utf-8")
    assert f"## The view: `{view.__module__}.{view.__qualname__}`" in text
    if feedback is type(None):
        assert "`context.feedback` is\nNone" in text or "`context.feedback` is None" in text
    else:
        assert f"{feedback.__qualname__}" in text and f"`{feedback.__module__}.{feedback.__qualname__}`" in text + (PAGES / "asympuzl.md").read_text()
