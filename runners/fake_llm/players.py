"""How the local model server plays: it reads each prompt back with the games' prompters and answers
as a scripted strategy would.

Every registered game is asked to read the prompt (``Prompter.read``); the first that can gives the
context and the role it was written for. The strategy is the one the model is named after
(``openai:one_piece`` plays ``one_piece``) if the game has it, else the server's default.

A player's state belongs to one agent of one game. The engine names the game of every call in the
``X-Game-Id`` header (``engine.backends.GAME_HEADER``: the run, the game and its seed), so:

- with the header, each (game, role) has its own strategy object, kept across its turns, whose
  randomness is seeded as in process (from the game's seed and the role), so a game through the
  server is the game played in process. The samples of a best-of-n turn are calls of their own:
  each advances the player once, as in process the n samples are n calls one after another, in the
  order the calls arrive. A call the engine makes again (the ``X-Call-Id`` header it sends with
  every attempt of one call, ``engine.backends.settings.CALL_HEADER``) gets the reply its first
  attempt got, without the player playing on: a client that gave up waiting (a timeout on a busy
  machine) and asked again meets the same player it asked first.
- without it (another client), nothing is kept: each call is answered by a fresh strategy object
  seeded from the agent's prompt, so no game can see another's; strategies that remember earlier
  turns then remember nothing.
- for a game whose agents keep their whole chat (``chat_memory``), a fresh strategy object replays
  the chat's earlier prompts every call, seeded as above; nothing is kept either way.

A prompt no game can read gets a reply without JSON.
"""

from __future__ import annotations

import random
import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from engine.policies import scripted_rng, strategy_of
from puzzles import GAMES, Game

MAX_AGENTS_KEPT = 100_000
_SEED = re.compile(r";seed=(-?\d+)$")


def strategy_names(games: Mapping[str, Game] = GAMES) -> list[str]:
    """Every scripted strategy of any game, sorted."""
    return sorted({name for game in games.values() for name in game.rules.scripted})


def game_rng(game_id: str, role: str) -> random.Random:
    """A player's randomness for the game named ``game_id``: as in process when it carries the
    game's seed, else from the name."""
    seed = _SEED.search(game_id)
    return scripted_rng(int(seed.group(1)), role) if seed else random.Random(f"{game_id}:{role}")


class Players:
    """The scripted agents behind the server's replies, one per agent of each game seen."""

    def __init__(self, default: str, games: Mapping[str, Game] = GAMES, kept: int = MAX_AGENTS_KEPT) -> None:
        known = strategy_names(games)
        if default not in known:
            raise ValueError(f"unknown strategy {default!r}; choose from {', '.join(known)}")
        self.default = default
        self.games = games
        self.kept = kept
        self.agents: OrderedDict[tuple, Any] = OrderedDict()
        self.answered: OrderedDict[tuple, str] = OrderedDict()  # (agent, call id) -> the reply it got

    def _read(self, system: str, user: str) -> tuple[Game, Any, Any] | None:
        for game in self.games.values():
            found = game.faces.prompter.read(system, user)
            if found is not None:
                return game, *found
        return None

    def _agent(self, game: Game, strategy: str, game_id: str, role: str) -> Any:
        agent_key = (game_id, game.name, strategy, role)
        policy = self.agents.get(agent_key)
        if policy is None:
            policy = game.rules.scripted[strategy](role, game_rng(game_id, role))
            self.agents[agent_key] = policy
            if len(self.agents) > self.kept:
                self.agents.popitem(last=False)
        else:
            self.agents.move_to_end(agent_key)
        return policy

    async def reply(self, model: str, system: str, users: list[str], game_id: str | None = None, call_id: str | None = None) -> str:
        """The reply to one prompt (``users[-1]``, after a chat's earlier user prompts), as the strategy
        the model names (or the default) would write it; ``game_id`` is the game the call names,
        ``call_id`` the call (the same for each attempt at it)."""
        found = self._read(system, users[-1])
        if found is None:
            return "I cannot read this prompt (no game wrote it), so I have nothing to answer."
        game, context, key = found
        strategy = strategy_of(model)
        if strategy not in game.rules.scripted:
            strategy = self.default
        if strategy not in game.rules.scripted:
            return f"I cannot play {game.name} as {strategy!r}: it has no such strategy."
        role = context.role
        if game_id is not None and not game.faces.prompter.chat_memory:
            key = (game_id, game.name, strategy, role, call_id)
            if call_id is not None and key in self.answered:
                return self.answered[key]
            text = (await self._agent(game, strategy, game_id, role).reply(context)).text
            if call_id is not None:
                self.answered[key] = text
                if len(self.answered) > self.kept:
                    self.answered.popitem(last=False)
            return text
        rng = game_rng(game_id, role) if game_id is not None else random.Random(repr((game.name, strategy, key)))
        agent = game.rules.scripted[strategy](role, rng)
        if game.faces.prompter.chat_memory:
            for user in users[:-1]:  # the chat carries the agent's memory: replay it
                earlier = game.faces.prompter.read(system, user)
                if earlier is not None:
                    await agent.reply(earlier[0])
        return (await agent.reply(context)).text
