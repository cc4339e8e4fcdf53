"""Seeds per condition to detect a difference in success rate, against published values of the
formulas (cited beside each) and against the normal approximation's power at the number found."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from engine.analysis.power import (
    compared_rates, exact_mcnemar_power, independent_discordance, paired_seeds, paired_seeds_normal, unpaired_seeds,
)

Z = NormalDist()


def test_unpaired_published_values():
    # Pooled normal approximation (Fleiss, Levin & Paik 2003, eq. 4.14; R's power.prop.test):
    # 50% against 60%, 80% power, two-sided 5%: n = 387.3 per group -> 388 (the unpooled formula
    # gives 384.2 -> 385, the arcsine one 387.2 -> 388).
    assert unpaired_seeds(0.5, 0.6) == 388
    assert unpaired_seeds(0.6, 0.5) == 388
    # R's documentation: power.prop.test(p1 = .50, p2 = .75, power = .90) => n = 76.7.
    assert unpaired_seeds(0.5, 0.75, power=0.9) == 77


def test_unpaired_by_hand():
    # 20% against 40%: pm = 0.3; (1.95996 * sqrt(0.42) + 0.84162 * sqrt(0.16 + 0.24))^2 / 0.04
    # = (1.27020 + 0.53229)^2 / 0.04 = 81.2 -> 82.
    assert unpaired_seeds(0.2, 0.4) == 82


def test_paired_published_values_of_the_normal_approximation():
    # Connor (1987); the calculator of powerandsamplesize.com (McNemar's Z-test, 2-sided) gives 23
    # for p10 = 0.05, p01 = 0.45 (discordant 0.5, difference 0.4), and 155 for discordant 0.45 with
    # a discordant odds ratio of 2 (p10 = 0.15, p01 = 0.30).
    assert paired_seeds_normal(0.3, 0.7, discordant=0.5) == 23
    assert paired_seeds_normal(0.3, 0.45, discordant=0.45) == 155


def test_paired_under_independence_is_an_upper_bound():
    # 50% against 60% independent: discordant 0.5 * 0.4 + 0.6 * 0.5 = 0.5;
    # (1.95996 * sqrt(0.5) + 0.84162 * sqrt(0.49))^2 / 0.01 = 390.1 -> 391.
    assert independent_discordance(0.5, 0.6) == pytest.approx(0.5)
    assert paired_seeds_normal(0.5, 0.6) == 391
    fewer = [paired_seeds_normal(0.5, 0.6, discordant=psi) for psi in (0.5, 0.4, 0.25, 0.1)]
    assert fewer == sorted(fewer, reverse=True) and fewer[2] == 194
    with pytest.raises(ValueError, match="between 0.1 and 0.9"):
        paired_seeds_normal(0.5, 0.6, discordant=0.05)  # fewer discordant seeds than the difference


@pytest.mark.parametrize("p1, p2", [(0.5, 0.6), (0.1, 0.3), (0.8, 0.95), (0.0, 0.1)])
def test_the_number_found_is_the_smallest_with_the_power(p1, p2):
    """The normal approximation's power (both tails) reaches 80% at n and not at n - 1."""
    za = Z.inv_cdf(0.975)

    def unpaired_power(n: int) -> float:
        pm = (p1 + p2) / 2
        se0, se1 = math.sqrt(2 * pm * (1 - pm) / n), math.sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / n)
        d = abs(p2 - p1)
        return Z.cdf((d - za * se0) / se1) + Z.cdf((-d - za * se0) / se1)

    n = unpaired_seeds(p1, p2)
    assert unpaired_power(n) >= 0.8 > unpaired_power(n - 1) - 1e-3  # the other tail adds almost nothing

    psi, d = independent_discordance(p1, p2), p2 - p1

    def paired_power(n: int) -> float:
        return Z.cdf((abs(d) * math.sqrt(n) - za * math.sqrt(psi)) / math.sqrt(psi - d * d)) if psi > d * d else 1.0

    m = paired_seeds_normal(p1, p2)
    assert paired_power(m) >= 0.8 > paired_power(m - 1)


def test_compared_rates():
    assert compared_rates(0.1) == (0.5, 0.6)  # the default base rate
    assert compared_rates(0.2, 0.3) == (0.3, pytest.approx(0.5))
    assert compared_rates(0.1, 0.95) == (pytest.approx(0.85), 0.95)  # down where up passes 100%
    for bad in [(0.0, 0.5), (1.0, 0.5), (0.6, 0.5), (0.1, 1.5)]:
        with pytest.raises(ValueError):
            compared_rates(*bad)
    with pytest.raises(ValueError, match="equal"):
        unpaired_seeds(0.4, 0.4)


def enumerated_power(n: int, p1: float, p2: float, discordant: float) -> float:
    """The exact test's power by enumeration, independently: every split of n seeds into won under
    the first only, the second only, or neither of those, with its multinomial probability, and the
    report's own test (``mcnemar_exact``) on each."""
    from engine.analysis.paired import mcnemar_exact

    first, second = (discordant - (p2 - p1)) / 2, (discordant + (p2 - p1)) / 2
    same = 1.0 - discordant
    total = 0.0
    for a in range(n + 1):
        for b in range(n - a + 1):
            if mcnemar_exact(a, b) <= 0.05:
                total += math.comb(n, a) * math.comb(n - a, b) * first**a * second**b * same ** (n - a - b)
    return total


@pytest.mark.parametrize("p1, p2, discordant", [(0.5, 0.8, None), (0.5, 0.7, None), (0.3, 0.7, 0.5), (0.4, 0.6, 0.3)])
def test_paired_seeds_give_the_power_by_the_exact_test_the_report_prints(p1, p2, discordant):
    """Connor's normal approximation falls short of 80% by the exact test; the number given reaches it."""
    psi = independent_discordance(p1, p2) if discordant is None else discordant
    n = paired_seeds(p1, p2, discordant)
    assert enumerated_power(n, p1, p2, psi) >= 0.8 > enumerated_power(n - 1, p1, p2, psi)
    assert exact_mcnemar_power(n, p1, p2, discordant) == pytest.approx(enumerated_power(n, p1, p2, psi), abs=1e-9)
    normal = paired_seeds_normal(p1, p2, discordant)
    assert enumerated_power(normal, p1, p2, psi) < 0.8 and n > normal
