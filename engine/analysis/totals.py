"""What a report keeps of a run: totals per condition, filled one record at a time, so that memory
is set by the conditions and not by the games.

Every number of the report is a sum over the games of a group of conditions (success, turns, sizes,
errors, model calls), a running tally (``ScoreTally``: scores, and the human seats' means) or, for
the paired comparison, each game's seed and outcome. So each condition keeps counts, sums and
tallies, and the run keeps what the layout needs: the conditions in the order of their first game,
each with its fields' values and a spec that stands for its games (``conditions.Condition``). The
records go by one at a time (``reading.read_totals`` streams a results file through here; a list
of records is folded by ``totals_of``), and nothing of a record is kept, except:

- the seed, game id and outcome of each game with one of the two compared values, when a paired
  comparison is asked for (17 bytes a game, in arrays): pairing by seed needs them;
- the response times (for their median) and participant ids of the games with a person in a seat:
  people do not play millions of games.

The numbers are those of the records taken one by one in game-id order, provided they are added in
that order (``read_totals`` reads a results file in game-id order, whatever the order of its lines):
a condition's tallies and sums of costs are then filled in the same order, and "first seen" is the
same. A group of several conditions (in the report, only when two rosters give one agents label) has
its tallies combined by Chan's formula, which agrees with one pass up to the last bits.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar, Union

from engine.analysis.conditions import Condition, field_values
from engine.analysis.humans import HumanTally, has_human
from engine.analysis.stats import ConditionSummary, ScoreTally, wilson_interval
from engine.records.record import INFRA_ERROR, GameRecord

# Per-turn size measures: unit -> (TurnLog attribute of the whole reply, attribute of the message).
# A unit whose attributes are missing or None on every turn is simply absent from a run.
SIZE_UNITS: dict[str, tuple[str, str]] = {
    "chars": ("reply_chars", "message_chars"),
    "tokens": ("reply_tokens", "message_tokens"),  # model turns: provider's reply tokens, one tokenizer for messages
}
OUTCOMES = {"success": 0, "failure": 1}  # a game's outcome in a byte; anything else (an error) is 2


def _append(column: Any, value: int) -> Any:
    """``column`` with ``value`` appended: an array of 64-bit integers, a list past their range."""
    try:
        column.append(value)
    except OverflowError:
        column = [*column, value]
    return column


class Seeds:
    """The seed, game id and outcome of each game of a condition, in the order added."""

    __slots__ = ("seeds", "ids", "outcomes")

    def __init__(self) -> None:
        self.seeds: Any = array("q")
        self.ids: Any = array("q")
        self.outcomes = bytearray()

    def add(self, seed: int, game_id: int, outcome: str) -> None:
        self.seeds = _append(self.seeds, seed)
        self.ids = _append(self.ids, game_id)
        self.outcomes.append(OUTCOMES.get(outcome, 2))


class ConditionTotals(Condition):
    """The totals of one condition's games."""

    __slots__ = (
        "games", "errors", "infra", "successes", "max_turns", "solved", "scores", "score_places", "sizes",
        "format_errors", "cut_replies", "invalid_actions", "error_kinds", "usage", "calls", "prompt_tokens",
        "completion_tokens", "cost", "unpriced", "humans", "seeds",
    )

    def __init__(self, values: dict[str, str], record: GameRecord, seeds: bool = False) -> None:
        super().__init__(values, record.spec, record.game_id)
        self.games = self.errors = self.infra = self.successes = self.max_turns = 0
        self.solved: dict[int, int] = {}  # solved turn -> games, of the successes
        self.scores: dict[str, ScoreTally] = {}  # over the games that ended without error, first seen first
        self.score_places: dict[str, tuple[int, int]] = {}  # score -> (game id, place) where first seen
        self.sizes: dict[str, dict[str, list[int]]] = {u: {} for u in SIZE_UNITS}  # unit -> role -> turns, reply, message
        self.format_errors: dict[str, int] = {}  # role -> total
        self.cut_replies: dict[str, int] = {}  # role -> total: unreadable replies the token limit cut
        self.invalid_actions: dict[str, int] = {}
        self.error_kinds: dict[str, int] = {}  # games that ended in (or with) an error, by kind
        self.usage = False  # some game has model calls
        self.calls = self.prompt_tokens = self.completion_tokens = 0
        self.cost: float = 0  # summed as sum() does, from the integer 0
        self.unpriced = False
        self.humans: HumanTally | None = None  # the games with a person in a seat
        self.seeds = Seeds() if seeds else None

    def add(self, record: GameRecord) -> None:
        self.games += 1
        self.max_turns = max(self.max_turns, record.spec.max_turns)
        outcome = record.outcome
        if outcome == "error":
            self.errors += 1
        elif outcome == "success":
            self.successes += 1
            if record.solved_turn is not None:
                self.solved[record.solved_turn] = self.solved.get(record.solved_turn, 0) + 1
        error = record.error
        if error is not None and error.kind == INFRA_ERROR:
            self.infra += 1
        if outcome == "error" or error is not None:
            kind = error.kind if error is not None else "unknown"
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1
        if outcome != "error":
            self._add_scores(record)
            self._add_sizes(record)
        cut = record.cut_replies or {}
        for totals, counts in ((self.format_errors, record.format_errors), (self.cut_replies, cut), (self.invalid_actions, record.invalid_actions)):
            for role, count in counts.items():
                totals[role] = totals.get(role, 0) + count
        if record.usage:
            self.usage = True
            for usage in record.usage.values():
                self.calls += usage.calls
                self.prompt_tokens += usage.prompt_tokens
                self.completion_tokens += usage.completion_tokens
                if usage.cost_usd is None:
                    self.unpriced = True
                else:
                    self.cost += usage.cost_usd
        if self.seeds is not None:
            self.seeds.add(record.spec.seed, record.game_id, outcome)

    def _add_scores(self, record: GameRecord) -> None:
        for place, (key, value) in enumerate(record.scores.items()):
            tally = self.scores.get(key)
            if tally is None:
                tally = self.scores[key] = ScoreTally()
                self.score_places[key] = (record.game_id, place)
            tally.add(value)

    def _add_sizes(self, record: GameRecord) -> None:
        for unit, (reply_attr, message_attr) in SIZE_UNITS.items():
            sums = self.sizes[unit]
            for entry in record.turn_log:
                reply, message = getattr(entry, reply_attr, None), getattr(entry, message_attr, None)
                if reply is None or message is None:
                    continue
                s = sums.setdefault(entry.role, [0, 0, 0])
                s[0] += 1
                s[1] += reply
                s[2] += message


class RunTotals:
    """The totals of a run's conditions, and what the run's tables need over all of them."""

    def __init__(self, compare: tuple[str, str, str] | None = None) -> None:
        self.conditions: list[ConditionTotals] = []  # in the order of their first game
        self._by_values: dict[tuple[tuple[str, str], ...], ConditionTotals] = {}
        self.compare = compare  # (field, a, b): the games whose seeds are kept
        self.games = 0
        self.score_kinds: dict[str, bool] = {}  # score -> every value a boolean, first seen first (games without error)
        self.score_games: dict[str, str] = {}  # score -> the game of the first game that gives it (any outcome)
        self.units: dict[str, None] = {"chars": None}  # the size units some turn records
        self.usage = False
        self.human_games: dict[str, None] = {}  # the games (by name) a person played, first seen first
        self.people: list[ConditionTotals] = []  # the conditions with games a person played, in the order of those games

    def add(self, record: GameRecord) -> None:
        values = field_values(record)
        key = tuple(values.items())
        condition = self._by_values.get(key)
        if condition is None:
            compare = self.compare
            keep = compare is not None and values.get(compare[0]) in compare[1:]
            condition = self._by_values[key] = ConditionTotals(values, record, seeds=keep)
            self.conditions.append(condition)
        condition.add(record)
        self.games += 1
        for name in record.scores:
            self.score_games.setdefault(name, record.spec.game)
        if record.outcome != "error":
            for name, value in record.scores.items():
                self.score_kinds[name] = self.score_kinds.get(name, True) and isinstance(value, bool)
        for unit, (reply, message) in SIZE_UNITS.items():
            if unit not in self.units and any(
                getattr(t, reply, None) is not None and getattr(t, message, None) is not None for t in record.turn_log
            ):
                self.units[unit] = None
        self.usage = self.usage or bool(record.usage)
        if has_human(record):
            if condition.humans is None:
                condition.humans = HumanTally()
                self.people.append(condition)
            condition.humans.add(record)
            self.human_games.setdefault(record.spec.game, None)

    def add_all(self, records: Iterable[GameRecord]) -> RunTotals:
        for record in records:
            self.add(record)
        return self


def summarize(records: Iterable[GameRecord]) -> list[ConditionSummary]:
    """One summary per condition, in order of first appearance. Games that ended in error are
    counted apart and left out of the success rate."""
    return [condition_summary(c) for c in RunTotals().add_all(records).conditions]


def condition_summary(c: ConditionTotals) -> ConditionSummary:
    scored = c.games - c.errors
    low, high = wilson_interval(c.successes, scored)
    solved = sum(c.solved.values())
    return ConditionSummary(
        condition=c.spec.condition(), fields=c.spec.condition_fields(), games=c.games, successes=c.successes,
        failures=scored - c.successes, errors=c.errors, success_rate=c.successes / scored if scored else 0.0,
        ci_low=low, ci_high=high, mean_solved_turn=sum(t * n for t, n in c.solved.items()) / solved if solved else None,
        scores={k: t.summary() for k, t in c.scores.items()}, format_errors=sum(c.format_errors.values()),
        invalid_actions=sum(c.invalid_actions.values()), error_kinds=c.error_kinds, cut_replies=sum(c.cut_replies.values()),
        calls=c.calls, tokens=c.prompt_tokens + c.completion_tokens,
        cost_usd=None if c.unpriced or not c.calls else round(c.cost, 6),
    )


Source = Union[RunTotals, Sequence[GameRecord]]  # what the report's measures take: a run's totals, or records to fold


def totals_of(source: Source, compare: tuple[str, str, str] | None = None) -> RunTotals:
    """``source`` itself if it is a run's totals, else the totals of its records (in their order)."""
    if isinstance(source, RunTotals):
        return source
    return RunTotals(compare).add_all(source)


# ---------------------------------------------------------------------------------------------
# Groups of conditions


def combined_tally(tallies: Sequence[ScoreTally]) -> ScoreTally:
    """One tally of several (Chan, Golub and LeVeque's pairwise update); the tally itself if one."""
    if len(tallies) == 1:
        return tallies[0]
    out = ScoreTally()
    for t in tallies:
        if t.n == 0:
            continue
        n = out.n + t.n
        delta = t.mean - out.mean
        out.mean += delta * t.n / n
        out.squares += t.squares + delta * delta * out.n * t.n / n
        out.n, out.hits = n, out.hits + t.hits
        out.smallest, out.largest = min(out.smallest, t.smallest), max(out.largest, t.largest)
        out.booleans = out.booleans and t.booleans
    return out


def combined_scores(group: Sequence[ConditionTotals]) -> dict[str, ScoreTally]:
    """Each score's tally over a group of conditions, first seen (in game-id order) first."""
    if len(group) == 1:
        return group[0].scores
    places: dict[str, tuple[int, int]] = {}
    for condition in group:
        for key, place in condition.score_places.items():
            places[key] = min(places.get(key, place), place)
    return {
        key: combined_tally([c.scores[key] for c in group if key in c.scores])
        for key in sorted(places, key=places.__getitem__)
    }


KeyT = TypeVar("KeyT")


def summed(dicts: Iterable[dict[KeyT, int]]) -> dict[KeyT, int]:
    out: dict[KeyT, int] = {}
    for d in dicts:
        for key, value in d.items():
            out[key] = out.get(key, 0) + value
    return out
