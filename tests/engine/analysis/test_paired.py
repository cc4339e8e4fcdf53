"""McNemar's exact test beside the paired difference: known values, and the p-value of each row of
a paired comparison."""

from __future__ import annotations

import math

import pytest

from engine.analysis.paired import mcnemar_exact, paired_comparison
from tests.runners.test_report import crafted_games


@pytest.mark.parametrize(
    "b, c, p",
    [
        (0, 5, 0.0625),  # 2 * (1/2)^5
        (1, 9, 0.021484375),  # 2 * (1 + 10) / 2^10
        (9, 1, 0.021484375),  # symmetric
        (2, 10, 0.03857421875),  # 2 * (1 + 12 + 66) / 2^12
        (4, 4, 1.0),  # b = c
        (0, 0, 1.0),  # no discordant pair
        (0, 1, 1.0),
    ],
)
def test_mcnemar_exact_known_values(b, c, p):
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_mcnemar_exact_against_a_sum_of_binomial_probabilities():
    """Twice the smaller tail of Binomial(b + c, 1/2), in floating point, for a larger table."""
    b, c = 40, 65
    n = b + c
    tail = sum(math.comb(n, i) * 0.5**n for i in range(b + 1))
    assert mcnemar_exact(b, c) == pytest.approx(2 * tail, rel=1e-9)
    assert 0.01 < mcnemar_exact(b, c) < 0.05
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_each_paired_row_carries_its_mcnemar_p_value():
    comparison = paired_comparison(crafted_games(), "feedback", "own", "joint")
    for row in comparison.rows:
        assert row.p_value == mcnemar_exact(row.a_only, row.b_only)
    share = next(r for r in comparison.rows if r.pairs)
    assert (share.a_only, share.b_only, share.p_value) == (1, 1, 1.0)  # one discordant pair each way
