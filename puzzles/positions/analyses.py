"""The position games' analyses (``Records.analyses``, ``puzzles.analyses``): the strategies and
failure signatures that section 5.3 of the long AsymPuzl paper reads from transcripts ("share all
the information they have", "exchange one piece of information at a time", "ignore each other's
messages"; 0 modifications while unsolved, 4 and more modifications of a position), as two tables
per condition. Each game is started again from its parameters and seed through the game's own
rules and its actions are replayed (``puzzles.positions.reading``).

Facts. A role's facts are its clues, one fact per clue, made of the clue's known values as words:
in AsymPuzl, Alice's facts are her shapes (with distractors in her clues, N + D of them), Bob's are
his shape-color pairs; in the chain puzzle, Alice's are her shapes and every other role's are its
links (two values each). A fact sits at the truth position whose values hold all its words (a
distractor sits nowhere). A message (case does not matter; the first 100,000 characters are read)
mentions a fact of several values when it holds every word of the fact as a whole word. A fact of
one value that sits at a position (Alice's shape) is where that value is, so the message must say
where: the position's number next to the value, before or after it with no other such value
between ("position 2 is the bolt", "position 2 -> shape bolt", "bolt at 2"), or two or more such
values listed in the order of their positions, outside any fact of several values the message
mentions ("my shapes in order: ..."). Naming a shape says nothing of its position ("what is the
position of the bolt?", a shuffled list), and "shape bolt -> color tan" mentions Bob's link, not
Alice's bolt; a relay that writes both ("position 2 -> shape bolt; shape bolt -> color tan")
passes on both. Any other fact of one value (a distractor) is mentioned by its word. A role has
heard a fact once a message of another role mentioned it. A role could fix a position on a turn
when, before the turn, that position of its hypothesis is wrong and it has heard every other
role's fact at that position.

Strategy classes, one per role and game, the first that applies:
- ``ignores``: on at least one of its turns whose reply was read it could fix a position, and on
  none of those turns did its hypothesis change;
- ``all at once``: its first message (the first that is not empty) mentions every one of its facts;
- ``piece by piece``: at least two of its messages each mention one of its facts that none of its
  earlier messages mentioned;
- ``other``: the rest (it never shared, or shared some facts once and no more).
A role with no partner (AsymPuzl's single-agent check) has no class.

Failure signatures, per role and game:
- (a) idle: on a turn on which it could fix a position, its reply was read and held no action at
  all (none applied, none rejected). Turns on which the role could not yet know anything to write
  (Alice's first turn, say) do not count: they are not a failure.
- (b) over-correction: it modified one position 4 or more times (a write that changes the piece
  there, as the record's ``position_actions`` counts them), replayed.

A game that cannot be started again or replayed as its record counts (``reading.Unreadable``) is
left out of both tables, and the table's note says how many were. A game played with a limit on
actions per turn is replayed with the limit that reproduces its record's write counts.

What reached whom: a recipient hears the facts of the message as the channel delivered it to it
(``PlayedTurn.heard``: a budget cuts or rejects a message, noise garbles it, a topology or a drop
keeps it from a role), on its turns after the message; under simultaneous turns
(``options["turn_order"]``) a message of one round is heard from the next round on. A sender's class
reads what it wrote (under a budget, "all at once" is what it tried to send). A turn that does not
say what was delivered (``heard`` None) counts as heard, as written, by every other role. What a
delayed channel delivers later is counted when it was sent.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..analyses import AnalysisTable, Cell, PlayedGame, percent
from .reading import CLASSES, Start, Unreadable, read_game

ANY_ROLE = "any"
OUTCOMES = ("all", "success", "failure")


class _Signatures:
    def __init__(self) -> None:
        self.games = Counter[str]()  # "all" / "failure"
        self.idle = Counter[str]()
        self.overcorrected = Counter[str]()

    def add(self, failed: bool, idle: bool, overcorrected: bool) -> None:
        for key in ("all", "failure") if failed else ("all",):
            self.games[key] += 1
            self.idle[key] += idle
            self.overcorrected[key] += overcorrected

    def row(self, condition: str, role: str) -> list[Cell]:
        games, failed = self.games["all"], self.games["failure"]
        return [
            condition, role, games, failed,
            percent(self.idle["failure"], failed), percent(self.idle["all"], games),
            percent(self.overcorrected["failure"], failed), percent(self.overcorrected["all"], games),
        ]


class PositionAnalysis:
    """The strategy classes and failure signatures of a position game, per condition and role.
    ``params_type``, ``start`` and ``action_type`` are the game's ``Rules.Params``, ``Rules.new``
    and ``Rules.Action``."""

    def __init__(self, params_type: type, start: Start, action_type: Any) -> None:
        self.params_type = params_type
        self.start = start
        self.action_type = action_type
        self.strategies: dict[str, dict[str, dict[str, Counter[str]]]] = {}  # condition -> role -> outcome -> class
        self.signatures: dict[str, dict[str, _Signatures]] = {}  # condition -> role (or ANY_ROLE)
        self.left_out = Counter[str]()  # condition -> games that could not be read again

    def add(self, game: PlayedGame) -> None:
        try:
            readings = read_game(game, self.params_type, self.start, self.action_type)
        except Unreadable:
            self.left_out[game.condition] += 1
            return
        failed = game.outcome != "success"
        outcome = "failure" if failed else "success"
        strategies = self.strategies.setdefault(game.condition, {})
        signatures = self.signatures.setdefault(game.condition, {})
        for role, reading in readings.items():
            if reading.strategy is not None:
                by_outcome = strategies.setdefault(role, {o: Counter() for o in OUTCOMES})
                by_outcome["all"][reading.strategy] += 1
                by_outcome[outcome][reading.strategy] += 1
            signatures.setdefault(role, _Signatures()).add(failed, reading.idle, reading.overcorrected)
        if len(readings) > 1:
            signatures.setdefault(ANY_ROLE, _Signatures()).add(
                failed, any(r.idle for r in readings.values()), any(r.overcorrected for r in readings.values()),
            )

    def _note(self, text: str) -> str:
        if self.left_out:
            shown = "; ".join(f"{condition}: {n}" for condition, n in self.left_out.items())
            text += f" Left out, as they could not be replayed as their records count: {shown}."
        return text

    def tables(self) -> list[AnalysisTable]:
        tables = []
        rows: list[list[Cell]] = []
        for condition, roles in self.strategies.items():
            for role, by_outcome in roles.items():
                for outcome in OUTCOMES:
                    counts = by_outcome[outcome]
                    games = sum(counts.values())
                    if games or outcome == "all":
                        rows.append([condition, role, outcome, games, *(percent(counts[c], games) for c in CLASSES)])
        if rows:
            tables.append(AnalysisTable(
                name="strategies",
                title="Strategy classes per role, read from the turns (% of games)",
                columns=["condition", "role", "outcome", "games", *(f"{c} %" for c in CLASSES)],
                rows=rows, labels=3,
                note=self._note(
                    "all at once: the first message names every fact the role holds; piece by piece: "
                    "two or more messages name facts not named before; ignores: it never changed its "
                    "hypothesis when it had heard what fixes a wrong position."
                ),
            ))
        rows = [s.row(condition, role) for condition, roles in self.signatures.items() for role, s in roles.items()]
        if rows:
            tables.append(AnalysisTable(
                name="failure_signatures",
                title="Failure signatures per role: % of failed games and % of all games that show each",
                columns=["condition", "role", "games", "failed", "idle % failed", "idle % all",
                         "4+ changes % failed", "4+ changes % all"],
                rows=rows, labels=2,
                note=self._note(
                    "idle: a turn with no action when it had heard what fixes a wrong position; "
                    "4+ changes: one position modified 4 or more times; role any: some role of the game."
                ),
            ))
        if not tables and self.left_out:
            tables.append(AnalysisTable(
                name="left_out", title="Games the analyses could not read again", columns=["condition", "games"],
                rows=[[c, n] for c, n in self.left_out.items()], note=self._note(""),
            ))
        return tables
