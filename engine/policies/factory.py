"""Turning a policy name into a policy for one agent of one game.

One ``PolicyFactory`` serves a whole run; shared resources (model clients, limiters) hang off it,
never off module globals. A name is one of three things:

- a scripted strategy of the game (``share_everything``);
- a model, ``ENDPOINT:MODEL`` (``openai:gpt-4o``, ``anthropic:claude-sonnet-4-5``, ``vllm:MODEL``, or
  a named endpoint: ``openrouter:meta-llama/llama-3.1-70b-instruct``), which plays through the game's
  prompter;
- ``human``: a person plays the seat, through the front end of the factory's ``seats`` (the
  terminal, a browser page; ``engine.policies.seat``);
- a policy of the user's own, ``package.module:NAME``: a class or function called as a scripted
  strategy is, ``NAME(role, rng)``, returning an object with ``async reply(context) -> Answer``
  (``puzzles.policy``). One whose ``reply`` returns the reply's text, a plain ``str``, plays too:
  ``TextPolicy`` wraps it. The module path has a dot, which no endpoint name has; that is how the
  two are told apart.

Use the factory as ``async with factory:`` around the games when models play (it opens and closes
their clients).
"""

from __future__ import annotations

import inspect
import random
from importlib import import_module
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from puzzles import GAMES, Answer, Game, Policy, ReplyGrammar, SamplingPolicy, TurnContext, implements

from engine.backends.settings import BackendSettings, split_name
from engine.policies.seat import DEFAULT_ABSENT_AFTER, DEFAULT_TURN_SECONDS, HUMAN, HumanPolicy

if TYPE_CHECKING:
    from engine.backends import ModelHub
    from engine.plan.grid import Grid

MODEL_FORMS = ("openai:MODEL", "anthropic:MODEL", "vllm:MODEL", "ENDPOINT:MODEL", "package.module:Policy")


def _normal(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def is_model(name: str) -> bool:
    return ":" in name and not is_import(name)


def models_play(plan: Grid) -> bool:
    """Whether a model plays any seat of the plan."""
    return any(is_model(name) for names in plan.agents for name in names)


def is_human(name: str) -> bool:
    """A seat a person plays."""
    return _normal(name) == HUMAN


def is_import(name: str) -> bool:
    """``package.module:NAME``: a policy of the user's own."""
    return "." in name.partition(":")[0] and ":" in name


NOT_A_POLICY = "give a class with 'async def reply(self, context)' built with (role, rng) or with nothing, or a function (role, rng) returning one"


def _takes(found: Any, *arguments: Any) -> bool:
    """Whether ``found`` can be called with ``arguments`` (True where it has no signature to read)."""
    try:
        inspect.signature(found).bind(*arguments)
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): let the call decide
        pass
    return True


def _makes_policy(found: Any) -> bool:
    """A class with an async ``reply`` built as ``NAME(role, rng)`` or ``NAME()``, or a plain function
    that takes (role, rng)."""
    if inspect.isclass(found):
        built = _takes(found, "role", random.Random(0)) or _takes(found)
        return built and inspect.iscoroutinefunction(getattr(found, "reply", None))
    if not callable(found) or inspect.iscoroutinefunction(found):
        return False
    return _takes(found, "role", random.Random(0))


def build_own(found: Any, role: str, rng: random.Random) -> Any:
    """A policy of the user's own, built as ``NAME(role, rng)`` (the seat's role and a ``random.Random``
    seeded from the game and the role), or as ``NAME()`` where its class takes no arguments."""
    if inspect.isclass(found) and not _takes(found, role, rng):
        return found()
    return found(role, rng)


def import_policy(name: str) -> Any:
    """The object ``package.module:NAME`` names. ValueError with a one-line reason if it cannot be
    imported or is not a policy."""
    module_name, _, attribute = name.strip().partition(":")
    try:
        found: Any = import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name} for the policy {name!r}: {exc}") from None
    except Exception as exc:  # the user's module failed while it was imported
        raise ValueError(f"importing {module_name} for the policy {name!r} failed: {type(exc).__name__}: {exc}") from None
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ValueError(f"{module_name} has no {attribute!r} (the policy {name!r})")
        found = getattr(found, part)
    if not _makes_policy(found):
        raise ValueError(f"{name} is not a policy: {NOT_A_POLICY}")
    return found


class TextPolicy:
    """A policy of the user's own as the engine plays it: what its ``reply`` returns is the turn's
    ``Answer``, or the reply's text (a plain ``str``, as policies returned before ``Answer``), which
    becomes an ``Answer`` with nothing else known."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    async def reply(self, context: TurnContext) -> Answer:
        answer = await self.policy.reply(context)
        return answer if isinstance(answer, Answer) else Answer(answer)


def own_policy(policy: Any) -> Policy:
    """A policy of the user's own, wrapped once when it is made: a ``SamplingPolicy`` (best of n
    sampled itself) answers with ``Answer`` already and plays as it is; any other in a ``TextPolicy``."""
    return policy if implements(policy, SamplingPolicy) else TextPolicy(policy)


def strategy_of(model: str) -> str:
    """The scripted strategy a model name asks a stand-in to play (the local model server, the
    forecast): its last path part, lower case, dashes as underscores."""
    return model.rsplit("/", 1)[-1].strip().lower().replace("-", "_")


def scripted_rng(seed: int, role: str) -> random.Random:
    """The randomness of a scripted policy playing ``role`` in the game of ``seed`` (the local
    model server seeds its players the same way)."""
    return random.Random(f"{seed}:{role}")


class PolicyFactory:
    """``seats``, ``turn_seconds`` and ``absent_after``: where people sit and how long a turn waits
    for them (``engine.policies.seat``); a run with a human seat sets them before its games start.
    ``own``: policies of your own by name, each a class or function as ``package.module:NAME`` names
    one on the command line, built the same way (``build_own``)."""

    def __init__(self, backends: BackendSettings | None = None, environ=None, *, own: Mapping[str, Any] | None = None) -> None:
        self._backends, self._environ = backends, environ
        self._hub: ModelHub | None = None
        self._imported: dict[str, Any] = {}
        self.own = dict(own or {})
        for name, found in self.own.items():
            if not _makes_policy(found):
                raise ValueError(f"{name} is not a policy: {NOT_A_POLICY}")
        self.seats: Any = None
        self.turn_seconds = DEFAULT_TURN_SECONDS
        self.absent_after = DEFAULT_ABSENT_AFTER

    @property
    def hub(self) -> ModelHub:
        """The run's model clients and limiters, built when first asked for: the model clients'
        module (``engine.backends.hub``) is imported then, not with the factory."""
        if self._hub is None:
            from engine.backends.hub import ModelHub

            self._hub = ModelHub(self._backends, self._environ)
        return self._hub

    @hub.setter
    def hub(self, hub: ModelHub) -> None:
        self._hub = hub

    @property
    def settings(self) -> BackendSettings:
        """How models are called: the hub's settings, read without building the hub."""
        return self._hub.settings if self._hub is not None else self._backends or BackendSettings()

    def configure(self, backends: BackendSettings) -> None:
        """Set how models are called (before any policy is made)."""
        self._backends, self._hub = backends, None

    def names(self, game: Game) -> list[str]:
        return sorted(game.rules.scripted) + [HUMAN] + list(MODEL_FORMS)

    def colon_spelling(self, name: str) -> str:
        """``provider/model`` (the spelling of inspect_ai and of model hubs) as ``provider:model`` when
        ``provider`` is an endpoint this factory knows; any other name as it is."""
        if ":" in name or "/" not in name:
            return name
        provider, _, model = name.strip().partition("/")
        from engine.backends.endpoints import known

        return f"{provider}:{model}" if provider.lower() in known(self.hub.settings.endpoints) else name

    def canonical(self, name: str) -> str:
        """The name as it is saved with a run: one spelling per policy (a model name keeps its case)."""
        if is_import(name) or name in self.own:
            return name.strip()
        name = self.colon_spelling(name)
        if is_model(name):
            provider, model = name.split(":", 1)
            return f"{provider.strip().lower()}:{model.strip()}"
        normal = _normal(name)
        known = normal == HUMAN or any(normal in game.rules.scripted for game in GAMES.values())
        return normal if known else name.strip()  # a name no game knows is quoted as it was written

    def check(self, name: str, game: Game, role: str | None = None, *, calls: bool = True) -> None:
        """Raise ValueError with a one-line reason if ``name`` is not a policy this factory can make
        for ``game``: a policy of the user's own is made once for ``role`` (when given), so that one
        that fails when made is refused before any game. ``calls=False`` (a forecast, which sends
        nothing) does not ask for a model's API key."""
        if is_import(name):
            found = self._policy_class(name)
            if role is not None:
                try:
                    build_own(found, role, scripted_rng(0, role))
                except Exception as exc:  # the user's code failed: one line, before any game
                    raise ValueError(f"{name} failed when made for {role}: {type(exc).__name__}: {exc}") from None
            return
        if name in self.own:
            return
        if is_model(name):
            self.hub.check(name, calls=calls)
            if (self.hub.settings.options.structured and implements(game.faces.prompter, ReplyGrammar)
                    and not self.hub.takes_grammar(name)):
                raise ValueError(f"--structured holds {game.name}'s replies (text in its own format) to a grammar, which {name} "
                                 "does not take (llama.cpp and vLLM servers do); play it without --structured")
            if self.hub.settings.options.tokens and self.hub.token_form(name) is None:
                raise ValueError(f"--tokens needs each call's token ids and log-probabilities, which {name}'s server does not "
                                 "return (vLLM's and llama.cpp's do: vllm:MODEL, llamacpp:MODEL, an endpoint with tokens = "
                                 "\"vllm\" or \"llamacpp\" on the lean client); play it without --tokens")
            if self.hub.settings.options.tokens and self.hub.settings.stream and self.hub.token_form(name) == "llamacpp":
                raise ValueError(f"--tokens with --stream: {name}'s server (llama.cpp's) leaves the end-of-turn token out of a "
                                 "streamed reply's tokens; play --tokens without --stream")
            return
        if is_human(name):
            return
        if _normal(name) not in game.rules.scripted:
            raise ValueError(f"unknown policy {name!r} for {game.name}; choose from {', '.join(self.names(game))}")

    def _policy_class(self, name: str) -> Any:
        found = self._imported.get(name)
        if found is None:
            found = self._imported[name] = import_policy(name)
        return found

    def make(self, name: str, role: str, seed: int, game: Game) -> Policy:
        if is_import(name) or name in self.own:
            found = self.own[name] if name in self.own else self._policy_class(name)
            return own_policy(build_own(found, role, scripted_rng(seed, role)))
        if is_model(name):
            from engine.policies.llm import LLMPolicy

            split_name(name)
            backend = self.hub.backend(self.canonical(name))
            options = self.hub.settings.options
            return LLMPolicy(backend, game.faces.prompter, structured=options.structured, tokens=options.tokens)
        if is_human(name):
            if self.seats is None:
                raise ValueError(f"{role} is played by a person, but this run has no seat for one (the terminal, a page)")
            front = self.seats.front(role, seed)
            return HumanPolicy(game, front, seconds=self.turn_seconds, absent_after=self.absent_after)
        self.check(name, game)
        return game.rules.scripted[_normal(name)](role, scripted_rng(seed, role))

    async def __aenter__(self) -> PolicyFactory:
        await self.hub.__aenter__()
        return self

    async def __aexit__(self, *exc_info) -> bool | None:
        return await self.hub.__aexit__(*exc_info)
