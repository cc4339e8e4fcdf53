"""The processes a test's own process started, read from ``/proc``: found while they run (a process
killed with SIGKILL leaves its descendants to others, where no walk from it finds them), and told
from a later process given the same id by their command line."""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def command_line(pid: int) -> str:
    """Process ``pid``'s command line, its arguments joined by spaces ("" for a zombie); OSError if
    there is no such process."""
    return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()


def descendants(root: int) -> dict[int, str]:
    """Every process below ``root`` now (children, theirs, ...): id -> command line."""
    children: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat[stat.rindex(")") + 2:].split()[1])  # after the name, which may hold spaces: state, parent
            children.setdefault(parent, []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            try:
                command = command_line(child)
            except OSError:
                continue
            if command:  # not a zombie
                found[child] = command
            todo.append(child)
    return found


def running(pid: int, command: str) -> bool:
    """Whether process ``pid`` still runs ``command`` (not ended, not a zombie, not a new process of that id)."""
    try:
        return command_line(pid) == command
    except OSError:
        return False
