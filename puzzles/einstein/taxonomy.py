"""The error taxonomy of the paper's Table 2 (§3.1), applied to every executed action, and the
per-player counts of what each player did.

Labels (one action may carry several), decided on the state before the action:
- ``format``: the reply could not be read;
- physical (moves): ``object_not_in_source`` (also a block that does not exist),
  ``source_unreachable``, ``destination_unreachable``, ``same_source_destination``;
- communication: ``redundant_share`` (the partner holds the item already, or it is marked shared),
  ``unknown_share`` (ours: sharing an item the player does not hold), ``no_share_after_seek`` (the
  partner asked about block b in the step before, the player could share an item about b and did not
  share at all), ``wrong_share_after_seek`` (it shared something not about b), ``seek_known_object``
  (an ask about a block whose bin the player can infer);
- reasoning (moves): ``wrong_rule_understanding`` (the player can infer the block's bin and moves it
  elsewhere: another destination bin, or the common bin although the bin is on its side),
  ``wrong_random_guess`` (it cannot, and moves the block into a destination bin that is not its bin).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .actions import Ask, Move, Pass, Share, Unreadable
from .board import BIN_OF, COMMON, OWN
from .knowledge import compact
from .validity import SHARES, mentions, open_shares, physical_problems

LABELS = (
    "format", "object_not_in_source", "source_unreachable", "destination_unreachable", "same_source_destination",
    "redundant_share", "unknown_share", "no_share_after_seek", "wrong_share_after_seek", "seek_known_object",
    "wrong_rule_understanding", "wrong_random_guess",
)


def classify(state: Any, role: str, action: Any) -> list[str]:
    """The labels of ``action`` by ``role`` in ``state`` (an ``EinsteinGame`` before the action)."""
    n = state.instance.n
    know = state.minds[role].know
    labels: list[str] = []
    if isinstance(action, Unreadable):
        labels.append("format")
    elif isinstance(action, Move):
        labels += physical_problems(role, state.board, action)
        if action.block < n:
            target, goal = BIN_OF[action.target], know[action.block]
            if goal < 4:
                if target != goal and not (target == COMMON and goal not in OWN[role]):
                    labels.append("wrong_rule_understanding")
            elif target < 4 and target != state.instance.goal[action.block]:
                labels.append("wrong_random_guess")
    elif isinstance(action, Share):
        item = compact(action.item)
        partner = state.partner(role)
        if item is None or item not in state.explicit_items(role):
            labels.append("unknown_share")
        elif item in state.explicit_items(partner) or item in state.marked(role, now=False):
            labels.append("redundant_share")
    elif isinstance(action, Ask):
        if action.block < n and know[action.block] < 4:
            labels.append("seek_known_object")
    asked = state.asked(role)
    if asked is not None:
        if isinstance(action, Share):
            item = compact(action.item)
            if item is None or not mentions(item, asked):
                labels.append("wrong_share_after_seek")
        elif _could_answer(state, role, asked):
            labels.append("no_share_after_seek")
    return labels


def _could_answer(state: Any, role: str, block: int) -> bool:
    mode = state.modes[role]
    if not (mode in SHARES or (mode == "ask" and state.params.seek_answers)):
        return False
    items = open_shares(state.board, state.explicit_items(role), state.marked(role))
    return any(mentions(item, block) for item in items)


_KINDS: dict[type, str] = {Move: "moves", Share: "shares", Ask: "asks", Pass: "passes", Unreadable: "unreadable"}


class Tally:
    """What one player did: actions by kind, failed steps, guesses the board took, error labels."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.labels: Counter[str] = Counter()

    def count(self, action: Any, labels: list[str], outcome: Any) -> None:
        kind = _KINDS[type(action)]
        self.kinds[kind] += 1
        self.kinds["steps"] += 1
        if outcome.failed:
            self.kinds["failed"] += 1
        if outcome.guess:
            self.kinds["guesses"] += 1
        if outcome.lucky:
            self.kinds["lucky_guesses"] += 1
        self.labels.update(labels)
        if not labels:
            self.kinds["no_error"] += 1

    def counts(self) -> dict[str, int]:
        keys = ("steps", "moves", "shares", "asks", "passes", "unreadable", "failed", "guesses", "lucky_guesses", "no_error")
        return {k: self.kinds[k] for k in keys}

    def errors(self) -> dict[str, int]:
        return {label: self.labels[label] for label in LABELS}


__all__ = ["LABELS", "Tally", "classify"]
