"""``metaeval.calibration.ranksets._guard`` (the rank sets' pair variances, one row per bootstrap replicate) does
its rows in one pass; every value must stay bit-identical to ``moderated_variance`` called row by row (issue 34:
numbers that stay must stay identical)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.calibration.ranksets import _guard
from metaeval.calibration.scorelevel import moderated_variance


def _row_by_row(pv: np.ndarray, n: int) -> np.ndarray:
    nn = np.full(pv.shape[-1], float(n))
    return np.stack([moderated_variance(row, nn) for row in np.atleast_2d(pv)])


@pytest.mark.parametrize("n", [1, 2, 3, 8, 21, 301])
@pytest.mark.parametrize("seed", range(4))
def test_every_value_is_the_row_by_row_one_bit_for_bit(n, seed):
    rng = np.random.default_rng(seed)
    B, m = 257, int(rng.integers(1, 1200))
    pv = rng.gamma(0.7, 0.01, size=(B, m)) * rng.choice([0.0, 1.0, 1e-6], size=(B, m), p=[0.1, 0.85, 0.05])
    pv[rng.random(B) < 0.05, int(rng.integers(m))] = np.nan  # a replicate with a pair it cannot estimate
    got, want = _guard(pv, n), _row_by_row(pv, n)
    assert got.shape == want.shape
    assert np.array_equal(got.view(np.int64), want.view(np.int64))  # the same bits (NaN where NaN)


def test_one_row_and_all_constant_rows():
    one = np.array([[0.0, 0.0, 0.0]])
    assert np.array_equal(_guard(one, 5), _row_by_row(one, 5))  # all constant: the floor
    v = np.array([0.01, 0.02, 0.0])
    assert np.array_equal(_guard(v, 5), _row_by_row(v, 5))
