"""A forecast before any paid call: the games and model calls a run will make, their tokens, what
they cost and how long the limits make them take.

A few games of each condition (``SAMPLED`` seeds) are played in process with every model replaced
by a stand-in that makes no call: the model's own policy renders the prompts the run would send (the
same prompter, chat history and best-of-n), the stand-in counts their tokens with the run's
tokenizer and answers as a scripted strategy of the game would (the one the model is named after,
else the game's default: what ``runners.fake_llm`` plays). Its replies are a script's, shorter than a
model's and ending games sooner, so the forecast gives two figures:

- *expected*: the stand-in's games as played, replies counted as written or, with ``reply_tokens``,
  at that many tokens each (a resumed run uses its own mean);
- *at most*: every game running to its turn limit.

Cost assumes no prompt-cache hits, unless an earlier process of the run measured them: then each
model's prompt tokens are priced with the share its provider served from its prefix cache
(``cached_share``). In batch mode (``--batch``) the calls of models with a batch API are priced at
their batch factor (``prices.toml``'s ``[batch]``), and take the time the provider's batches take,
not the limits' (``batched``). Time is the larger of calls over requests per minute and tokens
over tokens per minute, for each limit (a model's, or a provider's shared one) configured or learned
by an earlier process of the run; a model with no known limit gets no time.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from puzzles import GAMES, Game

from engine.backends import CALL_GAME, Backend, BackendSettings, ModelHub, ProviderBackend, Request, split_name
from engine.backends.wire import Reply
from engine.backends.endpoints import known
from engine.backends.limiter import Limiter
from engine.spending.budget import PerGame
from engine.policies.factory import PolicyFactory, strategy_of
from engine.records.record import GameRecord
from engine.records.rundir import Plan
from engine.play.run import run_games

SAMPLED = 2  # seeds played per condition


class ModelForecast(msgspec.Struct):
    """One model's part of the run."""

    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    calls_max: float = 0.0
    tokens_max: float = 0.0
    cost: float | None = 0.0
    cost_max: float | None = 0.0
    cached_share: float = 0.0  # of the prompt tokens, priced as prefix-cache reads (measured by an earlier process)


class Forecast(msgspec.Struct):
    games: int  # games still to play
    sampled: int  # games played with the stand-in
    models: dict[str, ModelForecast]
    minutes: float | None  # at the known limits; None if a model has none
    unlimited: list[str]  # models with no known limit
    reply_tokens: float | None  # the reply size assumed, if not the stand-in's
    batched: list[str] = []  # models whose calls go in the providers' batches (--batch): batch prices, no time at the limits

    @property
    def calls(self) -> float:
        return sum(m.calls for m in self.models.values())

    @property
    def tokens(self) -> float:
        return sum(m.prompt_tokens + m.completion_tokens for m in self.models.values())

    @property
    def cost(self) -> float | None:
        costs = [m.cost for m in self.models.values()]
        return None if None in costs else sum(costs)  # type: ignore[arg-type]

    def per_game_at_most(self) -> PerGame:
        """A conservative figure for one game, for a spending cap before any game finishes."""
        games = max(self.games, 1)
        return PerGame(
            sum(m.cost_max or 0.0 for m in self.models.values()) / games,
            sum(m.tokens_max for m in self.models.values()) / games,
        )


class _StandIn(ProviderBackend):
    """A backend that answers without a call: a scripted strategy per (game, role), tokens counted."""

    def __init__(self, game: Game, strategy: str, reply_tokens: float | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.game = game
        self.strategy = strategy
        self.reply_tokens = reply_tokens
        self.agents: dict[tuple, Any] = {}

    async def _send(self, request: Request, call: str) -> tuple[Reply, dict[str, str]]:
        system, user, history = request.system, request.user, request.history
        count = self.tokenizer.count
        prompt = count(system) + count(user) + sum(count(a) + count(b) for a, b in history)
        found = self.game.faces.prompter.read(system, user)
        if found is None:  # a call the game's prompter did not write as a turn (a module's question)
            text = "Nothing to add."
        else:
            context = found[0]
            key = (CALL_GAME.get(), context.role)
            agent = self.agents.get(key)
            if agent is None:
                agent = self.agents[key] = self.game.rules.scripted[self.strategy](context.role, random.Random(repr(key)))
            text = (await agent.reply(context)).text
        completion = self.reply_tokens if self.reply_tokens is not None else count(text)
        return Reply(text, prompt, 0, 0, int(completion)), {}


class _StandInHub(ModelHub):
    def __init__(self, game: Game, settings: BackendSettings, reply_tokens: float | None) -> None:
        super().__init__(settings, environ={})
        self.game = game
        self.reply_tokens = reply_tokens

    def check(self, name: str, calls: bool = True) -> None:
        split_name(name)

    def backend(self, name: str) -> Backend:
        backend = self._backends.get(name)
        if backend is None:
            provider, model = split_name(name)
            strategy = strategy_of(model)
            if strategy not in self.game.rules.scripted:
                strategy = self.game.default_policy
            backend = self._backends[name] = self._providers[name] = _StandIn(
                self.game, strategy, self.reply_tokens, client=None, sdk=None, model=model,
                limiter=Limiter(name, max_in_flight=1 << 20, learn_limits=False, adaptive=False),
                options=self.settings.options, tokenizer=self.tokenizer, prices=self.prices, secrets=self.secrets,
                provider=provider,
            )
        return backend


def sampled_ids(plan: Plan, per_condition: int = SAMPLED) -> list[int]:
    seeds = min(per_condition, plan.seeds)
    return [c * plan.seeds + i for c in range(plan.total // plan.seeds) for i in range(seeds)]


async def play_sampled(
    plan: Plan, settings: BackendSettings, *, reply_tokens: float | None = None,
    per_condition: int = SAMPLED, games: Mapping[str, Game] = GAMES,
) -> list[GameRecord]:
    """The sampled games, played with the stand-in."""
    factory = PolicyFactory(settings)
    factory.hub = _StandInHub(plan.the_game(games), settings, reply_tokens)
    records: list[GameRecord] = []
    async with factory:
        await run_games(
            plan.specs_for(sampled_ids(plan, per_condition), games), factory=factory, concurrency=64,
            on_record=records.append, games=games,
        )
    return records


def _limits(settings: BackendSettings, earlier: Mapping[str, Any] | None, name: str) -> tuple[str, float | None, float | None]:
    """(limit group, rpm, tpm) of a model: configured, else learned by an earlier process."""
    provider, model = split_name(name)
    if provider in settings.shared_limits:
        return provider, settings.rpm.get(provider), settings.tpm.get(provider)
    learned = ((earlier or {}).get("models") or {}).get(name, {})
    rpm = settings.rpm.get(name, settings.rpm.get(provider, learned.get("rpm_limit")))
    tpm = settings.tpm.get(name, settings.tpm.get(provider, learned.get("tpm_limit")))
    return name, rpm, tpm


def forecast(
    plan: Plan, records: Iterable[GameRecord], settings: BackendSettings, *, to_play: Iterable[int],
    reply_tokens: float | None = None, earlier: Mapping[str, Any] | None = None, prices: Any = None,
) -> Forecast:
    """Scale the sampled games' ``records`` to the games ``to_play`` (ids), condition by condition."""
    prices = prices if prices is not None else ModelHub(settings).prices
    shares = cached_shares(earlier)
    by_condition: dict[int, list[GameRecord]] = defaultdict(list)
    for record in records:
        by_condition[record.game_id // plan.seeds].append(record)
    remaining = Counter(game_id // plan.seeds for game_id in to_play)
    models: dict[str, ModelForecast] = {}
    batched = batched_models(settings, {name for kept in by_condition.values() for r in kept for name in r.spec.agents.values()})
    for condition, count in remaining.items():
        sampled = by_condition.get(condition, [])
        for record in sampled:
            scale = count / len(sampled)
            stretch = record.spec.max_turns / max(record.turns, 1)  # to the turn limit
            for role, usage in (record.usage or {}).items():
                name = record.spec.agents[role]
                m = models.setdefault(name, ModelForecast())
                provider, model = split_name(name)
                completion = usage.completion_tokens if reply_tokens is None else reply_tokens * usage.calls
                m.cached_share = shares.get(name, 0.0)
                cached = int(usage.prompt_tokens * m.cached_share)
                cost = prices.cost(provider, model, usage.prompt_tokens, cached, 0, int(completion), batch=name in batched)
                m.calls += usage.calls * scale
                m.prompt_tokens += usage.prompt_tokens * scale
                m.completion_tokens += completion * scale
                m.calls_max += usage.calls * scale * stretch
                m.tokens_max += (usage.prompt_tokens + completion) * scale * stretch
                if cost is None:
                    m.cost = m.cost_max = None
                elif m.cost is not None and m.cost_max is not None:
                    m.cost += cost * scale
                    m.cost_max += cost * scale * stretch
    groups: dict[str, list[float]] = {}
    unlimited: list[str] = []
    for name, m in models.items():
        if name in batched:
            continue
        group, rpm, tpm = _limits(settings, earlier, name)
        if rpm is None and tpm is None:
            unlimited.append(name)
            continue
        calls_tokens = groups.setdefault(group, [0.0, 0.0, rpm or 0.0, tpm or 0.0])
        calls_tokens[0] += m.calls
        calls_tokens[1] += m.prompt_tokens + m.completion_tokens
    minutes = max(
        (max(calls / rpm if rpm else 0.0, tokens / tpm if tpm else 0.0) for calls, tokens, rpm, tpm in groups.values()),
        default=0.0,
    )
    return Forecast(
        games=remaining.total(), sampled=sum(len(v) for v in by_condition.values()), models=models,
        minutes=None if unlimited or (batched and not groups) else minutes, unlimited=sorted(unlimited),
        reply_tokens=reply_tokens, batched=sorted(batched),
    )


def batched_models(settings: BackendSettings, names: Iterable[str]) -> set[str]:
    """The models of ``names`` whose calls go in the providers' batches (``--batch``)."""
    if not settings.batch.enabled:
        return set()
    from engine.backends.batch import batchable

    found = set()
    for name in names:
        if ":" in name:
            provider = split_name(name)[0]
            if provider in known(settings.endpoints) and batchable(provider, settings.endpoint(provider).kind, settings.endpoint(provider).batches):
                found.add(name)
    return found


def cached_shares(earlier: Mapping[str, Any] | None) -> dict[str, float]:
    """Per model, the share of its prompt tokens the provider served from its prefix cache in the
    calls an earlier process of the run made (``usage.json``); models it did not call are absent."""
    models = (earlier or {}).get("models") or {}
    return {
        name: min(1.0, (m.get("cached_tokens") or 0) / m["prompt_tokens"])
        for name, m in models.items() if m.get("prompt_tokens")
    }


def mean_reply_tokens(earlier: Mapping[str, Any] | None) -> float | None:
    """The mean reply size of the calls an earlier process of the run made, if any."""
    models = (earlier or {}).get("models") or {}
    calls = sum(m.get("calls") or 0 for m in models.values())
    return sum(m.get("completion_tokens") or 0 for m in models.values()) / calls if calls else None


__all__ = ["Forecast", "ModelForecast", "batched_models", "cached_shares", "forecast", "mean_reply_tokens", "play_sampled", "sampled_ids"]
