"""The game contract: what the engine needs from a game, and nothing about any one game.

A game is one folder under ``puzzles/`` that builds a ``Game``: its parameters, how to start a game
in progress (a ``GameState``), its prompt, its feedback modes, its scripted strategies and how to
show a turn in a replay. The engine, actors and runners speak only this module and look games up by
name in ``puzzles.registry``.

- ``GameState`` is one game in progress: synchronous, deterministic, no event loop, no I/O. Every
  turn a role is shown ``view(role)`` (what it knows now, private and shared); what it does comes
  back through ``step``, which says what was applied, what was rejected and why, and what the game
  says to other roles on the acting role's behalf (share, ask, inform: sent through the channels, so
  budgets and noise apply to it like any message).
- The turn machine around it (whose turn, action limits, notices, the turn limit, the turn log) is
  ``puzzles.referee``; ``check_game`` in ``puzzles.testing`` is the conformance check every game passes.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import msgspec

Outcome = Literal["success", "failure"]
Score = bool | float


MAX_REPLY_CHARS = 100_000
"""A longer reply is not read: it is a format error, recorded with its length (about 25 times the
longest reply 4096 output tokens give)."""


def clean_text(text: str) -> str:
    """``text`` with every character that cannot be stored as UTF-8 (half of a surrogate pair)
    replaced by U+FFFD; text that can be stored comes back as it is."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class InvalidParameter(ValueError):
    """A parameter is out of range; ``field`` names it and the message says why in one line."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class ReplyFormatError(ValueError):
    """A reply cannot be read at all (the whole turn is lost); the message says why."""


class Rejected(msgspec.Struct, frozen=True, gc=False):
    """An action that was not applied, and why."""

    action: str
    reason: str


class Say(msgspec.Struct, frozen=True, gc=False):
    """Text the game sends from the acting role to ``to`` (every partner when None), through the
    channels, as the effect of a communicative action."""

    text: str
    to: str | None = None


class Step(msgspec.Struct, frozen=True, gc=False):
    """What came of one role's actions: how many were applied, the rejected ones with a reason, and
    what the game says to other roles."""

    applied: int = 0
    rejected: tuple[Rejected, ...] = ()
    say: tuple[Say, ...] = ()


class GameState(Protocol):
    """One game in progress. Roles act in ``roles`` order; the referee stops after ``max_turns`` rounds."""

    roles: tuple[str, ...]
    max_turns: int

    def view(self, role: str) -> Any:
        """What ``role`` knows now: its private information and the shared state. Never another
        role's private information."""

    def private(self, role: str) -> Any:
        """What only ``role`` knows at the start (for the leak audit)."""

    # Optional: ``secrets(role) -> tuple[str, ...]``, the phrases only ``role`` knows at the start as
    # its prompts write them, where word pairs cannot tell private from public (``engine.play.audit``).

    def step(self, role: str, actions: tuple[Any, ...]) -> Step:
        """Apply ``role``'s actions in order. A rejected action leaves the state as it was. A turn
        whose reply could not be read is stepped with no actions."""

    def done(self) -> bool:
        """The game is over before the turn limit (solved, agreed, ...)."""

    def outcome(self) -> Outcome:
        """Success or failure, asked when the game is done or the turn limit is reached."""

    def progress(self, role: str) -> float:
        """How far ``role`` is, in the game's own measure (shown on the dashboard and in the turn log)."""

    def scores(self) -> dict[str, Score]:
        """Graded results for the record: booleans (reported as rates with Wilson intervals) and
        numbers (reported as means with 95% intervals)."""

    def metrics(self) -> dict[str, Any]:
        """Game-owned detail for the record, JSON-encodable."""

    # Optional, for best-of-n games (environment verifiers):
    # ``candidates_wanted(role) -> int``: how many replies ``role`` samples for its coming turn;
    # ``choose(role, candidates) -> int``: which to play, each candidate being one reply's actions
    # (empty for a reply that could not be read). It must not change what ``view`` shows; the game
    # keeps what it wants of the choice for the step that follows.


class ChatLine(msgspec.Struct, frozen=True, gc=False):
    turn: int
    sender: str
    text: str


class TurnContext(msgspec.Struct, frozen=True, gc=False):
    """Everything an agent may use to act: its own view, never another agent's.

    ``reinjected`` is False where the agent's memory is its scratchpad and this is not its first
    turn: its private starting information is then not shown again (a prompt shows ``scratchpad``
    in its place).
    """

    game_id: int
    role: str
    turn: int
    max_turns: int
    view: Any
    feedback: Any
    conversation: tuple[ChatLine, ...]
    notices: tuple[str, ...] = ()
    partners: tuple[str, ...] = ()  # who this agent may talk to
    directed: bool = False  # each message goes to one partner, named in the reply's "to"
    scratchpad: str | None = None  # what the agent wrote for itself last turn, where allowed
    keeps_notes: bool = False  # the reply may carry a "scratchpad"
    reinjected: bool = True
    derived: Any = None  # what the agent's own modules worked out before this turn (``Prompter.prepare``)


class Reply(msgspec.Struct, frozen=True, gc=False):
    """A reply as read: the message to partners, the actions, the actions that could not be read."""

    message: str
    actions: tuple[Any, ...]
    rejected: tuple[Rejected, ...] = ()
    to: str | None = None  # the one recipient, where messages are directed
    scratchpad: str | None = None  # what the agent carries to its next turn, where allowed


class Policy(Protocol):
    """Decides what an agent says and does. Returns the raw reply text, in the game's reply format;
    the agent actor parses it exactly as it would parse a model's reply. A policy may also set
    ``last_usage`` (a ``bus.Usage``), ``last_prompt`` and, when a person played, ``last_human`` (a
    ``bus.HumanTurn``) after each reply; they go into the transcripts and the record with the turn.
    A policy with ``count_tokens(text)`` gets the sent message's tokens counted into its usage."""

    async def reply(self, context: TurnContext) -> str: ...


ScriptedFactory = Callable[[str, random.Random], Policy]
"""``factory(role, rng)``: a scripted policy for one role of one game."""

FeedbackFn = Callable[[Any, str], Any]
"""``feedback(state, role)``: what ``role`` is told about the state as it is when it is prompted."""


ModelCall = Callable[[str, str, str], Awaitable[str]]
"""``await ask(system, user, purpose)``: one more model call of an agent's turn (its text), counted
in the turn's usage and paced by the model's limiter like any call; ``purpose`` names it in transcripts."""


class Prompter(Protocol):
    """A game's side of the model policy: the prompt, the reply format and how to read replies.

    Two optional members shape the model agent (``actors.llm.LLMPolicy``) without the engine knowing
    the game:
    - ``chat_memory = True``: the agent keeps its whole chat with the model (the first turn's system
      prompt, then every turn's user prompt and the model's raw reply) and sends it every turn;
      otherwise each turn is a fresh (system, user) pair.
    - ``async prepare(context, notes, ask) -> TurnContext``: the agent's own modules, run before
      each turn's prompt is rendered: ``notes`` is a dict the agent keeps across its turns, ``ask`` a
      ``ModelCall``; what they work out goes to the prompt as the returned context's ``derived``.
    """

    def render(self, context: TurnContext) -> tuple[str, str]:
        """(system, user) for one agent turn."""

    def schema(self, context: TurnContext) -> dict[str, Any] | None:
        """The reply as a JSON schema for structured outputs, or None if the game has none."""

    def parse(self, text: str, context: TurnContext) -> Reply:
        """Read the reply to ``context``; raise ReplyFormatError if it cannot be read."""

    def format(self, reply: Reply, prose: str = "") -> str:
        """A reply in the game's own format (scripted policies write this; ``parse`` reads it back)."""

    def read(self, system: str, user: str) -> tuple[TurnContext, Any] | None:
        """The context a prompt shows and a key for the agent it was written for, or None if the
        prompt is not one of this game's (the local model server plays games through this)."""


def no_feedback(state: Any, role: str) -> None:
    return None


@dataclass(frozen=True)
class Game:
    """Everything the engine knows about one game.

    - ``Params``: a msgspec Struct tagged with the game's name (``tag_field="game"``), every field
      with a default, and these methods: ``check()`` raises InvalidParameter; ``labels()`` gives the
      condition labels (name -> value, in display order); ``normal()`` gives the one spelling of an
      equivalent parameter set. A class variable ``HELP`` (field -> text) describes the fields for
      the command line.
    - ``rosters``: the role lists the game can be played with, in turn order; the first is the default.
    - ``new(params, seed, roles, max_turns)``: a fresh game, the same for the same arguments.
    - ``default_max_turns(params, roles)``: the turn limit when none is given.
    - ``Action``: the type that actions decode to from JSON (transcripts, replays).
    - ``feedback``: modes by name, ``default_feedback`` the one used when none is given.
    - ``scripted``: offline strategies by name.
    - ``sort_keys``: for condition labels whose values do not sort as text, a key function.
    - ``score_labels``: display names of score keys (a key ``name.role`` shows as ``label role``).
    - ``replay``: the game's side of the replay viewer (``runners.replay``), or None (actions then
      show as JSON, progress as a number). The viewer shows what every game has (outcome,
      condition, seed, error; per turn the notices, format error, message, deliveries, rejected
      actions and progress); it rebuilds the game with ``new`` and applies each turn's actions
      (decoded to ``Action``) through ``step``. The object says the rest: ``header(state)`` (the
      solution, each role's private information), ``feedback(data)`` (a transcript's feedback as it
      reads, or None), ``actions(actions)`` (one turn's actions in one line), ``after(state, role)``
      (what the role's turn left in the state) and ``progress(state, value)``; lines are tuples of
      ``Span(text, mark)`` (``puzzles.common.replay``, with ``PositionReplay`` for position games).
      Optionally ``board(state)``: the state drawn as a table (``Board``: the AsymPuzl and chain
      positions, the TSP hallways, the Einstein bins), which the terminal replay and the HTML viewer
      (``runners.view``) show at the start and the end.
    - ``invalid_examples(state, role)``: actions the game must reject in ``state`` (the conformance
      check in ``puzzles.testing`` plays them and checks that nothing changed).
    - ``format_1``: for games that results format 1 wrote, how to read them (``engine.records.upgrade``):
      ``params(flat_fields)`` and ``figures(record) -> (scores, metrics, old field names)``.
    - ``prepare(params, seed)``: slow work a game needs before it starts (planning an instance's
      optimum into a cache, say), which the engine runs in a worker thread so that the event loop
      goes on serving the other games; None for games that have none.
    - ``upgrade(params, scores, metrics)``: a record the game wrote before it changed what it
      records, as it records it now (the same three back when the record is current); applied to
      every format-2 record read. None for games that never changed.
    - ``instance(state)``: what a third party needs to check a game's transcript on its own (the
      truth, each role's private information), JSON-encodable, from the game as it starts; written
      once per game in transcripts. None: transcripts carry no instance.
    - ``seat``: what a person in a seat is shown and the forms they act through (``puzzles.seat``);
      None: a stand-in built from the prompt and ``Action``.
    - ``human_study``: the scores the game's papers report for games with a person in a seat, each
      with its label (the reports' table of human seats); empty: the success rate alone.
    - ``saved_before``: parameters added after runs of the game were first saved, each with the
      value the games of a run saved before it existed were played with; a saved plan that lacks
      one is read with that value, so that ``--resume`` plays on as the run began.
    """

    name: str
    Params: type[msgspec.Struct]
    rosters: tuple[tuple[str, ...], ...]
    new: Callable[[Any, int, tuple[str, ...], int], GameState]
    default_max_turns: Callable[[Any, tuple[str, ...]], int]
    prompter: Prompter
    Action: Any
    feedback: Mapping[str, FeedbackFn] = field(default_factory=lambda: {"none": no_feedback})
    default_feedback: str = "none"
    scripted: Mapping[str, ScriptedFactory] = field(default_factory=dict)
    sort_keys: Mapping[str, Callable[[str], Any]] = field(default_factory=dict)
    score_labels: Mapping[str, str] = field(default_factory=dict)
    replay: Any = None
    invalid_examples: Callable[[Any, str], Any] | None = None
    format_1: Any = None
    prepare: Callable[[Any, int], Any] | None = None
    upgrade: Callable[[Any, dict, dict], tuple[Any, dict, dict]] | None = None
    instance: Callable[[Any], Any] | None = None
    saved_before: Mapping[str, Any] = field(default_factory=dict)
    seat: Any = None
    human_study: Mapping[str, str] = field(default_factory=dict)
    description: str = ""

    @property
    def default_policy(self) -> str:
        """The scripted strategy a role plays when none is named."""
        return next(iter(self.scripted))

    @property
    def roles(self) -> tuple[str, ...]:
        """Every role any roster of the game uses, in first-seen order."""
        return tuple(dict.fromkeys(role for roster in self.rosters for role in roster))

    def roster(self, agents: int) -> tuple[str, ...]:
        """The roster for this many agents; InvalidParameter if the game cannot be played so."""
        for roster in self.rosters:
            if len(roster) == agents:
                return roster
        counts = sorted({len(r) for r in self.rosters})
        raise InvalidParameter("agents", f"{self.name} is played by {_counts(counts)} agents, got {agents}")

    def roster_for(self, named: list[str] | tuple[str, ...]) -> tuple[str, ...]:
        """The smallest roster that has every role in ``named``."""
        for roster in sorted(self.rosters, key=len):
            if set(named) <= set(roster):
                return roster
        unknown = [r for r in named if r not in self.roles]
        if unknown:
            raise InvalidParameter("agents", f"{self.name} has no role {unknown[0]!r}; its roles are {', '.join(self.roles)}")
        raise InvalidParameter("agents", f"{self.name} has no roster with all of {', '.join(named)}")

    def score_label(self, key: str) -> str:
        name, _, role = key.partition(".")
        label = self.score_labels.get(name, name)
        return f"{label} {role}" if role else label


def _counts(counts: list[int]) -> str:
    return " or ".join(str(c) for c in counts) if len(counts) < 3 else f"{counts[0]} to {counts[-1]}"
