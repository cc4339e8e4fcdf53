"""On-policy rollouts: a trainer hands the running rollout new adapter weights, the server takes
them without a restart, the games started after use them, and each trajectory names its weights.

    weights = PolicyWeights("llamacpp:policy", router)      # router: engine.serving.swap
    await weights.load(None)                                # version 0: the base model
    async with rollouts(plan, k=8, out=run, models=models, weights=weights) as groups:
        async for group in groups:
            ...                                             # train on the group, save a PEFT folder
            await groups.load_weights(Path("adapters/step-1"))   # version 1, from the next game on

Each version is loaded into the running server under a name of its own (``MODEL@VERSION``; on vLLM
the version 0 of a base model keeps the model's name) by the server's own runtime endpoints
(``engine.serving.swap``). A game takes the version current when it starts and keeps it to its end:
every call the game makes to the trained model is sent to that version (``engine.backends.routes``),
so a trajectory is one version's, however long the game. On Ray workers a game's route goes with
its batch (``engine.executors.cluster``): it takes the version current when the driver batches it. A version no game uses any more, and not
the current one, is unloaded at the next swap (or by ``unload_stale``).

Which weights played which game is kept in the run directory, ``weights.jsonl`` (a line a game as
it starts: its id, the model and the ``Weights``; a game played again by a resume is there again,
its last line counts), and every model seat of the trained model gets it in its trajectory
(``Trajectory.weights``: the version, the name served, the SHA-256 of the adapter's files), from
the stream as from ``run_groups``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from engine.backends.routes import ROUTES
from engine.backends.settings import split_name
from engine.plan.spec import GameSpec
from engine.records import GameRecord
from engine.rollouts.trajectory import Group, Weights

if TYPE_CHECKING:
    from engine.serving.swap import AdapterServer

WEIGHTS_FILE = "weights.jsonl"


class Pin(msgspec.Struct, frozen=True):
    """One line of ``weights.jsonl``: the weights a game's seats of ``model`` played with."""

    game_id: int
    model: str
    weights: Weights


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Pin).decode


def read_pins(run: Path) -> dict[tuple[int, str], Weights]:
    """(game id, model) -> the weights of a run directory's games (the last line of each game);
    empty where the run swapped no weights. Damaged lines (a kill mid-write) are skipped."""
    pins: dict[tuple[int, str], Weights] = {}
    try:
        lines = (run / WEIGHTS_FILE).read_bytes().splitlines()
    except FileNotFoundError:
        return pins
    for line in lines:
        try:
            pin = _decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        pins[pin.game_id, pin.model] = pin.weights
    return pins


def with_weights(group: Group, pins: Mapping[tuple[int, str], Weights]) -> Group:
    """``group`` with each model seat's weights, where ``pins`` has them."""
    for trajectory in group.trajectories:
        if trajectory.model is not None:
            trajectory.weights = pins.get((trajectory.game_id, trajectory.model))
    return group


class PolicyWeights:
    """The weights of ``model`` (the plan's name of the trained policy: ``llamacpp:policy`` for a
    llama.cpp router, ``vllm:MODEL`` for a vLLM server) on ``server``, which loads each version.
    A game observer: as a game with a seat of ``model`` starts, it takes the current version.
    ``first``: the first version's number (a resumed run's goes on after its earlier processes')."""

    def __init__(self, model: str, server: AdapterServer, first: int = 0) -> None:
        self.model = model
        self.served_model = split_name(model)[1]  # the model as requests name it
        self.server = server
        self.first = first
        self.current: Weights | None = None
        self.loaded: list[Weights] = []  # every version loaded and not unloaded, oldest first
        self.pins: dict[tuple[int, str], Weights] = {}
        self._in_use: Counter[int] = Counter()  # version -> games in flight that use it
        self._by_game: dict[int, Weights] = {}
        self._file: Path | None = None

    async def load(self, adapter: Path | None) -> Weights:
        """Load ``adapter`` (a PEFT folder, or None: the base model) as the next version and make it
        current: the games started from now on use it, those in flight keep theirs. Versions no
        game uses any more are unloaded first. ServeError, one line, if the server cannot load it."""
        from engine.serving.swap import adapter_digest  # the serving modules, only where weights are swapped

        await self.unload_stale()
        version = self.first if self.current is None else self.current.version + 1
        digest = None if adapter is None else adapter_digest(adapter)
        served = await self.server.load(f"{self.served_model}@{version}", adapter)
        self.current = Weights(version=version, served=served, sha256=digest)
        self.loaded.append(self.current)
        return self.current

    async def unload_stale(self) -> None:
        """Unload every version but the current one that no game in flight uses."""
        for weights in [w for w in self.loaded if w != self.current and self._in_use[w.version] == 0]:
            await self.server.unload(weights.served)
            self.loaded.remove(weights)

    def attach(self, run: Path, earlier: Iterable[tuple[tuple[int, str], Weights]] = ()) -> None:
        """Keep the games' weights in the run directory ``run`` (``weights.jsonl``), after those of
        its earlier processes."""
        self._file = run / WEIGHTS_FILE
        self.pins.update(read_pins(run))
        self.pins.update(earlier)

    def game_started(self, spec: GameSpec) -> None:
        if self.model not in spec.agents.values():
            return None
        weights = self.current
        assert weights is not None, "play_groups checks that a version is loaded"
        self._in_use[weights.version] += 1
        self._by_game[spec.game_id] = weights
        self.pins[spec.game_id, self.model] = weights
        # Set in the worker's context right before the game is built: the game's tasks inherit it.
        ROUTES.set({**ROUTES.get(), self.served_model: {"model": weights.served}})
        if self._file is not None:
            with self._file.open("ab") as f:
                f.write(_encode(Pin(spec.game_id, self.model, weights)) + b"\n")
        return None

    def game_finished(self, spec: GameSpec, record: GameRecord) -> None:
        weights = self._by_game.pop(spec.game_id, None)
        if weights is not None:
            self._in_use[weights.version] -= 1
