"""How the local model server plays: it reads each prompt back with the games' prompters and answers
as a scripted strategy would.

Every registered game is asked to read the prompt (``Prompter.read``); the first that can gives the
context and a key for the agent it was written for. The strategy is the one the model is named
after (``openai:one_piece`` plays ``one_piece``) if the game has it, else the server's default. Each
agent keeps its own strategy object, found by (game, strategy, key), so strategies that remember
earlier turns play as they do in process; for a game whose agents keep their whole chat, a fresh
strategy object replays the chat's earlier prompts instead. A prompt no game can read gets a reply
without JSON.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from puzzles import GAMES, Game

MAX_AGENTS_KEPT = 100_000


def strategy_names(games: Mapping[str, Game] = GAMES) -> list[str]:
    """Every scripted strategy of any game, sorted."""
    return sorted({name for game in games.values() for name in game.scripted})


def strategy_of(model: str) -> str:
    """The strategy a model name asks for: its last path part, lower case, dashes as underscores."""
    return model.rsplit("/", 1)[-1].strip().lower().replace("-", "_")


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

    def _read(self, system: str, user: str) -> tuple[Game, Any, Any] | None:
        for game in self.games.values():
            found = game.prompter.read(system, user)
            if found is not None:
                return game, *found
        return None

    def _agent(self, game: Game, strategy: str, key: Any, role: str) -> Any:
        agent_key = (game.name, strategy, key)
        policy = self.agents.get(agent_key)
        if policy is None:
            policy = game.scripted[strategy](role, random.Random(repr(agent_key)))
            self.agents[agent_key] = policy
            if len(self.agents) > self.kept:
                self.agents.popitem(last=False)
        else:
            self.agents.move_to_end(agent_key)
        return policy

    async def reply(self, model: str, system: str, users: list[str]) -> str:
        """The reply to one prompt (``users[-1]``, after a chat's earlier user prompts), as the strategy
        the model names (or the default) would write it."""
        found = self._read(system, users[-1])
        if found is None:
            return "I cannot read this prompt (no game wrote it), so I have nothing to answer."
        game, context, key = found
        strategy = strategy_of(model)
        if strategy not in game.scripted:
            strategy = self.default
        if strategy not in game.scripted:
            return f"I cannot play {game.name} as {strategy!r}: it has no such strategy."
        if getattr(game.prompter, "chat_memory", False):
            # A chat carries the agent's memory: a fresh agent replays it (nothing kept, nothing mixed
            # up between games that look alike).
            agent = game.scripted[strategy](context.role, random.Random(repr((game.name, strategy, key))))
            for user in users[:-1]:
                earlier = game.prompter.read(system, user)
                if earlier is not None:
                    await agent.reply(earlier[0])
            return await agent.reply(context)
        return await self._agent(game, strategy, key, context.role).reply(context)
