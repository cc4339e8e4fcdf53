"""A branch point: where a recorded game is played again with one message changed.

A game is deterministic by seed, so playing its spec again replays it; a branch point names one
turn of one role and what is said there instead (the ``alternative``), and the game plays on from
there. A grid's ``branch`` axis lists branch points: each is a condition, played on the same seeds as
the run it branches (``Grid.branch_from``), so branch and original pair by seed.

Alternatives, as written in a grid or on the command line:

- ``original``: the turn as the policy plays it (the branch equals the recorded game);
- ``drop``: no message (the actions stay);
- ``truncate:N``: the message cut to its first N tokens (words), as a channel's budget cuts it;
- ``noise:P``: each character dropped, and a random one inserted, with probability P, as a noisy
  channel does (the point's ``sample`` seeds the noise);
- ``resample``: the whole reply sampled again from the seat's model at the run's settings (sample
  number ``sample + 1`` of that turn, so K branches are K other samples; a model's seat only);
- ``policy:NAME``: the message a named policy sends in that seat at that turn (it follows the game
  from the start, so a policy with memory knows what its seat has heard).
"""

from __future__ import annotations

import msgspec

ALTERNATIVES = ("original", "drop", "truncate:N", "noise:P", "resample", "policy:NAME")


class Original(msgspec.Struct, frozen=True):
    pass


class Drop(msgspec.Struct, frozen=True):
    pass


class Truncate(msgspec.Struct, frozen=True):
    tokens: int


class Noise(msgspec.Struct, frozen=True):
    rate: float


class Resample(msgspec.Struct, frozen=True):
    pass


class OtherPolicy(msgspec.Struct, frozen=True):
    name: str


Alternative = Original | Drop | Truncate | Noise | Resample | OtherPolicy


def read_alternative(text: str) -> Alternative:
    """The alternative a string names; ValueError with a one-line reason otherwise."""
    kind, _, value = text.strip().partition(":")
    if kind in ("original", "drop", "resample") and not value:
        plain: dict[str, Alternative] = {"original": Original(), "drop": Drop(), "resample": Resample()}
        return plain[kind]
    if kind == "truncate":
        if not value.isdigit():
            raise ValueError(f"truncate takes a number of tokens (truncate:N), got {text!r}")
        return Truncate(int(value))
    if kind == "noise":
        try:
            rate = float(value)
        except ValueError:
            rate = -1.0
        if not 0.0 < rate <= 1.0:
            raise ValueError(f"noise takes a probability above 0 and at most 1 (noise:P), got {text!r}")
        return Noise(rate)
    if kind == "policy" and value.strip():
        return OtherPolicy(value.strip())
    raise ValueError(f"unknown alternative {text!r}; one of {', '.join(ALTERNATIVES)}")


class BranchPoint(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Turn ``turn`` of ``role`` played with ``alternative``; ``sample`` tells K branches of one
    point apart (the resample's number, the noise's seed)."""

    turn: int
    role: str
    alternative: str
    sample: int = 0

    def check(self, roles: tuple[str, ...]) -> None:
        """Raise ValueError naming what is wrong."""
        read_alternative(self.alternative)
        if self.turn < 1:
            raise ValueError(f"a branch turn counts from 1, got {self.turn}")
        if self.role not in roles:
            raise ValueError(f"branch role {self.role!r} is not a seat of the game ({', '.join(roles)})")
        if self.sample < 0:
            raise ValueError(f"a branch sample is 0 or more, got {self.sample}")

    def label(self) -> str:
        return f"t{self.turn} {self.role} {self.alternative}#{self.sample}"


def branch_points(
    turns: range | list[int], roles: tuple[str, ...], alternatives: list[str], k: int = 1,
) -> list[BranchPoint]:
    """Every turn of every role with every alternative; ``k`` branches of each alternative that
    draws (``resample``, ``noise``), one of the others (they give the same message every time)."""
    points: list[BranchPoint] = []
    for turn in turns:
        for role in roles:
            for alternative in alternatives:
                draws = isinstance(read_alternative(alternative), Resample | Noise)
                points.extend(
                    BranchPoint(turn=turn, role=role, alternative=alternative, sample=sample)
                    for sample in range(k if draws else 1)
                )
    return points
