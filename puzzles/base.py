"""The game contract: what the engine needs from a game, and nothing about any one game.

A game is one folder under ``puzzles/`` that builds a ``Game`` of these parts: its ``Rules`` (its
parameters, how to start a game in progress, a ``GameState``, its feedback modes and scripted
strategies), its ``Faces`` (its prompt, a person's seat, its replay), its ``Records`` (score
labels, the human study's scores, the instance) and, once what it records has changed, its
``ResultsFormat`` (how its older records read). The engine, actors and
runners speak only this module and look games up by name in ``puzzles.registry``.

- ``GameState`` is one game in progress: synchronous, deterministic, no event loop, no I/O. Every
  turn a role is shown ``view(role)`` (what it knows now, private and shared); what it does comes
  back through ``step``, which says what was applied, what was rejected and why, and what the game
  says to other roles on the acting role's behalf (share, ask, inform: sent through the channels, so
  budgets and noise apply to it like any message).
- The turn machine around it (whose turn, action limits, notices, the turn limit, the turn log) is
  ``puzzles.referee``; ``check_game`` in ``puzzles.testing`` is the conformance check every game passes.
- What a game may leave out is a small protocol, implemented whole or not at all: ``Secrets`` and
  ``BestOfN`` for a state, ``AgentModules`` for a prompter, ``IdleActions`` for a seat
  (``puzzles.seat``), ``BoardReplay`` for a replay (``puzzles.common.replay``). The registry checks
  every game once when it registers it (``puzzles.contract``); the engine then asks ``isinstance``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, Protocol, runtime_checkable

import msgspec
from typing_extensions import TypeForm, TypeVar

from .turn import ActionT, Rejected, Reply, TurnContext, ViewT

if TYPE_CHECKING:
    from .analyses import Analysis, PlayedGame
    from .common.replay import Replay
    from .policy import DemonstrationsFn, ScriptedFactory
    from .seat import Seat

Outcome = Literal["success", "failure"]
Score = bool | float

# A game binds these, as PettingZoo's ``AECEnv[AgentID, ObsType, ActionType]`` is bound: its parameters
# (``Rules.Params``), its state (what ``Rules.new`` returns), what the state shows a role
# (``GameState.view``) and what its actions are (``Rules.Action``).
ParamsT = TypeVar("ParamsT", bound=msgspec.Struct)
ViewT_co = TypeVar("ViewT_co", covariant=True)
ActionT_contra = TypeVar("ActionT_contra", contravariant=True)


class InvalidParameter(ValueError):
    """A parameter is out of range; ``field`` names it and the message says why in one line."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


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


class GameState(Protocol[ViewT_co, ActionT_contra]):
    """One game in progress, showing views of one type and stepped with actions of one type
    (``GameState[View, Action]``). Roles act in ``roles`` order; the referee stops after
    ``max_turns`` rounds."""

    roles: tuple[str, ...]
    max_turns: int

    def view(self, role: str) -> ViewT_co:
        """What ``role`` knows now: its private information and the shared state. Never another
        role's private information."""

    def private(self, role: str) -> tuple[object, ...]:
        """The items only ``role`` knows at the start (for the leak audit)."""

    def step(self, role: str, actions: tuple[ActionT_contra, ...]) -> Step:
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


StateT = TypeVar("StateT", bound=GameState[Any, Any], default=GameState[Any, Any])  # a game's state class, any where unnamed
# What only reads a game's parameters or state (its rewards, its records) takes them contravariantly.
ParamsT_contra = TypeVar("ParamsT_contra", bound=msgspec.Struct, contravariant=True)
StateT_contra = TypeVar("StateT_contra", contravariant=True, default=GameState[Any, Any])


# A game state may also have these optional parts, each whole or not at all (registration checks
# ``Rules.State``); the engine asks ``implements(state, Secrets)`` (``puzzles.optional``: isinstance,
# once per class) and never looks for a member.


@runtime_checkable
class Secrets(Protocol):
    """The phrases only ``role`` knows at the start, as its prompts write them, for games where word
    pairs cannot tell private from public: the leak audit (``engine.play.audit``) and the seat check
    look for these instead of the words of ``private(role)``."""

    def secrets(self, role: str) -> tuple[str, ...]: ...


@runtime_checkable
class BestOfN(Protocol[ActionT_contra]):
    """Best of n (environment verifiers): ``candidates_wanted(role)`` is how many replies ``role``
    samples for its coming turn; ``choose(role, candidates)`` which of them to play, each candidate
    being one reply's actions (empty for a reply that could not be read). ``choose`` must not change
    what ``view`` shows; the game keeps what it wants of the choice for the step that follows."""

    def candidates_wanted(self, role: str) -> int: ...

    def choose(self, role: str, candidates: tuple[tuple[ActionT_contra, ...], ...]) -> int: ...


FeedbackFn = Callable[[StateT, str], object]
"""``feedback(state, role)``: what ``role`` is told about the state as it is when it is prompted
(JSON-encodable; the game's prompter reads it as ``TurnContext.feedback``)."""


ModelCall = Callable[[str, str, str], Awaitable[str]]
"""``await ask(system, user, purpose)``: one more model call of an agent's turn (its text), counted
in the turn's usage and paced by the model's limiter like any call; ``purpose`` names it in transcripts."""


class Prompter(Protocol[ViewT, ActionT]):
    """A game's side of the model policy: the prompt, the reply format and how to read replies, for a
    game whose state shows ``ViewT`` and whose actions are ``ActionT``.

    ``chat_memory`` shapes the model agent (``engine.policies.llm.LLMPolicy``) without the engine knowing the
    game: True, the agent keeps its whole chat with the model (the first turn's system prompt, then
    every turn's user prompt and the model's raw reply) and sends it every turn; False, each turn is
    a fresh (system, user) pair. A prompter may also run the agent's own modules (``AgentModules``).
    """

    chat_memory: bool

    def render(self, context: TurnContext[ViewT]) -> tuple[str, str]:
        """(system, user) for one agent turn."""

    def schema(self, context: TurnContext[ViewT]) -> dict[str, Any] | None:
        """The reply as a JSON schema for structured outputs, or None if the game has none."""

    def parse(self, text: str, context: TurnContext[ViewT]) -> Reply[ActionT]:
        """Read the reply to ``context``; raise ReplyFormatError if it cannot be read."""

    def format(self, reply: Reply[ActionT], prose: str = "") -> str:
        """A reply in the game's own format (scripted policies write this; ``parse`` reads it back)."""

    def read(self, system: str, user: str) -> tuple[TurnContext[ViewT], Hashable] | None:
        """The context a prompt shows and a key for the agent it was written for, or None if the
        prompt is not one of this game's (the local model server plays games through this)."""


@runtime_checkable
class AgentModules(Protocol[ViewT]):
    """Optional for a ``Prompter``: the agent's own modules, ``await prepare(context, notes, ask)``,
    run before each turn's prompt is rendered: ``notes`` is a dict the agent keeps across its turns,
    ``ask`` a ``ModelCall``; what they work out goes to the prompt as the returned context's
    ``derived``."""

    async def prepare(self, context: TurnContext[ViewT], notes: dict, ask: ModelCall) -> TurnContext[ViewT]: ...


@runtime_checkable
class ReplyGrammar(Protocol[ViewT]):
    """Optional for a ``Prompter`` whose replies are text in a format of its own rather than JSON
    (``schema`` gives None): ``grammar(context)`` is the reply as a GBNF grammar (llama.cpp's form,
    which vLLM's structured outputs read too), with a ``root`` rule, every reply it accepts one the
    game reads. Free text is a bounded repetition of a character class (``[^\\n]{0,600}``) and a
    list a bounded repetition of a group, so that a reply always ends whole; for a server the engine
    starts, the engine lowers those bounds as it does a schema's (``wire.bounded_grammar``). Under ``--structured`` it is sent to servers that constrain a reply by a grammar, and
    a run of the game on a model whose API takes none is refused."""

    def grammar(self, context: TurnContext[ViewT]) -> str: ...


def no_feedback(state: object, role: str) -> None:
    return None


@dataclass(frozen=True)
class Rules(Generic[ParamsT, ViewT, ActionT, StateT]):
    """What plays: everything the referee, the scripted agents and the conformance check need, for a
    game of parameters ``ParamsT`` whose state ``StateT`` shows ``ViewT`` and is stepped with ``ActionT``.

    - ``Params``: a msgspec Struct tagged with the game's name (``tag_field="game"``), every field
      with a default, and these methods: ``check()`` raises InvalidParameter; ``labels()`` gives the
      condition labels (name -> value, in display order); ``normal()`` gives the one spelling of an
      equivalent parameter set. A class variable ``HELP`` (field -> text) describes the fields for
      the command line.
    - ``State``: the ``GameState`` class ``new`` returns (registration checks it against
      ``GameState`` and its optional parts, ``Secrets`` and ``BestOfN``).
    - ``rosters``: the role lists the game can be played with, in turn order; the first is the default.
    - ``new(params, seed, roles, max_turns)``: a fresh game, the same for the same arguments.
    - ``default_max_turns(params, roles)``: the turn limit when none is given.
    - ``Action``: the type that actions decode to from JSON (transcripts, replays).
    - ``feedback``: modes by name, ``default_feedback`` the one used when none is given.
    - ``scripted``: offline strategies by name; the first is the default.
    - ``invalid_examples(state, role)``: actions the game must reject in ``state`` (the conformance
      check in ``puzzles.testing`` plays them and checks that nothing changed); None: none given.
    - ``prepare(params, seed)``: slow work a game needs before it starts (planning an instance's
      optimum into a cache, say), which the engine runs in a worker thread so that the event loop
      goes on serving the other games; None for games that have none.
    - ``demonstrations(params, seed, count, max_turns)``: distinct ways to play the game of ``seed``
      fixed in advance (``puzzles.policy.Demonstration``: each role's replies), for training data
      (``engine.dataset``); None: the game's scripted strategies are its only teachers.
    """

    Params: type[ParamsT]
    State: type[GameState[ViewT, ActionT]]
    rosters: tuple[tuple[str, ...], ...]
    new: Callable[[ParamsT, int, tuple[str, ...], int], StateT]
    default_max_turns: Callable[[ParamsT, tuple[str, ...]], int]
    Action: TypeForm[ActionT]  # a class, or a union of classes
    feedback: Mapping[str, FeedbackFn[StateT]] = field(default_factory=lambda: {"none": no_feedback})
    default_feedback: str = "none"
    scripted: Mapping[str, ScriptedFactory] = field(default_factory=dict)
    invalid_examples: Callable[[StateT, str], Sequence[ActionT]] | None = None
    prepare: Callable[[ParamsT, int], object] | None = None
    demonstrations: DemonstrationsFn[ParamsT] | None = None


@dataclass(frozen=True)
class Faces(Generic[ViewT, ActionT, StateT]):
    """How the game shows itself and reads what comes back: to a model, to a person, to whoever
    looks at a run afterwards, and on the command line.

    - ``prompter``: the model's side (``Prompter``): the prompt, the reply format and reading replies
      (scripted strategies write that format too).
    - ``seat``: what a person in a seat is shown and the forms they act through (``puzzles.seat.Seat``);
      None: a stand-in built from the prompt and ``Action`` (``puzzles.seat.seat_of``).
    - ``replay``: the game's side of the replay viewer (``runners.replay``, ``runners.view``:
      ``puzzles.common.replay.Replay``), or None (actions then show as JSON, progress as a number).
      The viewer shows what every game has (outcome, condition, seed, error; per turn the notices,
      format error, message, deliveries, rejected actions and progress); it rebuilds the game with
      ``new`` and applies each turn's actions (decoded to ``Action``) through ``step``; the replay
      says the rest.
    - ``description``: the game in one line.
    """

    prompter: Prompter[ViewT, ActionT]
    seat: Seat[ViewT, ActionT] | None = None
    replay: Replay[StateT, ActionT] | None = None
    description: str = ""


class Ending(NamedTuple, Generic[ParamsT]):
    """A game as it ended, as its rewards read it: its parameters, whether it succeeded, and its
    scores and metrics as recorded."""

    params: ParamsT
    success: bool
    scores: Mapping[str, Score]
    metrics: Mapping[str, Any]


@dataclass(frozen=True)
class Rewards(Generic[ParamsT_contra]):
    """How a game rewards each seat, for training (``engine.rollouts``), from its own figures: named
    in one place per game (its ``rewards.py``) and described on its page.

    - ``seat(ending, role)``: the seat's rewards when the game ends, by name, each a number where
      more is better; the first is the seat's reward unless a trainer names another. A game's
      shared result (success) is every seat's; a seat's own part is its own.
    - ``progress_scale(params)``: what ``GameState.progress`` reaches when a role's part is done.
      A seat's reward for one turn is the change of its progress, over this, since its previous
      turn (since the start for its first): the turn rewards of a seat add up to the share of the
      way it came.
    """

    seat: Callable[[Ending[ParamsT_contra], str], dict[str, float]]
    progress_scale: Callable[[ParamsT_contra], float]


@dataclass(frozen=True)
class Records(Generic[ParamsT_contra, StateT_contra]):
    """What the game's records hold beyond scores and metrics, and how reports label them. Every part
    is optional.

    - ``score_labels``: display names of score keys (a key ``name.role`` shows as ``label role``).
    - ``sort_keys``: for condition labels whose values do not sort as text, a key function.
    - ``human_study``: the scores the game's papers report for games with a person in a seat, each
      with its label (the reports' table of human seats); empty: the success rate alone.
    - ``instance(state)``: what a third party needs to check a game's transcript on its own (the
      truth, each role's private information), JSON-encodable, from the game as it starts; written
      once per game in transcripts. None: transcripts carry no instance.
    - ``table_rows``: the parameters whose values make the rows of the success table in the game's
      paper (the report's default ``--rows``, where they vary in a run); empty: the agents.
    - ``score_words``: each score as a participant reads it at the end of a game (a seat's end
      screen), in words rather than the papers' abbreviations; a score without words shows its label.
    - ``analyses``: makes an empty ``puzzles.analyses.Analysis``, which folds played games into the
      tables of the game's papers that scores do not give (``asymgames report RUN --analyses``).
      None: the game has none.
    - ``message_kinds(game)``: each message of a played game (a ``puzzles.analyses.PlayedGame``) by
      its kind in the game's own reading, keyed by (turn, role): the rows of a branch run's value of
      each kind of message. None, or a message left out: no kind.
    - ``score_notes``: what a reader of a score's figures must know (what it is measured against),
      one sentence per score key, printed under the report's tables that show the score.
    - ``rewards``: each seat's rewards for training, per game and per turn (``Rewards``); None: the
      game gives none, and a rollout of it is refused.
    """

    score_labels: Mapping[str, str] = field(default_factory=dict)
    sort_keys: Mapping[str, Callable[[str], Any]] = field(default_factory=dict)
    human_study: Mapping[str, str] = field(default_factory=dict)
    instance: Callable[[StateT_contra], object] | None = None
    table_rows: tuple[str, ...] = ()
    score_words: Mapping[str, str] = field(default_factory=dict)
    analyses: Callable[[], Analysis] | None = None
    message_kinds: Callable[[PlayedGame], Mapping[tuple[int, str], str]] | None = None
    score_notes: Mapping[str, str] = field(default_factory=dict)
    rewards: Rewards[ParamsT_contra] | None = None


@runtime_checkable
class Format1Reader(Protocol):
    """How to read a game's results that results format 1 wrote (``engine.records.upgrade``)."""

    def params(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The game's parameters from the old flat fields of the game spec."""

    def figures(self, record: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]:
        """(scores, metrics, the old record fields they replace)."""


@dataclass(frozen=True)
class ResultsFormat:
    """The history of what the game records, so that runs saved before a change read and resume as
    the game records now (``engine.records.upgrade``). A new game leaves it empty.

    - ``version``: the game's results format, 1 until the game first changes what it records and
      one more at each change; ``upgrade``, ``saved_before`` and ``default_was`` come with a change.
    - ``upgrade(params, scores, metrics)``: a record the game wrote before a change, as it records
      it now (the same three back when the record is current); applied to every format-2 record read.
    - ``saved_before``: parameters added after runs of the game were first saved, each with the
      value the games of a run saved before it existed were played with; a saved plan that lacks
      one is read with that value, so that ``--resume`` plays on as the run began.
    - ``default_was``: parameters whose default changed, each with its earlier default. A saved plan
      that does not name one (a grid left it at its default) and whose first record was played
      with the earlier default is read with it, so that ``--resume`` plays on as the run began.
    - ``format_1``: for games that the engine's results format 1 wrote (before games were folders
      behind one contract), how to read them (a ``Format1Reader``); None for games that came later.
    """

    version: int = 1
    upgrade: Callable[[msgspec.Struct, dict, dict], tuple[msgspec.Struct, dict, dict]] | None = None
    saved_before: Mapping[str, Any] = field(default_factory=dict)
    default_was: Mapping[str, Any] = field(default_factory=dict)
    format_1: Format1Reader | None = None


@dataclass(frozen=True)
class Game(Generic[ParamsT, ViewT, ActionT, StateT]):
    """Everything the engine knows about one game: ``rules`` (what plays), ``faces`` (how it shows
    itself: to a model, a person, a replay), ``records`` (what its records hold and how reports label
    them) and ``results_format`` (how records it wrote before a change read now; empty for a new
    game). ``puzzles.registry`` checks every game it registers against the contract once
    (``puzzles.contract.check_contract``). A game names its types in its ``GAME``'s annotation,
    ``Game[Params, View, Action, State]``, and the type checker holds every part to them."""

    name: str
    rules: Rules[ParamsT, ViewT, ActionT, StateT]
    faces: Faces[ViewT, ActionT, StateT]
    records: Records[ParamsT, StateT] = field(default_factory=Records)
    results_format: ResultsFormat = field(default_factory=ResultsFormat)

    @property
    def default_policy(self) -> str:
        """The scripted strategy a role plays when none is named."""
        return next(iter(self.rules.scripted))

    @property
    def roles(self) -> tuple[str, ...]:
        """Every role any roster of the game uses, in first-seen order."""
        return tuple(dict.fromkeys(role for roster in self.rules.rosters for role in roster))

    def roster(self, agents: int) -> tuple[str, ...]:
        """The roster for this many agents; InvalidParameter if the game cannot be played so."""
        for roster in self.rules.rosters:
            if len(roster) == agents:
                return roster
        counts = sorted({len(r) for r in self.rules.rosters})
        raise InvalidParameter("agents", f"{self.name} is played by {_counts(counts)} agents, got {agents}")

    def roster_for(self, named: list[str] | tuple[str, ...]) -> tuple[str, ...]:
        """The smallest roster that has every role in ``named``."""
        for roster in sorted(self.rules.rosters, key=len):
            if set(named) <= set(roster):
                return roster
        unknown = [r for r in named if r not in self.roles]
        if unknown:
            raise InvalidParameter("agents", f"{self.name} has no role {unknown[0]!r}; its roles are {', '.join(self.roles)}")
        raise InvalidParameter("agents", f"{self.name} has no roster with all of {', '.join(named)}")

    def score_label(self, key: str) -> str:
        name, _, role = key.partition(".")
        label = self.records.score_labels.get(name, name)
        return f"{label} {role}" if role else label

    def score_in_words(self, key: str) -> str:
        """A score as a participant reads it: its words (``Records.score_words``), else its label."""
        name, _, role = key.partition(".")
        words = self.records.score_words.get(name)
        if words is None:
            return self.score_label(key)
        return f"{words} ({role})" if role else words


def _counts(counts: list[int]) -> str:
    return " or ".join(str(c) for c in counts) if len(counts) < 3 else f"{counts[0]} to {counts[-1]}"
