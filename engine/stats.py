"""Summary statistics over game records."""

from __future__ import annotations

import math
from collections.abc import Iterable

import msgspec

from .records import GameRecord

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion, as fractions in [0, 1]."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


class ConditionSummary(msgspec.Struct):
    condition: str
    fields: dict[str, str]
    games: int
    successes: int
    failures: int
    errors: int
    success_rate: float  # among games that ended without error
    ci_low: float
    ci_high: float
    mean_solved_turn: float | None
    actions_per_position: dict[str, float]
    format_errors: int
    invalid_actions: int
    error_kinds: dict[str, int]


def summarize(records: Iterable[GameRecord]) -> list[ConditionSummary]:
    """One summary per condition, in order of first appearance. Games that ended in error are
    counted apart and left out of the success rate."""
    groups: dict[str, list[GameRecord]] = {}
    for record in records:
        groups.setdefault(record.spec.condition(), []).append(record)
    summaries = []
    for condition, group in groups.items():
        scored = [r for r in group if r.outcome != "error"]
        successes = sum(r.outcome == "success" for r in scored)
        low, high = wilson_interval(successes, len(scored))
        solved = [r.solved_turn for r in scored if r.solved_turn is not None]
        roles = list(group[0].spec.agents)
        per_position = {
            role: (sum(r.actions_per_position.get(role, 0.0) for r in scored) / len(scored)) if scored else 0.0
            for role in roles
        }
        kinds: dict[str, int] = {}
        for r in group:
            if r.error is not None:
                kinds[r.error.kind] = kinds.get(r.error.kind, 0) + 1
        summaries.append(
            ConditionSummary(
                condition=condition,
                fields=group[0].spec.condition_fields(),
                games=len(group),
                successes=successes,
                failures=len(scored) - successes,
                errors=len(group) - len(scored),
                success_rate=successes / len(scored) if scored else 0.0,
                ci_low=low,
                ci_high=high,
                mean_solved_turn=sum(solved) / len(solved) if solved else None,
                actions_per_position=per_position,
                format_errors=sum(sum(r.format_errors.values()) for r in group),
                invalid_actions=sum(sum(r.invalid_actions.values()) for r in group),
                error_kinds=kinds,
            )
        )
    return summaries
