"""A seat's turns as one token sequence for training: which tokens the seat generated (the loss
mask), where each turn begins and ends, and where the sequence cannot be one.

Each model turn of a seat brings back its ``Tokens`` (``--tokens``): the prompt's ids as the server
consumed them, the ids it sampled and their log-probabilities. With chat memory the next turn's prompt
holds the whole chat so far, so its ids should begin with the previous turn's prompt and completion
ids; what follows them (the chat template's end of turn, what the game wrote since, the new prompt)
is the game's, and the next completion the seat's. ``seat_trajectory`` joins the turns so, without
re-tokenizing anything, and reports each turn whose prompt does not begin with the sequence so far
(a ``Mismatch``: the template rewrote the reply, say, or the server tokenizes the reply's text
otherwise than the model sampled it): the sequence is then cut there and the turn starts a new one,
so that every id a trainer gets is one the server consumed or sampled. Without chat memory
(``chat=False``) each turn is a sequence of its own and nothing is a mismatch.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from bus import Tokens


class Boundary(msgspec.Struct, frozen=True):
    """Where one turn lies: in which sequence, where its new prompt ids begin (``prompt_start``:
    after what the sequence already held), where its completion begins and where it ends (exclusive)."""

    sequence: int
    prompt_start: int
    completion_start: int
    completion_end: int


class Mismatch(msgspec.Struct, frozen=True):
    """A turn whose prompt ids do not begin with the sequence so far: the turn, the first offset
    where they differ (or the length of the shorter), and the ids found and expected from there on
    (at most ``SHOWN`` of each)."""

    turn: int
    offset: int
    expected: tuple[int, ...]
    found: tuple[int, ...]


SHOWN = 8  # ids of each side a mismatch keeps


class TokenSequence(msgspec.Struct, frozen=True):
    """One sequence: its ids, the loss mask (1: the seat generated the token, 0: the game or the
    chat template wrote it) and the log-probability of each id (0.0 where the mask is 0)."""

    ids: tuple[int, ...]
    mask: tuple[int, ...]
    logprobs: tuple[float, ...]


class Trajectory(msgspec.Struct, frozen=True):
    """A seat's turns as token sequences (one, where every turn extends the one before), each turn's
    ``Boundary`` in order, and the ``Mismatch`` of each turn that started a new sequence against the
    chat so far."""

    sequences: tuple[TokenSequence, ...]
    turns: tuple[Boundary, ...]
    mismatches: tuple[Mismatch, ...]


class _Building:
    def __init__(self) -> None:
        self.ids: list[int] = []
        self.mask: list[int] = []
        self.logprobs: list[float] = []

    def done(self) -> TokenSequence:
        return TokenSequence(tuple(self.ids), tuple(self.mask), tuple(self.logprobs))


def _first_difference(ids: Sequence[int], prompt: Sequence[int]) -> int | None:
    """The first offset where ``prompt`` does not continue ``ids`` (None: it begins with them)."""
    for i, (a, b) in enumerate(zip(ids, prompt)):
        if a != b:
            return i
    return None if len(prompt) >= len(ids) else len(prompt)


def seat_trajectory(turns: Sequence[Tokens], *, chat: bool = True) -> Trajectory:
    """One seat's turns (each with its prompt ids, completion ids and logprobs, in the order played)
    as token sequences with their loss mask and turn boundaries; ``chat``: the seat keeps its chat,
    so each prompt should begin with the sequence so far (see the module's docstring). ValueError for
    a turn without ids, or with a logprob count that is not its completion's."""
    sequences: list[TokenSequence] = []
    boundaries: list[Boundary] = []
    mismatches: list[Mismatch] = []
    current: _Building | None = None
    for number, tokens in enumerate(turns):
        prompt, completion, logprobs = tokens.prompt_ids, tokens.completion_ids, tokens.logprobs
        if prompt is None or completion is None or logprobs is None:
            raise ValueError(f"turn {number} has no token ids or logprobs (play with --tokens)")
        if len(logprobs) != len(completion):
            raise ValueError(f"turn {number} has {len(logprobs)} logprobs for {len(completion)} completion tokens")
        if current is not None and chat:
            at = _first_difference(current.ids, prompt)
            if at is not None:
                mismatches.append(Mismatch(number, at, tuple(current.ids[at:at + SHOWN]), tuple(prompt[at:at + SHOWN])))
                sequences.append(current.done())
                current = None
        elif current is not None:
            sequences.append(current.done())
            current = None
        if current is None:
            current = _Building()
        start = len(current.ids)
        new = prompt[start:]
        current.ids.extend(new)
        current.mask.extend([0] * len(new))
        current.logprobs.extend([0.0] * len(new))
        completion_start = len(current.ids)
        current.ids.extend(completion)
        current.mask.extend([1] * len(completion))
        current.logprobs.extend(logprobs)
        boundaries.append(Boundary(len(sequences), start, completion_start, len(current.ids)))
    if current is not None:
        sequences.append(current.done())
    return Trajectory(tuple(sequences), tuple(boundaries), tuple(mismatches))


def turn_prompt_ids(trajectory: Trajectory, turn: int) -> tuple[int, ...]:
    """The ids the trajectory gives as turn ``turn``'s prompt: its sequence up to the turn's completion."""
    boundary = trajectory.turns[turn]
    return trajectory.sequences[boundary.sequence].ids[: boundary.completion_start]


__all__ = ["Boundary", "Mismatch", "TokenSequence", "Trajectory", "seat_trajectory", "turn_prompt_ids"]
