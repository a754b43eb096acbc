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


def test_all_finite_rows_take_the_one_array_path_and_leave_the_input_alone():
    rng = np.random.default_rng(11)
    pv = rng.gamma(0.7, 0.01, size=(300, 700))
    before = pv.copy()
    got = _guard(pv, 21)
    assert got is not pv and np.array_equal(pv, before)  # the input is read, never written
    assert np.array_equal(got.view(np.int64), _row_by_row(pv, 21).view(np.int64))
    strided = np.asfortranarray(pv)  # not C-contiguous: copied first, the same bits
    assert np.array_equal(_guard(strided, 21).view(np.int64), got.view(np.int64))


@pytest.mark.parametrize("studentize", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_pairwise_intervals_studentized_deviations_are_the_plain_formula_bit_for_bit(seed, studentize):
    """``abs_t`` is computed step by step in one array; it must equal ``|d* - d| / sqrt(v / n)`` as written."""
    from metaeval.analysis.resample import topic_weights
    from metaeval.calibration.ranksets import (RANKSET_STREAM, TrackSample, _estimates, _lambdas,
                                               pairwise_intervals)

    rng = np.random.default_rng(seed)
    n, N, R = 12, 30, 9
    H = rng.random((n, R))
    J = np.clip(H + rng.normal(0, 0.1, (n, R)), 0, 1)
    s = TrackSample(H, J, np.vstack([J, rng.random((N - n, R))]), [f"r{k}" for k in range(R)])
    pw = pairwise_intervals(s, n_boot=200, seed=seed, studentize=studentize)
    one = np.ones((1, n))
    theta, pv = _estimates(s, one, _lambdas(s, one))
    pv = _guard(pv, n)[0]
    w = topic_weights(n, 200, seed, RANKSET_STREAM)
    theta_b, pv_b = _estimates(s, w, _lambdas(s, w))
    pv_b = _guard(pv_b, n)
    i, j = np.triu_indices(R, k=1)
    d = theta[0, i] - theta[0, j]
    want = np.abs((theta_b[:, i] - theta_b[:, j]) - d) / np.sqrt((pv_b if studentize else pv[None, :]) / n)
    assert np.array_equal(pw.abs_t.view(np.int64), want.view(np.int64))
    assert pw.critical == float(np.quantile(want.max(axis=1), 0.95))
