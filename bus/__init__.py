"""The in-process message bus: typed messages, mailboxes, topics, channels and taps."""

from .bus import CHANNEL, DEFAULT_MAILBOX_SIZE, Bus, NotConnected, Tap, TapOn, UnknownAddress
from .channel import Channel, ChannelSpec, Delivery, PolicyChannel
from .messages import (
    Act, AnyMessage, Candidate, Candidates, ChannelNotice, Chat, Chosen, GameOver, HumanTurn, Message, Tokens, TurnStart, Usage, YourTurn,
)

__all__ = [
    "CHANNEL", "DEFAULT_MAILBOX_SIZE", "Act", "AnyMessage", "Bus", "Candidate", "Candidates", "Channel",
    "ChannelNotice", "ChannelSpec", "Chat", "Chosen", "Delivery", "GameOver", "Message", "PolicyChannel",
    "HumanTurn", "NotConnected", "Tap", "TapOn", "Tokens", "TurnStart", "UnknownAddress", "Usage", "YourTurn",
]
