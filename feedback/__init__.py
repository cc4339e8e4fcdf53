"""Feedback: the actor on the path Environment -> agent that adds a game's feedback to each turn.
The modes themselves belong to each game (``Rules.feedback``)."""

from .actor import FeedbackActor

__all__ = ["FeedbackActor"]
