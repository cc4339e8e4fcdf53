"""Game logic: pure, synchronous and deterministic by seed. AsymPuzl first."""

from .asympuzl import (
    ALICE,
    BOB,
    ROLES,
    Feedback,
    InvalidParameter,
    Piece,
    Puzzle,
    Rejected,
    Replace,
    RoleStatus,
    apply_actions,
    check_action,
    check_params,
    correct_count,
    generate,
    is_solved,
    render_clues,
    render_feedback,
    render_pieces,
    wrong_positions,
)
from .replies import Reply, ReplyFormatError, format_reply, parse_reply

__all__ = [
    "ALICE", "BOB", "ROLES", "Feedback", "InvalidParameter", "Piece", "Puzzle", "Rejected", "Replace", "Reply",
    "ReplyFormatError", "RoleStatus", "apply_actions", "check_action", "check_params",
    "correct_count", "format_reply", "generate", "is_solved", "parse_reply", "render_clues",
    "render_feedback", "render_pieces", "wrong_positions",
]
