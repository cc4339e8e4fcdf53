"""Turning a policy name into a policy for one agent of one game.

One ``PolicyFactory`` serves a whole run; shared resources (model clients, limiters) hang off it,
never off module globals.
"""

from __future__ import annotations

import random

from actors.agent import Policy
from actors.scripted import SCRIPTED


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_")


class PolicyFactory:
    def names(self) -> list[str]:
        return sorted(SCRIPTED)

    def canonical(self, name: str) -> str:
        """The name as it is saved with a run: one spelling per policy."""
        return _normal(name)

    def check(self, name: str) -> None:
        """Raise ValueError with a one-line reason if ``name`` is not a policy this factory can make."""
        key = _normal(name)
        if key in SCRIPTED:
            return
        if ":" in key:
            raise ValueError(f"model backends such as {name!r} are not available in this version")
        raise ValueError(f"unknown policy {name!r}; choose from {', '.join(self.names())}")

    def make(self, name: str, role: str, seed: int) -> Policy:
        self.check(name)
        return SCRIPTED[_normal(name)](role, random.Random(f"{seed}:{role}"))
