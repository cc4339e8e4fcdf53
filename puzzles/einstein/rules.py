"""One Einstein game in progress (a ``puzzles.base.GameState``): the board, both players' knowledge,
the public history, the step count, and what every step did.

A step is one action of the player whose turn it is (the first action of its turn; any more are
rejected with a reason). It is checked against the player's valid set (``validity``, §2.5):
- valid: a move is applied (planner moves are always right; a block placed in a destination bin is
  learned by both players), a share gives the item to the partner (explicit, appended once) and
  marks it shared for both, an ask changes nothing but the history;
- anything else fails: the history shows it with ", but failed.", nothing changes, except that with
  ``random_guess`` a move the table allows physically still reaches the board, which takes it only
  into the common bin or the block's true bin (then both players learn the bin); the reference
  logs even that as failed (``fix_guess_flag`` logs it as succeeded). A pass is never valid; a
  reply that could not be read is logged as a failed pass.

Every step is spent, whatever it did. The game is solved when every block sits in its bin; it ends
then or after ``2 * max_turns`` steps. Solved on the last step is a success, as the paper says;
without ``success_on_last_step`` it is a failure (the reference code's rule).

A step never reached by a reply (an action object naming no block or bin of the game, or a step
after the game ended) is rejected without being spent.
"""

from __future__ import annotations

from typing import Any

from ..base import Outcome, Say, Step
from ..turn import Rejected
from .actions import Action, Ask, Move, Pass, Share, Unreadable, action_text, item_text, malformed, why_unreadable
from .board import BIN_NAMES, BIN_OF, COMMON, REACH, ROLES, Instance
from .knowledge import compact, start_mind
from .optima import optimum
from .params import EinsteinParams
from .taxonomy import LABELS, Tally, classify
from .validity import executable, settled, to_item, valid_actions
from .verifiers import VerifierLog, choose_candidate
from .view import EinsteinView, HistoryEntry


class EinsteinGame:
    """One game of ``instance`` under ``params``, limited to ``max_turns`` rounds of two steps."""

    def __init__(self, instance: Instance, params: EinsteinParams, max_turns: int) -> None:
        self.instance = instance
        self.params = params
        self.max_turns = max_turns
        self.roles: tuple[str, ...] = ROLES
        self.limit = 2 * max_turns
        self.modes = dict(zip(ROLES, params.modes))
        self.board = list(instance.start)
        self.minds = {role: start_mind(instance.n, instance.items, instance.knowledge[role]) for role in ROLES}
        self.history: list[tuple[str, Action, bool]] = []
        self.steps = 0
        self.solved_step: int | None = None
        self.tally = {role: Tally() for role in ROLES}
        self.verifier = {role: VerifierLog() for role in ROLES}
        self._pending: dict[str, dict] = {}
        self._item_index = {item: i for i, item in enumerate(instance.items)}

    # ---- What a player is shown ----

    def view(self, role: str) -> EinsteinView:
        mind = self.minds[role]
        bins: list[list[int]] = [[] for _ in BIN_NAMES]
        for block, where in enumerate(self.board):
            bins[where].append(block)
        return EinsteinView(
            mode=self.modes[role], prompt=self.params.prompt, cot=self.params.cot, notices=self.params.notices,
            knowledge=tuple(to_item(self.instance.items[i]) for i in mind.explicit),
            bins=tuple(tuple(b) for b in bins),
            reach=tuple(BIN_NAMES[b] for b in REACH[role]),
            history=tuple(HistoryEntry(who == role, action_text(action), failed) for who, action, failed in self.history),
            answers=self.params.seek_answers,
            guesses=self.params.random_guess,
        )

    def private(self, role: str) -> tuple:
        return tuple(to_item(self.instance.items[i]) for i in self.instance.knowledge[role])

    def secrets(self, role: str) -> tuple[str, ...]:
        """``role``'s constraints as its prompt writes them (for the leak audit: block numbers alone
        are on the table for everyone, so the audit looks for whole constraints)."""
        return tuple(item_text(item) for item in self.private(role))

    # ---- Validity ----

    def partner(self, role: str) -> str:
        return ROLES[1 - ROLES.index(role)]

    def asked(self, role: str) -> int | None:
        """The block the partner asked about in the step just before."""
        if self.history and self.history[-1][0] != role and isinstance(self.history[-1][1], Ask):
            return self.history[-1][1].block
        return None

    def marked(self, role: str, *, now: bool = True) -> set[tuple[int, ...]]:
        """The items ``role`` may not share: its marks, and (``now``) those settled on the board."""
        mind, items = self.minds[role], self.instance.items
        found = {items[i] for i in range(self.instance.n) if mind.marks >> i & 1}
        if now:
            found |= {items[i] for i in mind.explicit if settled(self.board, items[i])}
        return found

    def valid(self, role: str, *, answers: bool | None = None) -> list[Action]:
        """``role``'s valid set now (``answers``: include ask-mode answers; default: the game's rule)."""
        mind, items = self.minds[role], self.instance.items
        return valid_actions(
            role, self.modes[role], self.board, mind.know, [items[i] for i in mind.explicit], self.marked(role),
            self.asked(role), answers=self.params.seek_answers if answers is None else answers,
        )

    def explicit_items(self, role: str) -> list[tuple[int, ...]]:
        return [self.instance.items[i] for i in self.minds[role].explicit]

    # ---- Steps ----

    def step(self, role: str, actions: tuple[Action, ...]) -> Step:
        if self.done():
            return Step(rejected=tuple(Rejected(_text(a), "the game is over") for a in actions))
        extra = tuple(Rejected(_text(a), "one action per step: only the first action of a turn is taken") for a in actions[1:])
        action = actions[0] if actions else Unreadable("")
        problem = malformed(action)
        if problem is not None:
            return Step(rejected=(Rejected(_text(action), problem),) + extra)
        pending = self._pending.pop(role, None)
        labels = classify(self, role, action)
        result = self._execute(role, action)
        if pending is not None:
            self.verifier[role].record(pending)
        self.tally[role].count(action, labels, result)
        return Step(applied=result.applied, rejected=result.rejected + extra, say=result.say)

    def _execute(self, role: str, action: Action):
        partner = self.partner(role)
        mind = self.minds[role]
        settled_now = sum(1 << i for i in mind.explicit if settled(self.board, self.instance.items[i]))
        self.minds[role] = mind.marked(settled_now)
        valid = action in self.valid(role)
        outcome = _Outcome()
        if valid:
            outcome.applied = 1
            if isinstance(action, Move):
                self._move(action)
            elif isinstance(action, Share):
                i = self._item_index[compact(action.item)]  # type: ignore[index]  # a valid share's item is the instance's
                self.minds[partner] = self.minds[partner].hears(i, self.instance.items[i]).marked(1 << i)
                self.minds[role] = self.minds[role].marked(1 << i)
                outcome.say = (Say(action_text(action)),)
            elif isinstance(action, Ask):
                outcome.say = (Say(action_text(action)),)
        elif isinstance(action, Move) and self.params.random_guess and action.block < self.instance.n and executable(role, self.board, action):
            outcome.guess = True
            if self._move(action):
                outcome.applied = 1
                outcome.lucky = BIN_OF[action.target] != COMMON
            else:
                outcome.rejected = (Rejected(action_text(action), f"block{action.block} does not belong in {action.target}: the board refused the move"),)
        else:
            outcome.rejected = (Rejected(action_text(action), self._why(role, action)),)
        failed = not valid and not (outcome.applied and self.params.fix_guess_flag)
        self.steps += 1
        if self.solved_step is None and self.solved():
            self.solved_step = self.steps
            failed = False  # the reference logs the solving step as a success, whatever it was
        self.history.append((role, action, failed))
        outcome.failed = failed
        return outcome

    def _move(self, move: Move) -> bool:
        """Apply a move the board accepts (into the common bin or the block's true bin); True if it did."""
        block, target = move.block, BIN_OF[move.target]
        if target != COMMON and target != self.instance.goal[block]:
            return False
        if self.board[block] == target:
            return False
        self.board[block] = target
        if target != COMMON:
            for role in ROLES:
                self.minds[role] = self.minds[role].sees(block, target)
        return True

    def _why(self, role: str, action: Action) -> str:
        if isinstance(action, Unreadable):
            return f"the reply could not be read: {why_unreadable(action.text)}"
        if isinstance(action, Pass):
            return "a pass is never a valid action; the step is spent"
        if isinstance(action, Move):
            if action.block >= self.instance.n:
                return f"there is no block{action.block}"
            if not self.params.random_guess or not executable(role, self.board, action):
                return "the move is not possible from here"
            return "the move is not valid"
        if isinstance(action, Share):
            return "you cannot share that knowledge now"
        if isinstance(action, Ask):
            if action.block < self.instance.n and self.minds[role].know[action.block] < 4:
                return f"you know where block{action.block} goes already"
            return "you cannot ask that now"
        return "not valid"

    # ---- Verifiers ----

    def candidates_wanted(self, role: str) -> int:
        """How many candidate replies the game wants for ``role``'s next step (1: no verifier)."""
        return 1 if self.params.verifier == "none" else self.params.candidates

    def choose(self, role: str, candidates: tuple[tuple[Action, ...], ...]) -> int:
        """The index of the candidate to play (the verifier's pick), recorded with the next step."""
        index, record = choose_candidate(self, role, candidates)
        self._pending[role] = record
        return index

    # ---- The end ----

    def solved(self) -> bool:
        return all(where == goal for where, goal in zip(self.board, self.instance.goal))

    def done(self) -> bool:
        return self.solved_step is not None or self.steps >= self.limit

    def success(self) -> bool:
        if self.solved_step is None:
            return False
        return self.params.success_on_last_step or self.solved_step < self.limit

    def outcome(self) -> Outcome:
        return "success" if self.success() else "failure"

    def placed(self) -> int:
        return sum(where == goal for where, goal in zip(self.board, self.instance.goal))

    def progress(self, role: str) -> int:
        return self.placed()

    def optimal_steps(self) -> int | None:
        return optimum(self.instance, self.params.modes, self.params.planner_budget, answers=self.params.seek_answers).steps

    def scores(self) -> dict[str, bool | float]:
        success = self.success()
        steps = self.solved_step if success and self.solved_step is not None else self.steps
        scores: dict[str, bool | float] = {
            "success": success, "partial": self.placed() / self.instance.n, "steps": steps,
        }
        best = self.optimal_steps()
        if best:
            if success:
                scores["step_ratio"] = steps / best
            scores["step_ratio_all"] = (steps if success else self.limit) / best
        if self.params.verifier != "none" and self.steps:
            scores["corrected_rate"] = sum(log.corrected for log in self.verifier.values()) / self.steps
        return scores

    def metrics(self) -> dict[str, Any]:
        return {
            "game_id": self.instance.id,
            "optimal_steps": self.optimal_steps(),
            "modes": "/".join(self.params.modes),
            "solved_step": self.solved_step,
            # The reference's rewards (logged, not used for its metrics): -0.1 for every failed step.
            "reward": {role: round(-0.1 * sum(failed for who, _, failed in self.history if who == role), 1) for role in ROLES},
            "actions": {role: self.tally[role].counts() for role in ROLES},
            "errors": {role: self.tally[role].errors() for role in ROLES},
            "error_labels": list(LABELS),
            "verifier": {role: self.verifier[role].summary() for role in ROLES} if self.params.verifier != "none" else None,
        }


class _Outcome:
    __slots__ = ("applied", "rejected", "say", "guess", "lucky", "failed")

    def __init__(self) -> None:
        self.applied = 0
        self.rejected: tuple[Rejected, ...] = ()
        self.say: tuple[Say, ...] = ()
        self.guess = False
        self.lucky = False
        self.failed = False


def _text(action: Any) -> str:
    if isinstance(action, (Move, Share, Ask, Pass, Unreadable)):
        return action_text(action)
    return repr(action)[:80]  # not one of the game's actions


__all__ = ["EinsteinGame"]
