"""The in-process message bus: typed messages, mailboxes, topics, channels and taps."""

from .bus import DEFAULT_MAILBOX_SIZE, Bus, NotConnected, Tap, UnknownAddress
from .channel import Channel
from .messages import Act, AnyMessage, Chat, GameOver, Message, TurnStart, YourTurn

__all__ = [
    "DEFAULT_MAILBOX_SIZE", "Act", "AnyMessage", "Bus", "Channel", "Chat", "GameOver", "Message",
    "NotConnected", "Tap", "TurnStart", "UnknownAddress", "YourTurn",
]
