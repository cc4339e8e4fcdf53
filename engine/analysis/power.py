"""How many seeds per condition a sweep needs to detect a difference in success rate: the sample
size of a comparison of two conditions, for the forecast (``--dry-run --detect``).

Two designs, each for a two-sided test at level ``alpha`` with the given power:

- Unpaired: each condition plays its own games; the two-proportion z test with the pooled normal
  approximation, without continuity correction (Fleiss, Levin & Paik 2003, eq. 4.14; what R's
  ``power.prop.test`` solves). The arcsine (Cohen's h) formula gives nearly the same numbers; the
  unpooled one a few fewer (385 instead of 388 for 50% against 60%).
- Paired by seed: both conditions play the same seeds, compared by McNemar's test (the report's
  paired table); Connor's formula (Connor 1987, Biometrics 43:207-211). It needs the share of seeds
  whose two games end differently (``discordant``). Unless stated it is taken as if a seed's two
  outcomes were independent, p1 (1 - p2) + p2 (1 - p1): the most there is when a seed that is hard
  under one condition is no easier under the other, so the number is an upper bound for the usual
  case (seeds shared by conditions agree more often than chance, and fewer are needed).
"""

from __future__ import annotations

import math
from statistics import NormalDist

ALPHA = 0.05
POWER = 0.8
BASE_RATE = 0.5  # the default lower success rate: rates near 50% need (nearly) the most seeds


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def _check_rate(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a success rate is between 0 and 1, got {p}")


def _check_test(p1: float, p2: float, alpha: float, power: float) -> None:
    """ValueError unless the two rates differ and each of them, alpha and power is a share."""
    for p in (p1, p2):
        _check_rate(p)
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError(f"alpha and power are between 0 and 1, got {alpha} and {power}")
    if p1 == p2:
        raise ValueError("the two rates are equal: no number of games detects no difference")


def compared_rates(difference: float, base: float = BASE_RATE) -> tuple[float, float]:
    """The two success rates a wanted difference compares: ``base`` and ``base + difference``, or
    ``base - difference`` and ``base`` where the sum would pass 100%."""
    _check_rate(base)
    if not 0.0 < difference < 1.0:
        raise ValueError(f"the difference is a share between 0 and 1 (0.10 = 10 points), got {difference}")
    if base + difference <= 1.0:
        return (base, base + difference)
    if base - difference >= 0.0:
        return (base - difference, base)
    raise ValueError(f"no two success rates {difference:g} apart have {base:g} as one of them")


def unpaired_seeds(p1: float, p2: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Games per condition, each condition with its own games, for a two-sided two-proportion z
    test of p1 against p2:  n = (z_a sqrt(2 pm (1 - pm)) + z_b sqrt(p1 q1 + p2 q2))^2 / (p1 - p2)^2,
    pm = (p1 + p2) / 2, z_a = z(1 - alpha/2), z_b = z(power); rounded up."""
    _check_test(p1, p2, alpha, power)
    pm = (p1 + p2) / 2
    root = _z(1 - alpha / 2) * math.sqrt(2 * pm * (1 - pm)) + _z(power) * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return math.ceil(root**2 / (p1 - p2) ** 2 - 1e-9)


def independent_discordance(p1: float, p2: float) -> float:
    """The share of seeds whose two games end differently if a seed's outcomes were independent."""
    return p1 * (1 - p2) + p2 * (1 - p1)


def paired_seeds(
    p1: float, p2: float, discordant: float | None = None, alpha: float = ALPHA, power: float = POWER,
) -> int:
    """Seeds played under both conditions, for McNemar's two-sided test of p1 against p2 (Connor
    1987):  n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2, with psi the share of discordant
    seeds (by default ``independent_discordance``) and d = p2 - p1; rounded up. ``discordant`` must
    be at least |d| (the seeds won under one condition only account for the difference) and at most
    what the rates allow."""
    _check_test(p1, p2, alpha, power)
    d = p2 - p1
    psi = independent_discordance(p1, p2) if discordant is None else discordant
    most = min(p1 + p2, 2 - p1 - p2)
    if not abs(d) - 1e-12 <= psi <= most + 1e-12:
        raise ValueError(f"for rates {p1:g} and {p2:g} the discordant share is between {abs(d):g} and {most:g}, got {psi:g}")
    psi = max(psi, abs(d))
    root = _z(1 - alpha / 2) * math.sqrt(psi) + _z(power) * math.sqrt(max(0.0, psi - d * d))
    return math.ceil(root**2 / (d * d) - 1e-9)


__all__ = [
    "ALPHA", "BASE_RATE", "POWER", "compared_rates", "independent_discordance", "paired_seeds", "unpaired_seeds",
]
