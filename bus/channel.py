"""Channels carry agent-to-agent text. The default is unlimited and faithful.

A channel is the one place where limits, noise, delay and drops go. ``transmit`` gets the message as
sent and returns what to deliver now plus what happened to it; messages held back are released by
``release`` when their round comes. A ``ChannelSpec`` describes a channel as data.
"""

from __future__ import annotations

import random
import string
from typing import Literal

import msgspec

from .messages import Chat


class ChannelSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a channel does to each message, in this order: budget, drop, noise, delay.

    - ``max_chars`` / ``max_tokens``: a budget per message; ``over_budget`` says whether a longer
      message is cut to fit ("truncate") or not delivered, the sender being told ("reject").
    - ``game_chars`` / ``game_tokens``: a budget for everything the sender says on this channel in the
      game; once spent, messages are cut or rejected the same way.
    - ``drop``: probability that a message is lost.
    - ``noise``: per character, the probability that it is dropped, and the same that a random
      character is inserted after it.
    - ``delay``: whole rounds before delivery (0: at once).
    Tokens are counted as whitespace-separated words unless the engine is given a tokenizer.
    """

    max_chars: int | None = None
    max_tokens: int | None = None
    over_budget: Literal["truncate", "reject"] = "truncate"
    game_chars: int | None = None
    game_tokens: int | None = None
    drop: float = 0.0
    noise: float = 0.0
    delay: int = 0

    def check(self) -> None:
        """Raise ValueError naming a field out of range."""
        for name in ("max_chars", "max_tokens", "game_chars", "game_tokens"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"channel {name} must be 0 or more, got {value}")
        for name in ("drop", "noise"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"channel {name} must be between 0 and 1, got {getattr(self, name)}")
        if self.delay < 0:
            raise ValueError(f"channel delay must be 0 or more, got {self.delay}")


class Delivery(msgspec.Struct, frozen=True, gc=False):
    """What a channel did to one message."""

    turn: int
    sender: str
    recipient: str
    sent_chars: int
    delivered_chars: int  # 0 when nothing was delivered
    fate: str  # delivered, truncated, noised, rejected, dropped, budget spent, undelivered (game over)
    delay: int = 0  # turns of the recipient the message was held for


def count_words(text: str) -> int:
    return len(text.split())


def _cut_words(text: str, limit: int) -> str:
    return " ".join(text.split()[:limit])


class Spend:
    """What one sender has said so far in a game, over all its channels (for game budgets)."""

    def __init__(self) -> None:
        self.chars = 0
        self.tokens = 0


class Channel:
    """Unlimited, faithful delivery. It holds no state, so one serves any number of pairs."""

    __slots__ = ()

    def transmit(self, chat: Chat) -> tuple[tuple[Chat, ...], Delivery | None, str | None]:
        """(messages to deliver now, what happened, a notice for the sender or None)."""
        return (chat,), None, None

    def release(self, recipient: str) -> tuple[Chat, ...]:
        """Called as ``recipient`` is about to take a turn: the held messages it hears now."""
        return ()

    def undelivered(self) -> tuple[Delivery, ...]:
        """Messages still held when the game ended."""
        return ()


class PolicyChannel(Channel):
    """A channel that applies a ``ChannelSpec``. ``rng`` draws drops and noise (seed it per game);
    ``spend`` is shared by all the channels of one sender. ``hold``: deliver only when the recipient
    next takes a turn (simultaneous play: what is said in a round is heard in the next)."""

    _NOISE_ALPHABET = string.ascii_lowercase + " "

    def __init__(
        self, spec: ChannelSpec, rng: random.Random, *, spend: Spend | None = None,
        count_tokens=count_words, hold: bool = False,
    ) -> None:
        self.spec = spec
        self.rng = rng
        self.spend = spend or Spend()
        self.count_tokens = count_tokens
        self.hold = hold
        self._held: list[list] = []  # [turns still to wait, message, its delivery record]

    def _fit(self, text: str) -> tuple[str, bool]:
        """The text cut to every budget that applies, and whether it had to be cut."""
        spec, spent, fitted = self.spec, self.spend, text
        chars = [x for x in (spec.max_chars, None if spec.game_chars is None else spec.game_chars - spent.chars) if x is not None]
        tokens = [x for x in (spec.max_tokens, None if spec.game_tokens is None else spec.game_tokens - spent.tokens) if x is not None]
        if tokens and self.count_tokens(fitted) > max(0, min(tokens)):
            fitted = _cut_words(fitted, max(0, min(tokens)))
        if chars and len(fitted) > max(0, min(chars)):
            fitted = fitted[: max(0, min(chars))]
        return fitted, fitted != text

    def _noisy(self, text: str) -> str:
        out = []
        for ch in text:
            if self.rng.random() >= self.spec.noise:
                out.append(ch)
            if self.rng.random() < self.spec.noise:
                out.append(self.rng.choice(self._NOISE_ALPHABET))
        return "".join(out)

    def transmit(self, chat: Chat) -> tuple[tuple[Chat, ...], Delivery | None, str | None]:
        spec, text = self.spec, chat.text

        def record(delivered: str, fate: str) -> Delivery:
            return Delivery(chat.turn, chat.sender, chat.recipient, len(text), len(delivered), fate, spec.delay)

        fitted, cut = self._fit(text)
        if cut and (spec.over_budget == "reject" or not fitted.strip()):
            reason = "it is over the channel's budget" if fitted.strip() else "the budget is spent"
            notice = f"Your message to {chat.recipient} was not delivered: {reason}."
            return (), record("", "rejected" if spec.over_budget == "reject" else "budget spent"), notice
        self.spend.chars += len(fitted)
        self.spend.tokens += self.count_tokens(fitted)
        if spec.drop and self.rng.random() < spec.drop:
            return (), record("", "dropped"), None
        delivered, fate = fitted, ("truncated" if cut else "delivered")
        if spec.noise:
            delivered = self._noisy(fitted)
            if delivered != fitted:
                fate = "noised" if fate == "delivered" else fate + ", noised"
        out = msgspec.structs.replace(chat, text=delivered)
        delivery = record(delivered, fate)
        if self.hold or spec.delay:
            self._held.append([spec.delay, out, delivery])
            return (), delivery, None
        return (out,), delivery, None

    def release(self, recipient: str) -> tuple[Chat, ...]:
        """Each held message waits ``delay`` of the recipient's turns, counted from the first turn
        at which it would have been heard."""
        due = []
        for entry in self._held:
            if entry[1].recipient != recipient:
                continue
            if entry[0] == 0:
                due.append(entry)
            else:
                entry[0] -= 1
        self._held = [e for e in self._held if not any(e is d for d in due)]
        return tuple(entry[1] for entry in due)

    def undelivered(self) -> tuple[Delivery, ...]:
        return tuple(
            msgspec.structs.replace(entry[2], delivered_chars=0, fate="undelivered (game over)")
            for entry in self._held
        )
