"""A game is one folder: outside ``puzzles/`` no code names a game, a role or a piece of one, or
imports a game's folder (or a folder some games share); inside, only the registry names the games."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = ("bus", "actors", "feedback", "engine", "runners", "asymgames")
GAME_WORDS = re.compile(r"asympuzl|alice|bob|carol|dave|\bsolo\b|shape|colou?r|hypothes|\bpositions?\b", re.I)
GAME_IMPORT = re.compile(r"^\s*(from|import) puzzles\.(?!base\b|common\b|contract\b|policy\b|optional\b|turn\b|referee\b|registry\b|seat\b|seat_check\b|testing\b)\w+", re.M)
SHARED = ("common", "positions")  # folders of puzzles/ that are not games: what every game uses, what the position games share


def sources(*packages):
    for package in packages:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_no_code_outside_the_games_names_a_game_or_its_pieces():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources(*OUTSIDE)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if GAME_WORDS.search(line)
    ]
    assert found == []


def test_no_code_outside_the_games_imports_a_games_folder():
    found = [str(p.relative_to(ROOT)) for p in sources(*OUTSIDE) if GAME_IMPORT.search(p.read_text(encoding="utf-8"))]
    assert found == []


def test_only_the_registry_and_the_games_own_folders_import_the_games():
    games = [p.name for p in (ROOT / "puzzles").iterdir() if (p / "__init__.py").exists() and p.name not in SHARED]
    assert games, "no game folders"
    for path in sources("puzzles"):
        text = path.read_text(encoding="utf-8")
        inside = path.relative_to(ROOT / "puzzles").parts[0]
        for game in games:
            if game != inside and path.name != "registry.py":
                assert not re.search(rf"^\s*from (puzzles)?\.+{game}\b", text, re.M), f"{path} imports {game}"
