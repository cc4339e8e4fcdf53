"""A PettingZoo AEC environment over any registered game: your own loop drives the game's turn
machine (``puzzles.referee.Referee``), one agent at a time, as the engine's actors do.

    from engine.play.aec import env
    e = env(game="NAME", seed=0)            # the game's parameters as keywords: env(game=..., size=4)
    e.reset(seed=7)
    for agent in e.agent_iter():
        observation, reward, terminated, truncated, info = e.last()
        system, user = e.prompt(agent)      # the prompt a model would be sent
        e.step(None if terminated or truncated else my_reply(system, user))

Spaces, chosen so that they say exactly what passes between the game and an agent:

- **observation**: the agent's prompt (the game prompter's system and user parts, joined by a blank
  line) as UTF-8 bytes in a ``Box(0, 255, (max_prompt_bytes,), uint8)``, zero-padded; a longer
  prompt is cut (``info["cut"]``). ``env.text(observation)`` decodes it; ``env.prompt(agent)`` gives
  the two parts whole. PettingZoo's API test wants a numeric array for the observation, not a string.
- **action**: the reply text, in the game's reply format (``gymnasium.spaces.Text``; its samples are
  random printable characters, which a game reads as a format error). The game's ``Prompter.parse``
  reads it; a reply that cannot be read uses up the turn and applies nothing, as in a run, and the
  agent is told so in its next prompt.
- **reward**: 1 to every agent when the game ends in success, else 0 (the games are cooperative);
  ``info["scores"]`` and ``info["outcome"]`` hold the game's own scores at the end.
- **termination**: the game says it is over (solved); **truncation**: the turn limit is reached.

Every partner hears every message (no channel: budgets, noise and delays are the engine's, not the
turn machine's); feedback, notices and the conversation window (``history``) are as in a run.
Best-of-n sampling (a game's ``candidates_wanted``) and a prompter's own modules (``prepare``) are
not offered here: an agent gets one prompt and sends one reply per turn.
"""

from __future__ import annotations

import string
from typing import Any

import msgspec

try:
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import AgentSelector
except ImportError as exc:  # pragma: no cover - the optional extra
    raise ImportError(f"the PettingZoo environment needs the pettingzoo extra: pip install 'asymgames[pettingzoo]' ({exc})") from exc

from actors.agent import recent_lines
from puzzles import DEFAULT_GAME, GAMES, ChatLine, Game, Reply, ReplyFormatError, Turn, TurnContext, get_game
from puzzles.referee import Referee, TurnOrder
from puzzles.testing import run_now

from engine.policies.factory import scripted_rng

MAX_PROMPT_BYTES = 1 << 16
MAX_REPLY_CHARS = 4096  # of the action space's samples; a reply of any length is read


class GameEnv(AECEnv):
    metadata = {"name": "asymgames_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}

    def __init__(
        self, game: str = DEFAULT_GAME, *, seed: int = 0, roles: tuple[str, ...] | None = None,
        max_turns: int | None = None, feedback: str | None = None, history: int | None = 1,
        turn_order: TurnOrder = "round_robin", max_prompt_bytes: int = MAX_PROMPT_BYTES, render_mode: str | None = None,
        games: dict[str, Game] | None = None, **params: Any,
    ) -> None:
        super().__init__()
        self.game = get_game(game, GAMES if games is None else games)
        chosen: Any = msgspec.convert({"game": self.game.name, **params}, self.game.rules.Params)
        chosen.check()
        self.params = chosen
        self.roles = tuple(roles) if roles is not None else self.game.rules.rosters[0]
        if self.roles not in self.game.rules.rosters:
            raise ValueError(f"{self.game.name} is played by {' or '.join('/'.join(r) for r in self.game.rules.rosters)}, not {'/'.join(self.roles)}")
        self.max_turns = max_turns or self.game.rules.default_max_turns(self.params, self.roles)
        self.feedback_mode = feedback or self.game.rules.default_feedback
        if self.feedback_mode not in self.game.rules.feedback:
            raise ValueError(f"unknown feedback {self.feedback_mode!r}; choose from {', '.join(self.game.rules.feedback)}")
        self.history = history
        self.turn_order = turn_order
        self.render_mode = render_mode
        self.possible_agents = list(self.roles)
        self.max_prompt_bytes = max_prompt_bytes
        self._observation_space = spaces.Box(0, 255, (max_prompt_bytes,), np.uint8)
        self._action_space = spaces.Text(MAX_REPLY_CHARS, min_length=0, charset=string.printable)
        self._seed = seed
        self.referee: Referee | None = None

    def observation_space(self, agent: str) -> spaces.Box:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Text:
        return self._action_space

    # ---- the game ----

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new game: ``seed`` picks it (the engine's game seed); without one, the next seed."""
        self.seed_used = self._seed if seed is None else seed
        self._seed = self.seed_used + 1
        if seed is not None:
            self._action_space.seed(seed)
        if self.game.rules.prepare is not None:
            self.game.rules.prepare(self.params, self.seed_used)
        self.state = self.game.rules.new(self.params, self.seed_used, self.roles, self.max_turns)
        self.referee = Referee(self.state, turn_order=self.turn_order)
        self.agents = list(self.roles)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {"turn": 1} for agent in self.agents}
        self._heard: dict[str, list[ChatLine]] = {agent: [] for agent in self.agents}
        self._contexts: dict[str, TurnContext] = {}
        self._asked: list[str] = []
        self._ask(self.referee.start())
        self._selector = AgentSelector(self.agents)  # kept for wrappers that look for one

    def _ask(self, roles: tuple[str, ...]) -> None:
        self._asked.extend(roles)
        self.agent_selection = self._asked[0]
        if len(roles) > 1:  # a simultaneous round: everyone acts on the state and messages at its start
            for role in roles:
                self.context(role)

    def context(self, agent: str) -> TurnContext:
        """What ``agent`` is shown: for an agent whose turn it is, what it acts on (its notices are
        taken once); for another, what it would be shown now."""
        context = self._contexts.get(agent)
        if context is not None:
            return context
        assert self.referee is not None
        asked = agent in self._asked
        context = TurnContext(
            game_id=self.seed_used, role=agent, turn=self.referee.turn, max_turns=self.state.max_turns,
            view=self.state.view(agent), feedback=self.game.rules.feedback[self.feedback_mode](self.state, agent),
            conversation=recent_lines(self._heard[agent], self.history, agent),
            notices=self.referee.notices(agent) if asked else (), partners=tuple(r for r in self.roles if r != agent),
        )
        if asked:
            self._contexts[agent] = context
        return context

    def prompt(self, agent: str) -> tuple[str, str]:
        """(system, user): the prompt ``agent`` is shown now, as a model policy would be sent it."""
        return self.game.faces.prompter.render(self.context(agent))

    def observe(self, agent: str) -> np.ndarray:
        system, user = self.prompt(agent)
        data = f"{system}\n\n{user}".encode("utf-8")
        size = self.max_prompt_bytes
        self.infos[agent]["cut"] = len(data) > size
        observation = np.zeros(size, np.uint8)
        observation[: min(len(data), size)] = np.frombuffer(data[:size], np.uint8)
        return observation

    @staticmethod
    def text(observation: np.ndarray) -> str:
        """The prompt an observation holds."""
        return bytes(observation).rstrip(b"\0").decode("utf-8", errors="replace")

    def step(self, action: str | Reply | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if not isinstance(action, (str, Reply)):
            raise TypeError(f"an action is the reply text (str), got {type(action).__name__}")
        assert self.referee is not None
        context = self.context(agent)
        turn = self.referee.turn
        chars = len(action) if isinstance(action, str) else 0
        try:
            reply = action if isinstance(action, Reply) else self.game.faces.prompter.parse(action, context)
            played = Turn(turn=turn, role=agent, message=reply.message, actions=reply.actions, rejected=reply.rejected, reply_chars=chars)
        except ReplyFormatError as exc:
            reply, played = None, Turn(turn=turn, role=agent, format_error=str(exc), reply_chars=chars)
        if reply is not None and reply.message:
            for listener in self.roles:
                self._heard[listener].append(ChatLine(turn, agent, reply.message))
        following = self.referee.play(played)
        for said in following.say:
            for listener in ((said.to,) if said.to else context.partners):
                self._heard[listener].append(ChatLine(turn, agent, said.text))
        self._contexts.pop(agent, None)
        self._asked.pop(0)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if following.over:
            self._end()
        else:
            self._ask(following.ask)
            for role in self.agents:
                self.infos[role] = {"turn": self.referee.turn}
        self._accumulate_rewards()

    def _end(self) -> None:
        assert self.referee is not None
        outcome = self.referee.outcome
        solved = self.state.done()
        scores = self.state.scores()
        for agent in self.agents:
            self.rewards[agent] = 1.0 if outcome == "success" else 0.0
            self.terminations[agent] = solved
            self.truncations[agent] = not solved
            self.infos[agent] = {"turn": self.referee.turn, "outcome": outcome, "scores": scores}
        self.agent_selection = self.agents[0]

    def render(self) -> str | None:
        if self.referee is None:
            return None
        lines = [f"{self.game.name}, seed {self.seed_used}: turn {self.referee.turn} of {self.state.max_turns}"]
        lines += [f"  {role}: progress {self.state.progress(role)}" for role in self.roles]
        heard = self._heard[self.roles[0]] if self.roles else []
        lines += [f"  {line.sender} (turn {line.turn}): {line.text}" for line in heard[-len(self.roles):]]
        text = "\n".join(lines)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        self.referee = None


def env(game: str = DEFAULT_GAME, **kwargs: Any) -> GameEnv:
    """The environment of ``game`` (a registered game's name); see ``GameEnv`` for the keywords."""
    return GameEnv(game, **kwargs)


class ScriptedPlayers:
    """The game's scripted strategies as players in your loop (a partner for your agent, or a
    baseline): ``players.reply(agent)`` is the reply of ``agent``'s strategy to its current context.
    Each game (each reset) gets fresh strategy objects, seeded as a run seeds them."""

    def __init__(self, env: GameEnv, strategies: dict[str, str] | None = None) -> None:
        self.env = env
        self.strategies = strategies or {}
        self._game: int | None = None
        self._players: dict[str, Any] = {}

    def reply(self, agent: str) -> str:
        if self._game != self.env.seed_used:
            self._game, self._players = self.env.seed_used, {}
        player = self._players.get(agent)
        if player is None:
            name = self.strategies.get(agent, self.env.game.default_policy)
            player = self._players[agent] = self.env.game.rules.scripted[name](agent, scripted_rng(self.env.seed_used, agent))
        return run_now(player.reply(self.env.context(agent))).text


__all__ = ["GameEnv", "ScriptedPlayers", "env"]
