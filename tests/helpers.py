"""Shared test helpers."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import anyio

from engine import GameRecord, GameSpec, Grid, PolicyFactory, play_game
from engine.analysis.stats import ScoreSummary, ScoreTally, tally_scores
from puzzles import Rejected, Say, Step


def score_summaries(records: list[GameRecord]) -> dict[str, ScoreSummary]:
    """Every score of the records, in first-seen order, over the games that ended without error,
    from the list of records at once (what the streaming summaries must agree with)."""
    tallies: dict[str, ScoreTally] = {}
    for record in records:
        if record.outcome != "error":
            tally_scores(tallies, record.scores)
    return {key: tally.summary() for key, tally in tallies.items()}


def transcript_lines(run: Path) -> list[dict]:
    """The transcripts a run wrote, as plain JSON in the order written, read with the standard
    library alone: its blocks are one gzip file (``zcat`` reads them so); an older run's plain lines."""
    path = Path(run) / "transcripts.jsonl.gz"
    data = gzip.decompress(path.read_bytes()) if path.exists() else (Path(run) / "transcripts.jsonl").read_bytes()
    return [json.loads(line) for line in data.splitlines()]


_PARAMS = ("size", "distractors", "distractors_in")
_ROLES = ("alice", "bob", "carol", "dave")
_ONE = ("feedback", "max_turns", "history", "topology", "turn_order", "max_actions", "memory", "channel")


def grid(games: int = 1, run_seed: int = 0, *, game: str = "asympuzl", **fields) -> Grid:
    """A one-condition plan from flat settings: game parameters (``size``, ...), one policy per role
    (``alice="noisy"``, ``solo=...``), engine options (``feedback``, ``max_turns``, ``history`` with
    None for full, extensions), ``leak_audit``."""
    params = {k: [fields.pop(k)] for k in _PARAMS if k in fields}
    if "solo" in fields:
        agents = [fields.pop("solo")]
    else:
        agents = [fields.pop(r, "share_everything") for r in _ROLES[:2]]
        agents += [fields.pop(r) for r in _ROLES[2:] if r in fields]
    plan: dict = {"game": game, "seeds": games, "seed": run_seed, "agents": [agents], "params": params}
    for key in _ONE:
        if key in fields:
            value = fields.pop(key)
            if key == "history" and value is None:
                value = "full"
            if value is not None:
                plan[key] = [value]
    if fields.pop("leak_audit", False):
        plan["leak_audit"] = True
    if fields:
        raise TypeError(f"unknown settings {sorted(fields)}")
    return Grid(**plan)


def spec(index: int = 0, run_seed: int = 0, **fields) -> GameSpec:
    """Game ``index`` of a one-condition run with these settings (see ``grid``)."""
    return grid(index + 1, run_seed, **fields).spec(index)


class FailingFactory(PolicyFactory):
    """The named policies everywhere, except Bob in the games with the given seeds, whose policy
    raises on turn 1."""

    def __init__(self, failing_seeds):
        super().__init__()
        self.failing_seeds = failing_seeds

    def make(self, name, role, seed, game):
        if role == "bob" and seed in self.failing_seeds:
            class Broken:
                async def reply(self, context):
                    raise RuntimeError("policy exploded")
            return Broken()
        return super().make(name, role, seed, game)


def play(game_spec: GameSpec, factory: PolicyFactory | None = None, **kwargs):
    return anyio.run(lambda: play_game(game_spec, factory or PolicyFactory(), **kwargs))


async def play_async(game_spec: GameSpec, factory: PolicyFactory | None = None, **kwargs):
    return await play_game(game_spec, factory or PolicyFactory(), **kwargs)


HOSTILE_TEXT = (
    "<!--<script> </script><img src=x onerror=alert(1)> & \x1b[2J\x1b]0;pwned\x07 \u202etxet\u202c"
)
"""What a model might write that a page or a terminal must show as text: HTML that would end or
comment out a script block, terminal escapes that clear the screen and set the window title, and a
right-to-left override."""


class HostileTalker:
    """A policy (``tests.helpers:HostileTalker``) whose every message is ``HOSTILE_TEXT`` and which
    makes no move; its replies are well-formed, so the games run to their turn limit."""

    def __init__(self, role, rng) -> None:
        self.role = role

    async def reply(self, context):
        import msgspec

        from puzzles import Answer

        return Answer(msgspec.json.encode({"message": HOSTILE_TEXT, "actions": []}).decode())


class Counter:
    """A toy game state (the referee's and the Environment's tests): each role adds its actions (numbers) to a shared total; done at ``goal``."""

    def __init__(self, roles=("a", "b", "c"), max_turns=3, goal=100):
        self.roles, self.max_turns, self.goal = roles, max_turns, goal
        self.total = 0
        self.steps = []

    def view(self, role):
        return self.total

    def private(self, role):
        return role

    def step(self, role, actions):
        self.steps.append((role, actions))
        good = [a for a in actions if a > 0]
        self.total += sum(good)
        rejected = tuple(Rejected(str(a), "must be positive") for a in actions if a <= 0)
        return Step(applied=len(good), rejected=rejected, say=(Say(f"{role} added {sum(good)}"),) if good else ())

    def done(self):
        return self.total >= self.goal

    def outcome(self):
        return "success" if self.done() else "failure"

    def progress(self, role):
        return self.total

    def scores(self):
        return {"total": float(self.total)}

    def metrics(self):
        return {}


def drain(inbox):
    out = []
    while True:
        try:
            out.append(inbox.receive_nowait())
        except anyio.WouldBlock:
            return out



def make_adapter(peft, base, out: Path, rank: int = 4) -> Path:
    """A LoRA adapter of ``base`` (a model folder or a model) as PEFT writes it, untrained: B is zero,
    so the tuned model answers as its base. ``peft``: the module (the train extra)."""
    import transformers

    model = base if not isinstance(base, Path) else transformers.AutoModelForCausalLM.from_pretrained(str(base), dtype="float32")
    config = peft.LoraConfig(r=rank, lora_alpha=2 * rank, target_modules="all-linear", task_type="CAUSAL_LM")
    peft.get_peft_model(model, config).save_pretrained(str(out))
    return out


TRAIN_EXTRA = "the train extra is not installed (pip install -e '.[train]')"


def skip_without(missing: str | None) -> None:
    """In a real-model test or its fixture: skip it, saying why, where ``missing`` says what is not
    there (the train extra, a model folder); a failure instead where ``ASYMGAMES_REQUIRE_REAL_MODEL=1``
    (as CI sets, having installed them)."""
    import os

    import pytest

    if missing is None:
        return
    if os.environ.get("ASYMGAMES_REQUIRE_REAL_MODEL") == "1":
        pytest.fail(f"ASYMGAMES_REQUIRE_REAL_MODEL=1 but {missing}", pytrace=False)
    pytest.skip(missing)


def skip_without_modules(*names: str) -> None:
    """``skip_without`` for modules of the train extra that this Python cannot import."""
    import importlib.util

    absent = [name for name in names if importlib.util.find_spec(name) is None]
    skip_without(f"{TRAIN_EXTRA}: no {', '.join(absent)}" if absent else None)


async def rollouts_with_a_swap(grid, models, weights, out: Path, adapter: Path) -> list:
    """The groups of a rollout of ``grid`` (K=2, one game at a time, tokens asked) that starts on the
    weights ``weights`` holds and loads ``adapter`` as the next version once the first group is in."""
    from engine.rollouts import Settings, rollouts

    got = []
    async with rollouts(grid, k=2, out=out, models=models, weights=weights, concurrency=1, settings=Settings(tokens=True)) as groups:
        async for group in groups:
            got.append(group)
            if len(got) == 1:
                await groups.load_weights(adapter)
    return got


def random_adapter(peft, base: Path, out: Path, seed: int) -> Path:
    """A LoRA adapter of the model folder ``base`` whose B is not zero (PEFT's ``init_lora_weights=False``)
    and whose scale is large (alpha 64 over rank 4): the tuned model answers otherwise than its base,
    greedy replies included."""
    import torch
    import transformers

    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(base), dtype="float32")
    config = peft.LoraConfig(r=4, lora_alpha=64, target_modules="all-linear", task_type="CAUSAL_LM", init_lora_weights=False)
    peft.get_peft_model(model, config).save_pretrained(str(out))
    return out


def skip_without_real_vllm(folder: Path | None) -> None:
    """At a real-vLLM test module's top: skip the module, saying why, without setup-vllm's vLLM or
    model ``folder``; a failure instead where ``ASYMGAMES_REQUIRE_REAL_VLLM=1``."""
    import os

    import pytest

    from engine.serving import vllm_installed

    if not vllm_installed():
        missing = "no vLLM for this CPU: asymgames setup-vllm installs it (about 10 minutes)"
    elif folder is None or not folder.is_dir():
        missing = f"no model folder at {folder}: asymgames setup-vllm makes it"
    else:
        return
    if os.environ.get("ASYMGAMES_REQUIRE_REAL_VLLM") == "1":
        raise RuntimeError(f"ASYMGAMES_REQUIRE_REAL_VLLM=1 but {missing}")
    pytest.skip(missing, allow_module_level=True)
