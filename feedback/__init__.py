"""Feedback: the six modes as pure functions, and the actor that applies one."""

from .modes import MODES, feedback_mode

__all__ = ["MODES", "feedback_mode"]
