"""New weights from a folder, for a trainer outside the process (``asymgames rollouts --weights-dir
DIR``): each version of the trained adapter is a PEFT folder (``adapter_config.json`` and
``adapter_model.safetensors``, as ``save_pretrained`` writes them) that the trainer moves into DIR
whole, by a rename: written under a name with a leading dot inside DIR (or anywhere on the same
file system), then renamed to its own name. A folder of DIR is taken once its name has no leading
dot and it holds both files; one is never read again.

When the run starts, the last adapter DIR holds is loaded (a trainer that saved before the run
began, a resumed run), or the base model where DIR holds none; then DIR is looked at every
``SCAN_EVERY`` seconds, and when adapters have appeared since the last look the last of them is
loaded as the next version, for the games that start after (``PolicyWeights.load``). "Last" orders
names with their numbers as numbers (``step-9`` before ``step-10``); adapters that appeared at the
same look before the last are skipped, being older weights than it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import anyio

from engine.rollouts.trajectory import Weights
from engine.rollouts.weights import PolicyWeights
from engine.serving.lora import PEFT_FILES

SCAN_EVERY = 1.0  # seconds between two looks at the folder


def _order(name: str) -> list[tuple[int, str]]:
    """A name's sort key, its runs of digits compared as numbers."""
    return [(int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", name)]


def complete_adapters(folder: Path) -> list[Path]:
    """The adapters of ``folder`` a run may load, in order: its subfolders with no leading dot in
    their name that hold both PEFT files."""
    found = [entry for entry in folder.iterdir()
             if not entry.name.startswith(".") and entry.is_dir() and all((entry / name).is_file() for name in PEFT_FILES)]
    return sorted(found, key=lambda path: _order(path.name))


class WeightsFolder:
    """The versions of ``weights`` a trainer puts in ``folder``: ``start`` before the games,
    ``watch`` while they play."""

    def __init__(self, folder: Path, weights: PolicyWeights, every: float | None = None) -> None:
        self.folder, self.weights = folder, weights
        self.every = SCAN_EVERY if every is None else every
        self.seen: set[str] = set()

    def _new(self) -> list[Path]:
        new = [path for path in complete_adapters(self.folder) if path.name not in self.seen]
        self.seen.update(path.name for path in new)
        return new

    async def start(self) -> Weights:
        """Load the last adapter the folder holds, or the base model where it holds none.
        ServeError, one line, if the server cannot load it."""
        new = self._new()
        return await self.weights.load(new[-1] if new else None)

    async def watch(self, loaded: Callable[[Weights], None] = lambda weights: None) -> None:
        """Load each new last adapter as it appears, telling ``loaded``; until cancelled, or a
        ServeError for one the server cannot load."""
        while True:
            await anyio.sleep(self.every)
            new = await anyio.to_thread.run_sync(self._new)
            if new:
                loaded(await self.weights.load(new[-1]))
