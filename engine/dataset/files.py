"""A dataset on disk: a folder of ``train.jsonl`` (one ``{"messages": [...]}`` per line, as
``datasets.load_dataset("json", ...)`` and TRL's ``SFTTrainer`` read it), ``meta.jsonl`` (line by line
beside it: where each sample comes from and the actions it played), ``card.json`` (the game, its
parameters, the seeds, the held-out seeds, the policy, the counts, the project's version) and
``README.md`` (the card in words).

Written whole or not at all: every file goes to a new folder beside the target, is flushed to the
disk, and the folder is renamed to the target only then. A write that fails (a full disk) removes
the new folder and says why in one line; a process killed while writing leaves only a folder
named ``.NAME.partial-*``, never one that looks whole. The target must not exist.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import msgspec

from puzzles import get_game

from engine.dataset.build import Built, DatasetPlan
from engine.dataset.samples import DatasetError, Sample, SampleInfo

FORMAT = 1
TRAIN, META, CARD, README = "train.jsonl", "meta.jsonl", "card.json", "README.md"


def project_version() -> str:
    try:
        return version("asymgames")
    except PackageNotFoundError:
        return "0+unknown"


def card_of(plan: DatasetPlan, built: Built, files: dict[str, str] | None = None) -> dict[str, Any]:
    game = get_game(plan.game)
    policy = (f"demonstrations: up to {plan.demonstrations} per game (the game's own planner)" if plan.demonstrations
              else "scripted: " + ", ".join(f"{r}={p}" for r, p in plan.agents.items()) if plan.agents
              else f"scripted: {game.default_policy} in every seat")
    return {
        "format": FORMAT,
        "game": game.name,
        "game_results_format": game.results_format.version,
        "project_version": project_version(),
        "policy": policy,
        "parts": [
            {"params": msgspec.to_builtins(part.params), "games": part.games, **seeds}
            for part, seeds in zip(plan.parts, built.seeds)
        ],
        "held_out": {
            "run_seed": plan.seed, "games": plan.holdout,
            "play_them": f"asymgames run --game {game.name} --seed {plan.seed} --games {plan.holdout} (and the part's parameters)",
        },
        "demonstrations": plan.demonstrations,
        "sample": plan.sample,
        "seed": plan.seed,
        "max_turns": plan.max_turns,
        "keep_failures": plan.keep_failures,
        "counts": built.counts,
        "files": files or {"train": TRAIN, "meta": META},
    }


def readme(card: dict[str, Any]) -> str:
    counts = card["counts"]
    parts = "\n".join(
        f"- `{msgspec.json.encode(p['params']).decode()}`: {p['games']} training games" for p in card["parts"]
    )
    extra = "".join(f"- `{f}`: {what}\n" for what, f in card["files"].items() if what not in ("train", "meta"))
    return f"""# {card['game']} training data

Made by asymgames {card['project_version']} from the game's own prompts and reply format: every line of
`{card['files']['train']}` is one turn of one seat, `{{"messages": [system, earlier turns, user, assistant]}}`,
the chat the engine sends a model in that seat and the reply that was played. The game's reply reader reads
every reply back to the actions the game applied (checked for every sample when it was written).

- policy: {card['policy']}
- trajectories: {counts['trajectories']} of a pool of {counts['pool']}, from {counts['games']} training games
- samples: {counts['samples']} (a mean of {counts['mean_steps']} steps per trajectory)
- held out: the first {card['held_out']['games']} games of run seed {card['held_out']['run_seed']}:
  `{card['held_out']['play_them']}`; no training game starts as one of them does

Parts:
{parts}

Files:
- `{card['files']['train']}`: the samples (`datasets.load_dataset("json", data_files=...)`, TRL's `SFTTrainer`)
- `{card['files']['meta']}`: line by line, where each sample comes from and the actions it played
{extra}- `card.json`: all of the above, and every seed
"""


def _jsonl(items: list[Any]) -> bytes:
    encoder = msgspec.json.Encoder()
    return b"".join(encoder.encode(item) + b"\n" for item in items)


def write_files(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` as the folder ``out``, whole or not at all (DatasetError: why not)."""
    out = Path(out)
    if out.exists():
        raise DatasetError(f"{out} exists; give a new folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except OSError as exc:
        raise DatasetError(f"cannot write {out}: {exc.strerror or exc}") from None
    try:
        for name, data in files.items():
            with open(temp / name, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        os.rename(temp, out)
    except OSError as exc:
        shutil.rmtree(temp, ignore_errors=True)
        raise DatasetError(f"cannot write {out}: {exc.strerror or exc}; nothing was left") from None
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def write_dataset(out: Path, plan: DatasetPlan, built: Built) -> dict[str, Any]:
    """Write the dataset to the new folder ``out``; its card."""
    card = card_of(plan, built)
    write_files(out, {
        TRAIN: _jsonl(built.samples), META: _jsonl(built.infos),
        CARD: msgspec.json.format(msgspec.json.encode(card), indent=2) + b"\n", README: readme(card).encode(),
    })
    return card


def read_dataset(folder: Path, name: str = TRAIN) -> tuple[dict[str, Any], list[Sample], list[SampleInfo]]:
    """(card, samples, infos) of a dataset folder; DatasetError if it is not a whole one, or was made
    for another version of its game's records."""
    folder = Path(folder)
    try:
        card = msgspec.json.decode((folder / CARD).read_bytes())
        samples = [msgspec.json.decode(line, type=Sample) for line in (folder / name).read_bytes().splitlines()]
        infos = [msgspec.json.decode(line, type=SampleInfo) for line in (folder / META).read_bytes().splitlines()]
    except FileNotFoundError as exc:
        raise DatasetError(f"{folder} is not a dataset: no {Path(exc.filename).name}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DatasetError(f"{folder} is damaged: {exc}") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        raise DatasetError(f"{folder}: not a dataset of format {FORMAT}")
    try:
        game = get_game(card["game"])
    except (KeyError, ValueError) as exc:
        raise DatasetError(f"{folder}: {exc}") from None
    if card.get("game_results_format") != game.results_format.version:
        raise DatasetError(
            f"{folder} was made for {game.name} records of version {card.get('game_results_format')}; "
            f"this version of the game records version {game.results_format.version}: make it again"
        )
    if len(samples) != len(infos):
        raise DatasetError(f"{folder} is damaged: {name} and {META} differ in length")
    return card, samples, infos


__all__ = ["CARD", "META", "README", "TRAIN", "card_of", "read_dataset", "readme", "write_dataset", "write_files"]
