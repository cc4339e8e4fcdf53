"""The turn machine: whose turn it is, what a turn applies, and when the game ends.

Plain synchronous code with no bus and no event loop (PettingZoo's ``agent_selector`` and the env
wrapper in one small object): the Environment actor drives it over the bus, and anything else (a
synchronous env adapter, a test) can drive it directly.

Rounds (turns): ``round_robin``, every role acts once per round, in roster order, each seeing what
the others did before it; ``simultaneous``, every role is asked at once, acts on the state at the
start of the round, and the actions are applied together in roster order. The game ends when the
state says it is done (checked after every act) or after ``max_turns`` rounds. ``max_actions`` caps
the actions applied per agent turn; the rest are rejected with a reason. A reply that could not be
read is stepped with no actions (a game that counts steps spends one). What went wrong in a turn is
told to the agent at its next turn (``notices``).

Best of n: where the state asks for several candidate replies (``candidates_wanted``), the agent
samples them and the referee has the state ``choose`` the one to play before the turn arrives.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from bus.messages import HumanTurn, Usage

from .base import BestOfN, GameState, Say, Step
from .optional import implements
from .turn import Rejected

TurnOrder = Literal["round_robin", "simultaneous"]


class TurnLog(msgspec.Struct, frozen=True, gc=False):
    """One agent's turn as the referee saw it."""

    turn: int
    role: str
    message_chars: int
    reply_chars: int
    applied: int
    rejected: tuple[Any, ...] = ()
    format_error: str | None = None
    cut: bool | msgspec.UnsetType = msgspec.UNSET  # True: the reply could not be read because the run's token limit cut it
    progress: int | float = 0
    usage: Usage | msgspec.UnsetType = msgspec.UNSET  # the model call behind the turn, if any
    candidates: int | msgspec.UnsetType = msgspec.UNSET  # best of n: how many replies were sampled
    chosen: int | msgspec.UnsetType = msgspec.UNSET  # and which of them the game played
    human: HumanTurn | msgspec.UnsetType = msgspec.UNSET  # a person played the turn: response time, timeout

    @property
    def reply_tokens(self) -> int | None:
        """The reply's tokens as the provider counted them (model turns only)."""
        return None if self.usage is msgspec.UNSET else self.usage.completion_tokens

    @property
    def message_tokens(self) -> int | None:
        """The message's tokens, one tokenizer for every model (model turns only)."""
        return None if self.usage is msgspec.UNSET else self.usage.message_tokens


class Turn(msgspec.Struct, frozen=True, gc=False):
    """What an agent did in one turn, as the referee needs it."""

    turn: int
    role: str
    message: str = ""
    actions: tuple[Any, ...] = ()
    rejected: tuple[Any, ...] = ()  # actions that could not even be read
    format_error: str | None = None
    cut: bool = False  # the server cut the reply at the run's token limit
    reply_chars: int = 0
    usage: Any = None
    human: HumanTurn | None = None


class GameResult(msgspec.Struct):
    outcome: str  # "success" | "failure" | "error"
    turns: int
    solved_turn: int | None
    turn_log: list[TurnLog]
    scores: dict[str, Any]
    metrics: dict[str, Any]


class Next(msgspec.Struct, frozen=True, gc=False):
    """What follows a turn: what the game says for the acting role, who is asked next, whether it is over."""

    say: tuple[Say, ...] = ()
    ask: tuple[str, ...] = ()
    over: bool = False


class ProtocolError(RuntimeError):
    """A turn arrived that the game's protocol does not allow at this point."""


def notices_for(turn: Turn, rejected: tuple[Any, ...]) -> tuple[str, ...]:
    """What the agent is told next turn about the problems of this one."""
    notes = []
    if turn.format_error is not None:
        notes.append(f"Your last reply could not be read ({turn.format_error}); nothing was applied.")
    for item in rejected:
        notes.append(f"Your action {item.action} was rejected: {item.reason}.")
    return tuple(notes)


class Referee:
    def __init__(self, state: GameState, *, turn_order: TurnOrder = "round_robin", max_actions: int | None = None) -> None:
        if turn_order not in ("round_robin", "simultaneous"):
            raise ValueError(f"unknown turn order {turn_order!r}")
        self.state = state
        self.best_of_n = state if implements(state, BestOfN) else None  # the game chooses among sampled replies
        self.simultaneous = turn_order == "simultaneous"
        self.max_actions = max_actions
        self.turn = 1
        self.outcome: str | None = None  # set when the game is over
        self._index = 0
        self._waiting: dict[str, Turn] = {}  # simultaneous: turns received this round
        self._notices: dict[str, tuple[str, ...]] = {}
        self._chosen: dict[str, tuple[int, int]] = {}  # role -> (candidates, chosen) for its coming turn
        self.log: list[TurnLog] = []

    @property
    def roles(self) -> tuple[str, ...]:
        return self.state.roles

    def start(self) -> tuple[str, ...]:
        """The roles asked first."""
        return self._round()

    def _round(self) -> tuple[str, ...]:
        return self.roles if self.simultaneous else (self.roles[self._index],)

    def notices(self, role: str) -> tuple[str, ...]:
        """What ``role`` is told about its last turn (once)."""
        return self._notices.pop(role, ())

    def progress(self) -> dict[str, Any]:
        return {r: self.state.progress(r) for r in self.roles}

    def candidates_wanted(self, role: str) -> int:
        """How many replies ``role`` is to sample for its coming turn (1 unless the game says more)."""
        if self.best_of_n is None:
            return 1
        return max(1, int(self.best_of_n.candidates_wanted(role)))

    def choose(self, role: str, turn: int, candidates: tuple[tuple[Any, ...], ...]) -> int:
        """The index of the candidate ``role`` plays in ``turn`` (each candidate is one sampled
        reply's actions). The state chooses, on the state as the turn will find it."""
        self._check(role, turn, "candidates")
        if not candidates:
            raise ProtocolError(f"no candidates from {role} in turn {turn}")
        index = 0 if self.best_of_n is None else self.best_of_n.choose(role, tuple(candidates))
        if not 0 <= index < len(candidates):
            raise ProtocolError(f"the game chose candidate {index} of {len(candidates)}")
        self._chosen[role] = (len(candidates), index)
        return index

    def _check(self, role: str, turn: int, what: str) -> None:
        if self.outcome is not None:
            raise ProtocolError(f"{what} from {role} after the game ended")
        if turn != self.turn or role not in self.roles:
            raise ProtocolError(f"{what} from {role} for turn {turn} during turn {self.turn}")
        if self.simultaneous:
            if role in self._waiting:
                raise ProtocolError(f"second {what} from {role} in turn {self.turn}")
        elif role != self.roles[self._index]:
            raise ProtocolError(f"{what} from {role}, expected {self.roles[self._index]} in turn {self.turn}")

    def play(self, turn: Turn) -> Next:
        """Apply one agent's turn; raise ProtocolError if it is not that agent's turn."""
        self._check(turn.role, turn.turn, "act")
        if self.simultaneous:
            self._waiting[turn.role] = turn
            if len(self._waiting) < len(self.roles):
                return Next()
            turns, self._waiting = [self._waiting[r] for r in self.roles], {}
            said: list[Say] = []
            for t in turns:
                said += self._apply(t).say
            return self._after(tuple(said), end_of_round=True)
        step = self._apply(turn)
        self._index += 1
        end_of_round = self._index == len(self.roles)
        if end_of_round:
            self._index = 0
        return self._after(step.say, end_of_round)

    def _after(self, say: tuple[Say, ...], end_of_round: bool) -> Next:
        if self.state.done():
            self.outcome = self.state.outcome()
            return Next(say=say, over=True)
        if end_of_round:
            if self.turn >= self.state.max_turns:
                self.outcome = self.state.outcome()
                return Next(say=say, over=True)
            self.turn += 1
        return Next(say=say, ask=self._round())

    def _apply(self, turn: Turn) -> Step:
        rejected = tuple(turn.rejected)
        actions = tuple(turn.actions) if turn.format_error is None else ()
        if self.max_actions is not None and len(actions) > self.max_actions:
            rejected += tuple(
                Rejected(str(action), f"over the limit of {self.max_actions} actions per turn")
                for action in actions[self.max_actions :]
            )
            actions = actions[: self.max_actions]
        step = self.state.step(turn.role, actions)
        if turn.format_error is None:  # what the game says of a lost turn, the format error says better
            rejected += step.rejected
        candidates, chosen = self._chosen.pop(turn.role, (msgspec.UNSET, msgspec.UNSET))
        self._notices[turn.role] = notices_for(turn, rejected)
        self.log.append(
            TurnLog(
                turn=self.turn,
                role=turn.role,
                message_chars=len(turn.message),
                reply_chars=turn.reply_chars,
                applied=step.applied,
                rejected=rejected,
                format_error=turn.format_error,
                cut=True if turn.cut and turn.format_error is not None else msgspec.UNSET,
                progress=self.state.progress(turn.role),
                usage=turn.usage if isinstance(turn.usage, Usage) else msgspec.UNSET,
                candidates=candidates,
                chosen=chosen,
                human=turn.human if turn.human is not None else msgspec.UNSET,
            )
        )
        return step

    def result(self) -> GameResult:
        """The game's result; for a game that did not end (an error cut it short), outcome "error"."""
        outcome = self.outcome or "error"
        return GameResult(
            outcome=outcome,
            turns=self.turn,
            solved_turn=self.turn if outcome == "success" else None,
            turn_log=list(self.log),
            scores=self.state.scores(),
            metrics=self.state.metrics(),
        )
