"""Traveling Adventurers in progress: two players agree on one round trip through every room.

Each player sees the house and its own coins on every hallway; only messages cross. A reply's
actions (``suggest``, ``agree-inner``, ``agree-outer``, ``reject``, ``visit``, ``ask``,
``inform``, ``end``, ``solve``) are bookkeeping inside the acting player, as in the reference:
agreements are kept per player, ``visit`` moves the player's own [Visited]/[Remaining] lists (in
the state-tracking and problem-solving variants only), and ``end(path)`` submits the player's
final path (a later ``end`` replaces it). The game is over when both have submitted, and is scored
on the submitted paths (``scores``). Every action is checked on its own and a bad one is rejected
with a reason (``drop_after_error`` drops the rest of the reply instead, as the reference does).
"""

from __future__ import annotations

import ast
from collections import Counter

import msgspec

from ..base import Outcome, Step
from ..turn import Rejected
from .board import GHOST, LIGHT, Board
from .params import TspParams
from .solver import Solution, TourStats, is_tour, solve, tour_score, tour_stats

ACTIONS = ("suggest", "agree-inner", "agree-outer", "reject", "visit", "ask", "inform", "end", "solve")
BOOKKEEPING = ("agree-inner", "agree-outer", "reject")
STATE_VARIANTS = ("state_tracking", "problem_solving")
MAX_ARGUMENT_CHARS = 2_000


class TspAction(msgspec.Struct, frozen=True, gc=False):
    """One action as written: its name and the text inside its parentheses."""

    name: str
    argument: str

    def __str__(self) -> str:
        return f"{self.name}({self.argument})"


class TspView(msgspec.Struct, frozen=True, gc=False):
    """What one player is shown: the house, its own coins, its bookkeeping."""

    role: str
    rooms: tuple[str, ...]
    weights: tuple[tuple[str, str, int], ...]  # own coins, one entry per hallway
    variant: str
    history: tuple[str, ...]  # own past action lines (baseline and grounding variants)
    visited: tuple[str, ...]
    remaining: tuple[str, ...]
    fidelity: bool = False  # the reference prompts' slips
    notices: bool = False  # rejected actions are told to the agent
    reference_grounding: bool = False  # the agent's grounding module works as the reference's
    submitted: tuple[str, ...] | None = None  # own submitted path (``end``), if any; a person's seat shows it


def read_path(argument: str) -> list[str] | None:
    """A Python list of strings, as ``end`` and ``suggest`` take; None if it is not one."""
    try:
        value = ast.literal_eval(argument.strip()) if len(argument) <= MAX_ARGUMENT_CHARS else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list) or not value or not all(isinstance(room, str) for room in value):
        return None
    return [room.strip() for room in value]


def read_room(argument: str) -> str | None:
    """The room ``visit`` names: the first ASCII letter of its argument, upper case (the reference's
    reading, so ``visit("Kitchen")`` visits K)."""
    for char in argument:
        if char.isascii() and char.isalpha():
            return char.upper()
    return None


class Player:
    """One player's bookkeeping."""

    def __init__(self, rooms: tuple[str, ...]) -> None:
        self.agreements: dict[str, list[str]] = {name: [] for name in BOOKKEEPING}
        self.visited: list[str] = [rooms[0]]
        self.remaining: list[str] = list(rooms)
        self.history: list[str] = []
        self.submitted: tuple[str, ...] | None = None
        self.ended_turn: int | None = None
        self.counts: Counter[str] = Counter()
        self.suggest_lengths: list[int] = []


class TspGame:
    """One game in progress (a ``puzzles.base.GameState``)."""

    def __init__(self, board: Board, params: TspParams, max_turns: int, roles: tuple[str, ...] = (LIGHT, GHOST)) -> None:
        self.board = board
        self.params = params
        self.max_turns = max_turns
        self.roles = roles
        self.rooms = board.rooms
        self.players = {role: Player(board.rooms) for role in roles}
        self.turn = 0  # rounds begun, counted by the light player's turns
        self.solution: Solution = solve(board.rooms, board.joint)
        self.stats: TourStats = tour_stats(board.rooms, board.joint)

    # ---- what players see ----

    def view(self, role: str) -> TspView:
        player = self.players[role]
        return TspView(
            role=role, rooms=self.rooms, weights=self.board.weights[role], variant=self.params.variant,
            history=tuple(player.history), visited=tuple(player.visited), remaining=tuple(player.remaining),
            fidelity=self.params.prompt_fidelity, notices=self.params.notices,
            reference_grounding=self.params.reference_grounding, submitted=player.submitted,
        )

    def private(self, role: str) -> tuple[tuple[str, str, int], ...]:
        return self.board.weights[role]

    # ---- acting ----

    def step(self, role: str, actions: tuple[TspAction, ...]) -> Step:
        if role == self.roles[0]:
            self.turn += 1
        player = self.players[role]
        done: list[TspAction] = []
        rejected: list[Rejected] = []
        for action in actions:
            if rejected and self.params.drop_after_error:
                rejected.append(Rejected(str(action), "dropped: an earlier action of this reply failed"))
                continue
            reason = self._apply(player, action)
            if reason is None:
                done.append(action)
                player.counts[action.name] += 1
            else:
                rejected.append(Rejected(str(action), reason))
        # [History]: the actions taken, one line per turn (the baseline leaves out the line that ends).
        line = ", ".join(str(action) for action in done)
        variant = self.params.variant
        if line and (variant == "grounding" or variant == "baseline" and not any(a.name == "end" for a in done)):
            player.history.append(line)
        applied = len(done)
        return Step(applied=applied, rejected=tuple(rejected))

    def _apply(self, player: Player, action: TspAction) -> str | None:
        """Apply one action; the reason it cannot be applied otherwise (nothing changed then)."""
        name = action.name
        if name not in ACTIONS:
            return f"unknown action {name!r}; the actions are {', '.join(ACTIONS)}"
        if name in ("ask", "inform"):
            return None
        if name == "visit":
            return self._visit(player, action.argument)
        path = read_path(action.argument)
        if path is None:
            return f"{name} takes a Python list of room letters, like [\"L\", \"E\"]"
        if name == "end":
            player.submitted = tuple(path)
            player.ended_turn = self.turn
            return None
        unknown = [room for room in path if room not in self.rooms]
        if unknown:
            return f"{unknown[0]!r} is not a room of this house ({', '.join(self.rooms)})"
        if name == "suggest":
            player.suggest_lengths.append(len(path))
        elif name in BOOKKEEPING:
            text = repr(path)
            if text not in player.agreements[name]:
                player.agreements[name].append(text)
        return None

    def _visit(self, player: Player, argument: str) -> str | None:
        if self.params.variant not in STATE_VARIANTS:
            return None  # the baseline and grounding agents keep no visit state
        room = read_room(argument)
        if room is None or room not in self.rooms:
            return f"visit takes one room letter of this house ({', '.join(self.rooms)})"
        if room not in player.remaining:
            return f"room {room} is not in [Remaining]"
        player.remaining.remove(room)
        player.visited.append(room)
        return None

    # ---- the end and the scores ----

    def done(self) -> bool:
        return all(player.submitted is not None for player in self.players.values())

    def agreed(self) -> tuple[str, ...] | None:
        """The path both submitted, if they submitted the same one."""
        paths = {player.submitted for player in self.players.values()}
        if len(paths) == 1 and None not in paths:
            return next(iter(paths))
        return None

    def outcome(self) -> Outcome:
        path = self.agreed()
        return "success" if path is not None and is_tour(path, self.rooms) else "failure"

    def progress(self, role: str) -> float:
        player = self.players[role]
        if player.submitted is not None:
            return 1.0
        return round((len(player.visited) - 1) / len(self.rooms), 3)

    def scores(self) -> dict[str, bool | float]:
        path = self.agreed()
        correct = path is not None and is_tour(path, self.rooms)
        scores: dict[str, bool | float] = {"identical": path is not None, "correct": correct, "optimal": False}
        if path is not None:
            score = tour_score(path, self.board.joint)
            if score is not None:
                scores["score"] = score
            if correct and score is not None:
                scores["optimal"] = score == self.solution.optimum
                percentile = self.stats.percentile(score).at_most
                scores["percentile"] = percentile
                scores["s90"] = percentile >= 90
        scores.setdefault("s90", False)
        if self.done():
            scores["turns_to_end"] = max(player.ended_turn or 0 for player in self.players.values())
        return scores

    def metrics(self) -> dict:
        path = self.agreed()
        score = tour_score(path, self.board.joint) if path is not None else None
        percentiles = self.stats.percentile(score) if path is not None and score is not None and is_tour(path, self.rooms) else None
        return {
            "board": self.board.source,
            "rooms": list(self.rooms),
            "weights": {role: [list(edge) for edge in self.board.weights[role]] for role in self.roles},
            "optimum": self.solution.optimum,
            "optimal_tours": [list(tour) for tour in self.solution.tours],
            "tours": self.stats.cycles,
            "worst": self.stats.minimum,
            "percentiles": msgspec.to_builtins(percentiles) if percentiles is not None else None,
            "submitted": {role: list(p.submitted) if p.submitted is not None else None for role, p in self.players.items()},
            "submission_scores": {
                role: tour_score(p.submitted, self.board.joint) if p.submitted is not None else None
                for role, p in self.players.items()
            },
            "ended_turn": {role: p.ended_turn for role, p in self.players.items()},
            "actions": {role: dict(sorted(p.counts.items())) for role, p in self.players.items()},
            "suggest_lengths": {role: p.suggest_lengths for role, p in self.players.items()},
            "visited": {role: p.visited for role, p in self.players.items()},
        }
