"""Channels carry agent-to-agent text. The default is unlimited and faithful.

A channel is the one place where limits, noise, delay and drops go: ``transmit`` gets the message as
sent and returns the messages to deliver now (none, the same one, or altered ones).
"""

from __future__ import annotations

from .messages import Chat


class Channel:
    """Unlimited, faithful delivery."""

    def transmit(self, chat: Chat) -> tuple[Chat, ...]:
        return (chat,)
