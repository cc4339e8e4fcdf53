"""An in-process bus for one game: bounded mailboxes, addresses, topics, channels and taps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from anyio import WouldBlock

from .channel import Channel
from .mailbox import Mailbox
from .messages import ChannelNotice, Chat

Tap = Callable[[str, Any], None]
"""Called as ``tap(address, message)`` for every message delivered on the bus, and as
``tap(CHANNEL, delivery)`` for what a channel did to each agent-to-agent message."""



class TapOn(NamedTuple):
    """A tap for messages of some kinds only (``YourTurn``, ``Act``, ``Delivery``, ...): the kinds it
    does not want cost it no call. ``kinds`` is best one frozenset shared by every game's tap."""

    tap: Tap
    kinds: frozenset[type] | None  # None: every kind

CHANNEL = "channel"

DEFAULT_MAILBOX_SIZE = 64
UNLIMITED = Channel()  # holds no state: one for every pair connected without a channel of its own


class UnknownAddress(LookupError):
    pass


class NotConnected(LookupError):
    pass


class Bus:
    """Addresses map to bounded mailboxes (``mailbox.Mailbox``).

    ``send`` takes the non-blocking fast path when the mailbox has room and waits (back-pressure)
    only when it is full. Taps see every delivered message without the actors knowing.
    """

    __slots__ = ("mailbox_size", "_mailboxes", "_topics", "_channels", "_taps")

    def __init__(self, mailbox_size: int = DEFAULT_MAILBOX_SIZE) -> None:
        self.mailbox_size = mailbox_size
        self._mailboxes: dict[str, Mailbox] = {}
        self._topics: dict[str, list[str]] = {}
        self._channels: dict[tuple[str, str], Channel] = {}
        # (tap, kinds) pairs as plain tuples, not ``TapOn``s: a plain pair unpacks without an iterator
        # on every message, and a tuple of tuples is the least memory for the games in flight
        self._taps: tuple[tuple[Tap, frozenset[type] | None], ...] = ()

    def register(self, address: str) -> Mailbox:
        """Create the mailbox for ``address`` and return it (its reader's end)."""
        if address in self._mailboxes:
            raise ValueError(f"address {address!r} is already registered")
        mailbox = self._mailboxes[address] = Mailbox(self.mailbox_size)
        return mailbox

    def subscribe(self, address: str, topic: str) -> None:
        self._topics.setdefault(topic, []).append(address)

    def connect(self, sender: str, recipient: str, channel: Channel | None = None) -> None:
        """Allow ``sender`` to talk to ``recipient`` through ``channel`` (unlimited by default)."""
        self._channels[(sender, recipient)] = channel or UNLIMITED

    def talks_to(self, sender: str) -> list[str]:
        return [r for (s, r) in self._channels if s == sender]

    def add_tap(self, tap: Tap | TapOn) -> None:
        """Show the bus's messages to ``tap``, in the order taps were added: every message, or those
        of the kinds a ``TapOn`` names."""
        self._taps += ((tap.tap, tap.kinds) if isinstance(tap, TapOn) else (tap, None),)

    def _tap(self, address: str, message: Any) -> None:
        kind = type(message)
        for tap, kinds in self._taps:
            if kinds is None or kind in kinds:
                tap(address, message)

    async def send(self, address: str, message: Any) -> None:
        mailbox = self._mailboxes.get(address)
        if mailbox is None:
            raise UnknownAddress(f"no mailbox at address {address!r}")
        try:
            mailbox.send_nowait(message)
        except WouldBlock:
            await mailbox.send(message)
        taps = self._taps
        if taps:  # ``_tap`` written out: every message of every game passes here
            kind = type(message)  # a call the interpreter specializes; ``__class__`` is a generic lookup
            for tap, kinds in taps:
                if kinds is None or kind in kinds:
                    tap(address, message)

    async def publish(self, topic: str, message: Any) -> None:
        for address in self._topics.get(topic, ()):
            await self.send(address, message)

    async def say(self, chat: Chat) -> None:
        """Send agent-to-agent text through the channel between sender and recipient."""
        channel = self._channels.get((chat.sender, chat.recipient))
        if channel is None:
            raise NotConnected(f"{chat.sender!r} may not talk to {chat.recipient!r}")
        now, delivery, notice = channel.transmit(chat)
        if delivery is not None and self._taps:
            self._tap(CHANNEL, delivery)
        for delivered in now:
            await self.send(delivered.recipient, delivered)
        if notice is not None:
            await self.send(chat.sender, ChannelNotice(game_id=chat.game_id, turn=chat.turn, role=chat.sender, text=notice))

    async def turn_starting(self, role: str) -> None:
        """``role`` is about to take a turn: deliver what channels held back for it now."""
        for (_, recipient), channel in self._channels.items():
            if recipient == role:
                for delivered in channel.release(role):
                    await self.send(delivered.recipient, delivered)

    def end(self) -> None:
        """The game is over: tell the taps what channels still held."""
        for channel in self._channels.values():
            for delivery in channel.undelivered():
                if self._taps:
                    self._tap(CHANNEL, delivery)

    def close(self) -> None:
        """Nothing more will be sent: each reader ends once it has taken what is in its mailbox."""
        for mailbox in self._mailboxes.values():
            mailbox.end()
