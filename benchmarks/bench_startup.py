"""Start-up and a whole offline run, this tree against an earlier commit (b50e3a2 by default).

    .venv/bin/python benchmarks/bench_startup.py                 # 5 rounds, 1000 games
    .venv/bin/python benchmarks/bench_startup.py --rounds 9 --base b50e3a2 --games 1000
    .venv/bin/python benchmarks/bench_startup.py --pyc           # with bytecode caches (see below)
    .venv/bin/python benchmarks/bench_startup.py --now /tmp/copy # a copy of the tree (one others edit)

What it measures, for each tree, in a fresh interpreter each time:
(a) import: ``python -X importtime -m runners.concurrent --help``, the cumulative times of the
    top-level imports summed (what a command costs before it does anything);
(b) run: the wall time of the main job offline, ``python -m runners.concurrent --games 1000
    --no-dashboard --out TMPDIR`` (scripted agents, interpreter start-up included: the whole
    process), with the child's CPU time beside it.

The earlier commit is checked out with ``git worktree add --detach`` into a temporary directory
(removed at the end with ``git worktree remove --force``). Both trees run on the same interpreter
(this one, by default the project's .venv) with ``cwd=`` the tree, so ``-m runners.concurrent``
imports that tree's packages first; the script prints ``runners.__file__`` once per tree to show it.
The trees alternate, A B A B ..., and the figures are medians with the ratio now / base: the machine
is shared, and alternation keeps its load from favouring one side.

The environment is passed on as it is. With PYTHONDONTWRITEBYTECODE=1 (as on the project's
machines) every project module is compiled from source at every start, so import cost follows the
lines of source imported. Without ``--pyc`` both trees read bytecode from an empty folder
(PYTHONPYCACHEPREFIX), so a ``__pycache__`` left in one tree cannot favour it; ``--pyc`` lets both trees cache bytecode under a temporary
PYTHONPYCACHEPREFIX (never inside the trees) after a first, unmeasured warm-up.

Target: the run (b) of this tree at most 0.9x the base's wall time. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.9

_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def import_total(stderr: str) -> float:
    """Milliseconds: the cumulative times of the top-level imports of a ``-X importtime`` log."""
    total = 0
    for line in stderr.splitlines():
        found = _IMPORT_LINE.match(line)
        if found and len(found.group(3)) == 1:  # one space: a top-level import
            total += int(found.group(2))
    return total / 1000


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Tree:
    def __init__(self, name: str, path: Path, python: str, env: dict[str, str]) -> None:
        self.name, self.path, self.python, self.env = name, path, python, env
        self.imports: list[float] = []
        self.walls: list[float] = []
        self.cpus: list[float] = []

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.python, *args], cwd=self.path, env=self.env, capture_output=True, text=True, timeout=timeout,
        )

    def where(self) -> str:
        done = self.run("-c", "import runners, engine, puzzles; print(runners.__file__); print(engine.__file__); print(puzzles.__file__)")
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: the tree does not import: {done.stderr.strip().splitlines()[-1:]}")
        files = done.stdout.split()
        outside = [f for f in files if not Path(f).resolve().is_relative_to(self.path.resolve())]
        if outside:
            raise SystemExit(f"{self.name}: imports from outside its tree: {outside}")
        return files[0]

    def measure_import(self) -> float:
        done = self.run("-X", "importtime", "-m", "runners.concurrent", "--help")
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: --help failed: {done.stderr[-2000:]}")
        ms = import_total(done.stderr)
        self.imports.append(ms)
        return ms

    def measure_run(self, games: int, scratch: Path) -> tuple[float, float]:
        out = Path(tempfile.mkdtemp(prefix=f"run-{self.name}-", dir=scratch))
        shutil.rmtree(out)  # the runner makes it
        cpu = child_cpu()
        start = time.perf_counter()
        done = self.run("-m", "runners.concurrent", "--games", str(games), "--no-dashboard", "--out", str(out))
        wall = time.perf_counter() - start
        cpu = child_cpu() - cpu
        shutil.rmtree(out, ignore_errors=True)
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: the run failed ({done.returncode}): {done.stderr[-2000:]}")
        self.walls.append(wall)
        self.cpus.append(cpu)
        return wall, cpu


def add_worktree(commit: str, scratch: Path) -> Path:
    path = scratch / f"tree-{commit}"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(path), commit], cwd=ROOT, check=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    return path


def remove_worktree(path: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ratio(now: list[float], base: list[float]) -> str:
    return f"{statistics.median(now) / statistics.median(base):.2f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="b50e3a2", help="the earlier commit (default b50e3a2)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of A B (default 5)")
    parser.add_argument("--games", type=int, default=1000, help="games of the offline run (default 1000)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter both trees run on (default this one)")
    parser.add_argument("--now", type=Path, default=ROOT, help="the tree measured as 'now' (default this one)")
    parser.add_argument("--pyc", action="store_true", help="let both trees cache bytecode (under a temporary prefix), warmed up first")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    env = dict(os.environ)
    if args.pyc:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    else:  # an empty cache folder for both: no __pycache__ a tree happens to hold is read (only one tree may have some)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = str(scratch / "no-pycache")
    base_path = None
    try:
        base_path = add_worktree(args.base, scratch)
        trees = [Tree(args.base, base_path, args.python, env), Tree("now", args.now, args.python, env)]
        print(f"python {args.python}; PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r}"
              f"{'; bytecode cached under ' + env['PYTHONPYCACHEPREFIX'] if args.pyc else ''}")
        for tree in trees:
            print(f"{tree.name:>8}: runners.__file__ = {tree.where()}")
        if args.pyc:  # compile and cache every module both runs load, unmeasured
            for tree in trees:
                tree.run("-m", "runners.concurrent", "--help")
                tree.measure_run(3, scratch)
                tree.walls.clear(), tree.cpus.clear()
        print(f"\n{'round':>5} | {'import ms':>9} {args.base:>8} {'now':>8} | {f'{args.games} games s':>13} {args.base:>8} {'now':>8} | {'cpu s':>5} {args.base:>8} {'now':>8}")
        for i in range(1, args.rounds + 1):
            imports = [tree.measure_import() for tree in trees]
            runs = [tree.measure_run(args.games, scratch) for tree in trees]
            print(
                f"{i:>5} | {'':>9} {imports[0]:8.0f} {imports[1]:8.0f} | {'':>13} {runs[0][0]:8.2f} {runs[1][0]:8.2f}"
                f" | {'':>5} {runs[0][1]:8.2f} {runs[1][1]:8.2f}"
            )
        base, now = trees
        print(
            f"{'median':>6}| {'':>9} {statistics.median(base.imports):8.0f} {statistics.median(now.imports):8.0f} |"
            f" {'':>13} {statistics.median(base.walls):8.2f} {statistics.median(now.walls):8.2f} |"
            f" {'':>5} {statistics.median(base.cpus):8.2f} {statistics.median(now.cpus):8.2f}"
        )
        wall_ratio = statistics.median(now.walls) / statistics.median(base.walls)
        print(
            f"\nnow / {args.base}: import {ratio(now.imports, base.imports)}, {args.games}-game run wall "
            f"{wall_ratio:.2f}x (target <= {TARGET}x: {'met' if wall_ratio <= TARGET else 'not met'}), cpu {ratio(now.cpus, base.cpus)}"
        )
    finally:
        if base_path is not None:
            remove_worktree(base_path)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
