"""Where a run's games are played: ``local`` (this process) or ``ray`` (workers on a Ray cluster).

An executor takes the ids of the games to play and hands back each game's record as it comes in;
the driver alone writes the run directory, so results, resume and the dashboard work the same
whichever executor played the games. ``ray`` is imported only when used (``pip install -e '.[ray]'``).
"""

from engine.executors.base import Executor, LocalExecutor


def make_executor(kind: str = "local", *, workers: int = 2, address: str | None = None) -> Executor:
    if kind == "local":
        return LocalExecutor()
    if kind == "ray":
        from engine.executors.cluster import RayExecutor

        return RayExecutor(workers=workers, address=address)
    raise ValueError(f"unknown executor {kind!r}; use local or ray")


__all__ = ["Executor", "LocalExecutor", "make_executor"]
