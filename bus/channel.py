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
    fate: str  # delivered, truncated, rejected, dropped, noised; "delayed N" is added when held
    due: int  # the round it is delivered in


def count_words(text: str) -> int:
    return len(text.split())


def _cut_words(text: str, limit: int) -> str:
    return " ".join(text.split()[:limit])


class Channel:
    """Unlimited, faithful delivery."""

    def transmit(self, chat: Chat, round: int) -> tuple[tuple[Chat, ...], Delivery | None, str | None]:
        """(messages to deliver now, what happened, a notice for the sender or None)."""
        return (chat,), None, None

    def release(self, round: int) -> tuple[Chat, ...]:
        """Messages held back whose round has come."""
        return ()


class PolicyChannel(Channel):
    """A channel that applies a ``ChannelSpec``. ``rng`` draws drops and noise (seed it per game)."""

    _NOISE_ALPHABET = string.ascii_lowercase + " "

    def __init__(self, spec: ChannelSpec, rng: random.Random, count_tokens=count_words, min_delay: int = 0) -> None:
        self.spec = spec
        self.rng = rng
        self.count_tokens = count_tokens
        self.min_delay = min_delay
        self.spent_chars = 0
        self.spent_tokens = 0
        self._held: list[tuple[int, Chat]] = []

    def _fit(self, text: str) -> tuple[str, bool]:
        """The text cut to every budget that applies, and whether it had to be cut."""
        spec, fitted = self.spec, text
        limits_chars = [x for x in (spec.max_chars, None if spec.game_chars is None else spec.game_chars - self.spent_chars) if x is not None]
        limits_tokens = [x for x in (spec.max_tokens, None if spec.game_tokens is None else spec.game_tokens - self.spent_tokens) if x is not None]
        if limits_tokens and self.count_tokens(fitted) > max(0, min(limits_tokens)):
            fitted = _cut_words(fitted, max(0, min(limits_tokens)))
        if limits_chars and len(fitted) > max(0, min(limits_chars)):
            fitted = fitted[: max(0, min(limits_chars))]
        return fitted, fitted != text

    def _noisy(self, text: str) -> str:
        out = []
        for ch in text:
            if self.rng.random() >= self.spec.noise:
                out.append(ch)
            if self.rng.random() < self.spec.noise:
                out.append(self.rng.choice(self._NOISE_ALPHABET))
        return "".join(out)

    def transmit(self, chat: Chat, round: int) -> tuple[tuple[Chat, ...], Delivery | None, str | None]:
        spec, text = self.spec, chat.text
        delay = self.min_delay + spec.delay
        fitted, cut = self._fit(text)

        def record(delivered: str, fate: str) -> Delivery:
            if delay and delivered:
                fate += f", delayed {delay}"
            return Delivery(chat.turn, chat.sender, chat.recipient, len(text), len(delivered), fate, round + delay)

        if cut and spec.over_budget == "reject":
            notice = f"Your message to {chat.recipient} was not delivered: it is over the channel's budget."
            return (), record("", "rejected"), notice
        self.spent_chars += len(fitted)
        self.spent_tokens += self.count_tokens(fitted)
        if spec.drop and self.rng.random() < spec.drop:
            return (), record("", "dropped"), None
        delivered, fate = fitted, ("truncated" if cut else "delivered")
        if spec.noise:
            delivered = self._noisy(fitted)
            if delivered != fitted:
                fate = "noised" if fate == "delivered" else fate + ", noised"
        out = msgspec.structs.replace(chat, text=delivered)
        if delay:
            self._held.append((round + delay, out))
            return (), record(delivered, fate), None
        return (out,), record(delivered, fate), None

    def release(self, round: int) -> tuple[Chat, ...]:
        due = tuple(chat for when, chat in self._held if when <= round)
        self._held = [(when, chat) for when, chat in self._held if when > round]
        return due
