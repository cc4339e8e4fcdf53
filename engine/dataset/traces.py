"""Reasoning traces for a dataset's samples, written by a model (the Einstein paper's App. H.3): the
model is shown what the seat was shown on the turn (the game's instructions, its earlier turns, the
turn's prompt) and the action that was played, and writes, in the first person, why; the reply
is then written again in the game's format with that reasoning as its prose (``Prompter.format``)
and read back to the same actions, as every sample is.

The calls go through the engine's model clients (``engine.backends.ModelHub``): the model's rate
limits, retries, the response cache and batch mode apply, and ``forecast`` says what the calls will
cost before any is made. The traced samples are kept beside the others, in ``traced.jsonl`` (line by
line as ``train.jsonl``); where a seat keeps its chat, its earlier turns are the traced ones too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import msgspec

from bus import Usage
from engine.backends import CALL_GAME, BackendSettings, HubContext, InfraError, ModelHub, Request, split_name
from puzzles import Game, TurnContext, get_game

from engine.spending.forecast import batched_models

from engine.dataset.files import CARD, README, TRAIN, read_dataset, readme, write_files
from engine.dataset.samples import DatasetError, Sample, SampleInfo, read_back

TRACED = "traced.jsonl"
CONCURRENCY = 256
REPLY_TOKENS = 120  # the forecast's guess at a rationale's length, in tokens

SYSTEM = (
    "You are a player in a cooperative game. You are shown exactly what you were shown on one of your turns "
    "(the game's instructions, then what you saw) and the action you took then. Write the reasoning that led you "
    "to that action, in the first person, as you would have thought it at that moment, from what you could see "
    "then: at most three sentences. Write only the reasoning: no action, no tags, no preamble."
)


def trace_request(sample: Sample, action: str) -> Request:
    """The call that asks for one sample's reasoning (``action``: the reply without prose)."""
    chat = sample.messages
    earlier = "".join(
        f"\n\n[Your earlier turn]\n{chat[i]['content']}\n\n[You answered]\n{chat[i + 1]['content']}"
        for i in range(1, len(chat) - 2, 2)
    )
    user = (
        f"[The game's instructions]\n{chat[0]['content']}{earlier}\n\n[What you saw]\n{chat[-2]['content']}\n\n"
        f"[The action you took]\n{action}"
    )
    return Request(SYSTEM, user)


class Prepared(NamedTuple):
    """A sample ready to be traced: the context its prompt shows, and the reply with no prose."""

    context: TurnContext
    bare: str


def prepare(game: Game, samples: list[Sample]) -> list[Prepared]:
    prompter = game.faces.prompter
    out = []
    for number, sample in enumerate(samples):
        read = prompter.read(sample.messages[0]["content"], sample.messages[-2]["content"])
        if read is None:
            raise DatasetError(f"sample {number}: its prompt is not one of {game.name}'s")
        context = read[0]
        reply = prompter.parse(sample.messages[-1]["content"], context)
        out.append(Prepared(context, prompter.format(reply, "")))
    return out


class TraceForecast(NamedTuple):
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # dollars; None: no price known for the model


def forecast(model: str, samples: list[Sample], prepared: list[Prepared], settings: BackendSettings,
             reply_tokens: int = REPLY_TOKENS) -> TraceForecast:
    """What tracing ``samples`` with ``model`` costs, before any call (no call is made)."""
    hub = ModelHub(settings, environ={})
    provider, name = split_name(model)
    prompt = sum(
        hub.tokenizer.count(r.system) + hub.tokenizer.count(r.user)
        for r in (trace_request(s, p.bare) for s, p in zip(samples, prepared))
    )
    completion = reply_tokens * len(samples)
    cost = hub.prices.cost(provider, name, prompt, 0, 0, completion, batch=model in batched_models(settings, [model]))
    return TraceForecast(len(samples), prompt, completion, cost)


def _rewritten(game: Game, sample: Sample, info: SampleInfo, context: TurnContext, prose: str,
               earlier: list[str], where: str) -> Sample:
    prompter = game.faces.prompter
    reply = prompter.parse(sample.messages[-1]["content"], context)
    for text in (prose.strip(), prose.strip().replace("<", "(").replace(">", ")")):
        written = prompter.format(reply, text)
        try:
            if read_back(game, written, context) == info.actions:
                break
        except DatasetError:
            pass
    else:
        raise DatasetError(f"{where}: the reply with its reasoning does not read back to the actions played")
    chat = [dict(m) for m in sample.messages]
    for k, i in enumerate(range(2, len(chat) - 2, 2)):
        chat[i]["content"] = earlier[k]
    chat[-1]["content"] = written
    return Sample(chat)


async def trace(folder: Path, model: str, settings: BackendSettings, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Trace every sample of the dataset in ``folder`` with ``model``; write ``traced.jsonl`` beside
    ``train.jsonl`` and note it in the card. The card's ``traces`` (model, calls, usage)."""
    folder = Path(folder)
    card, samples, infos = read_dataset(folder)
    if (folder / TRACED).exists():
        raise DatasetError(f"{folder} has traces already ({TRACED})")
    game = get_game(card["game"])
    prepared = prepare(game, samples)
    texts: list[str | None] = [None] * len(samples)
    usages: list[Usage] = []
    failures: list[str] = []
    hub = ModelHub(settings, environ, HubContext(run_dir=folder / "traces-run"))
    try:
        hub.check(model)
    except ValueError as exc:
        raise DatasetError(str(exc)) from None
    limiter = anyio.CapacityLimiter(CONCURRENCY)

    async def one(i: int) -> None:
        async with limiter:
            if failures:
                return
            CALL_GAME.set(f"traces-{i};seed=0")  # the form a game's label has: calls of one sample are told apart by it
            try:
                done = await hub.backend(model).complete(trace_request(samples[i], prepared[i].bare))
            except InfraError as exc:
                failures.append(f"sample {i}: {exc}")
                return
            texts[i] = done.text
            usages.append(done.usage)

    (folder / "traces-run").mkdir(exist_ok=True)
    async with hub:
        async with anyio.create_task_group() as tg:
            for i in range(len(samples)):
                tg.start_soon(one, i)
    if failures:
        raise DatasetError(f"tracing stopped: {failures[0]}")
    traced: list[Sample] = []
    seats: dict[tuple[int, str], list[str]] = {}
    for i, (sample, info, prep, text) in enumerate(zip(samples, infos, prepared, texts)):
        assert text is not None
        earlier = seats.setdefault((info.trajectory, info.role), [])
        new = _rewritten(game, sample, info, prep.context, text, earlier, f"sample {i}")
        earlier.append(new.messages[-1]["content"])
        traced.append(new)
    total = Usage.total(usages) if usages else Usage(model)
    card["traces"] = {
        "model": model, "file": TRACED, "calls": len(samples), "prompt_tokens": total.prompt_tokens,
        "completion_tokens": total.completion_tokens, "cache_hits": total.cache_hits, "cost_usd": total.cost_usd,
        "prompt": SYSTEM,
    }
    card["files"]["traced"] = TRACED
    encoder = msgspec.json.Encoder()
    # Written whole beside the dataset, then moved in by one rename each: the traces first, then the
    # card and README that name them.
    staged = folder / ".traces-new"
    write_files(staged, {
        TRACED: b"".join(encoder.encode(s) + b"\n" for s in traced),
        CARD: msgspec.json.format(msgspec.json.encode(card), indent=2) + b"\n", README: readme(card).encode(),
    })
    for name in (TRACED, CARD, README):
        (staged / name).rename(folder / name)
    staged.rmdir()
    return card["traces"]


__all__ = ["SYSTEM", "TRACED", "TRAIN", "TraceForecast", "forecast", "prepare", "trace", "trace_request"]
