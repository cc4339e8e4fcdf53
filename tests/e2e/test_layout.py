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


LAYERS = ("bus", "puzzles", "actors", "feedback", "engine", "runners", "asymgames")  # each imports only those before it


def _import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (at the top or inside functions)."""
    import ast

    modules: dict[str, tuple[Path, bool]] = {}
    for package in LAYERS:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(filter(None, (resolve(a.name) for a in node.names)))
            elif isinstance(node, ast.ImportFrom):
                base = here
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                full = (base + ("." + node.module if node.module else "")) if node.level else (node.module or "")
                for alias in node.names:
                    target = resolve(f"{full}.{alias.name}") if f"{full}.{alias.name}" in modules else resolve(full)
                    if target:
                        found.add(target)
        found.discard(name)
        graph[name] = found
    return graph


def test_no_import_circle_and_no_upward_arrow_between_packages():
    graph = _import_graph()
    upward = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                    if LAYERS.index(b.split(".")[0]) > LAYERS.index(a.split(".")[0]))
    assert upward == []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    circles: list[str] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                circles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert circles == []


def _folder(module: str) -> str | None:
    """The folder of ``engine/`` a module is in (None outside them: ``engine`` itself, other packages)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "engine" and len(parts) > 1 else None


def test_the_folders_of_the_engine_import_each_other_without_a_loop():
    folders: dict[str, set[str]] = {}
    for name, targets in _import_graph().items():
        here = _folder(name)
        if here is not None:
            folders.setdefault(here, set()).update(t for t in map(_folder, targets) if t is not None and t != here)
    def reaches(start: str, goal: str) -> bool:
        seen, todo = {start}, [start]
        while todo:
            for target in folders.get(todo.pop(), ()):
                if target == goal:
                    return True
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return False

    loops = [f"{a} -> {b}" for a, targets in sorted(folders.items()) for b in sorted(targets) if reaches(b, a)]
    assert loops == []


def test_the_commands_import_the_engine_only_through_its_folders_faces():
    """``runners`` and ``asymgames`` import ``engine`` or a folder of it (``engine.records``: the names in
    its ``__all__``), never a module inside a folder."""
    import ast

    found = []
    for path in sources("runners", "asymgames"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {name}" for name in names
                      if name.startswith("engine.") and name.count(".") > 1]
    assert found == []


def test_every_name_a_face_of_the_engine_gives_is_there():
    import importlib

    for folder in sorted(p.name for p in (ROOT / "engine").iterdir() if (p / "__init__.py").exists()):
        face = importlib.import_module(f"engine.{folder}")
        missing = [name for name in face.__all__ if not hasattr(face, name)]
        assert missing == [], f"engine.{folder}"
