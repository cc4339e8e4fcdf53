"""How many seeds per condition a sweep needs to detect a difference in success rate: the sample
size of a comparison of two conditions, for the forecast (``--dry-run --detect``).

Two designs, each for a two-sided test at level ``alpha`` with the given power:

- Unpaired: each condition plays its own games; the two-proportion z test with the pooled normal
  approximation, without continuity correction (Fleiss, Levin & Paik 2003, eq. 4.14; what R's
  ``power.prop.test`` solves). The arcsine (Cohen's h) formula gives nearly the same numbers; the
  unpooled one a few fewer (385 instead of 388 for 50% against 60%).
- Paired by seed: both conditions play the same seeds, compared by McNemar's exact test (the one
  the report's paired table prints, ``engine.analysis.paired.mcnemar_exact``): the fewest seeds at
  which that test has the power, computed exactly (``exact_mcnemar_power``: the discordant seeds
  are binomial among the seeds, the seeds won under the better condition binomial among those),
  searched from just below Connor's normal approximation (Connor 1987, Biometrics 43:207-211;
  ``paired_seeds_normal``), which the exact test, being conservative, needs a few more seeds than
  (391 -> 408 for 50% against 60%). It needs the share of seeds whose two games end differently
  (``discordant``). Unless stated it is taken as if a seed's two outcomes were independent,
  p1 (1 - p2) + p2 (1 - p1): the most there is when a seed that is hard under one condition is no
  easier under the other, so the number is an upper bound for the usual case (seeds shared by
  conditions agree more often than chance, and fewer are needed). The exact power is not monotone
  in the number of seeds (it saws up and down by a point or two): the number given is the first at
  which it reaches the power.
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


def _discordance(p1: float, p2: float, discordant: float | None) -> float:
    """The share of discordant seeds, checked: at least |p2 - p1| (the seeds won under one condition
    only account for the difference) and at most what the rates allow."""
    d = p2 - p1
    psi = independent_discordance(p1, p2) if discordant is None else discordant
    most = min(p1 + p2, 2 - p1 - p2)
    if not abs(d) - 1e-12 <= psi <= most + 1e-12:
        raise ValueError(f"for rates {p1:g} and {p2:g} the discordant share is between {abs(d):g} and {most:g}, got {psi:g}")
    return max(psi, abs(d))


def paired_seeds_normal(
    p1: float, p2: float, discordant: float | None = None, alpha: float = ALPHA, power: float = POWER,
) -> int:
    """Seeds played under both conditions, for McNemar's two-sided test of p1 against p2 by the
    normal approximation (Connor 1987):  n = (z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2, with psi
    the share of discordant seeds (by default ``independent_discordance``) and d = p2 - p1; rounded up."""
    _check_test(p1, p2, alpha, power)
    d = p2 - p1
    psi = _discordance(p1, p2, discordant)
    root = _z(1 - alpha / 2) * math.sqrt(psi) + _z(power) * math.sqrt(max(0.0, psi - d * d))
    return math.ceil(root**2 / (d * d) - 1e-9)


def _log_pmf(n: int, k: int, p: float) -> float:
    """log P(Binomial(n, p) = k); -inf where it is 0."""
    if p <= 0.0 or p >= 1.0:
        return 0.0 if k == (0 if p <= 0.0 else n) else -math.inf
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)


_SPREAD = 12  # standard deviations beyond which a binomial's terms are left out (each below e^-72)


def _window(n: int, p: float) -> tuple[int, int]:
    """The counts of Binomial(n, p) that carry its probability: within ``_SPREAD`` deviations of the mean."""
    mean, sd = n * p, math.sqrt(n * p * (1 - p))
    return max(0, math.floor(mean - _SPREAD * sd - 1)), min(n, math.ceil(mean + _SPREAD * sd + 1))


def _cdf(n: int, c: int, p: float) -> float:
    """P(Binomial(n, p) <= c), summed in logs over the counts that carry probability."""
    if c < 0:
        return 0.0
    if c >= n:
        return 1.0
    low, high = _window(n, p)
    return min(1.0, sum(math.exp(_log_pmf(n, i, p)) for i in range(low, min(c, high) + 1)))


class _ExactMcNemar:
    """The exact test's rejections, for one level: for k discordant seeds, the largest count c of
    seeds won under one condition alone at which ``mcnemar_exact`` rejects (2 P(Bin(k, 1/2) <= c)
    <= alpha; -1 where none), found once per k."""

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self._bounds: list[int] = [-1]  # k = 0: no discordant seed, p = 1
        self._rejects: dict[tuple[int, float], float] = {}

    def bound(self, k: int) -> int:
        while len(self._bounds) <= k:
            m = len(self._bounds)
            c = self._bounds[-1]  # the bound never falls as k grows
            while 2 * _cdf(m, c + 1, 0.5) <= self.alpha * (1 + 1e-12):
                c += 1
            self._bounds.append(c)
        return self._bounds[k]

    def rejects(self, k: int, q: float) -> float:
        """P(the test rejects | k discordant seeds), each won under the second condition with q."""
        found = self._rejects.get((k, q))
        if found is None:
            c = self.bound(k)
            found = 0.0 if c < 0 else min(1.0, _cdf(k, c, q) + (1.0 - _cdf(k, k - c - 1, q)))
            self._rejects[k, q] = found
        return found


def exact_mcnemar_power(
    n: int, p1: float, p2: float, discordant: float | None = None, alpha: float = ALPHA,
    test: _ExactMcNemar | None = None,
) -> float:
    """The power of McNemar's exact two-sided test at level ``alpha`` with ``n`` seeds played under
    both conditions: the discordant seeds are Binomial(n, psi), and of those, the seeds won under
    the second condition alone Binomial(k, (psi + d) / (2 psi)), d = p2 - p1."""
    psi = _discordance(p1, p2, discordant)
    q = (psi + (p2 - p1)) / (2 * psi)
    test = test or _ExactMcNemar(alpha)
    low, high = _window(n, psi)
    return sum(math.exp(_log_pmf(n, k, psi)) * test.rejects(k, q) for k in range(low, high + 1))


def paired_seeds(
    p1: float, p2: float, discordant: float | None = None, alpha: float = ALPHA, power: float = POWER,
) -> int:
    """Seeds played under both conditions for McNemar's exact two-sided test of p1 against p2 (the
    report's) to have ``power``: the first number, from just below the normal approximation's
    (``paired_seeds_normal``), at which ``exact_mcnemar_power`` reaches it. ``discordant``: the share
    of seeds whose two games end differently (by default ``independent_discordance``), at least |d|
    and at most what the rates allow."""
    start = paired_seeds_normal(p1, p2, discordant, alpha, power)
    test = _ExactMcNemar(alpha)
    n = max(1, math.floor(0.9 * start))
    while exact_mcnemar_power(n, p1, p2, discordant, alpha, test) < power:
        n += 1
    return n


__all__ = [
    "ALPHA", "BASE_RATE", "POWER", "compared_rates", "exact_mcnemar_power", "independent_discordance", "paired_seeds",
    "paired_seeds_normal", "unpaired_seeds",
]
