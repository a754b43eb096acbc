"""metaeval.analysis.resample, the one topic bootstrap: quantiles as numpy's, replicates as explicit resampling."""

import numpy as np
import pytest

from metaeval.analysis.resample import (bootstrap_run_means, percentile_ci, percentile_cis, ratio_replicates,
                                        run_mean_replicates, topic_weights)
from metaeval.random_streams import stream


@pytest.mark.parametrize("n_boot", [999, 1000])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_percentile_ci_is_numpys_linear_quantile(n_boot, alpha):
    """At B = 999 and 1000 the quantile positions alpha/2 (B - 1) are not integers, so a sorted-index quantile
    (``sorted(reps)[int(alpha / 2 * B)]``, off by one) differs from numpy's interpolated one."""
    reps = np.random.default_rng(n_boot).normal(0.4, 0.1, n_boot)
    want = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    assert percentile_ci(reps, alpha) == pytest.approx(tuple(want), rel=0, abs=1e-15)
    cols = np.column_stack([reps, reps[::-1] * 2])
    lo, hi = percentile_cis(cols, alpha)
    assert lo == pytest.approx([want[0], 2 * want[0]], abs=1e-15) and hi == pytest.approx([want[1], 2 * want[1]], abs=1e-15)


def test_percentile_ignores_nan_replicates_and_all_nan_is_nan():
    reps = np.array([0.1, np.nan, 0.3, 0.2, np.nan, 0.5])
    assert percentile_ci(reps) == pytest.approx(tuple(np.quantile([0.1, 0.3, 0.2, 0.5], [0.025, 0.975])))
    lo, hi = percentile_cis(np.column_stack([reps, np.full(6, np.nan)]))
    assert np.isnan(lo[1]) and np.isnan(hi[1]) and lo[0] == pytest.approx(np.quantile([0.1, 0.2, 0.3, 0.5], 0.025))


def test_bootstrap_run_means_equals_explicit_resampling_loop():
    rng = np.random.default_rng(3)
    v = rng.uniform(0, 1, (9, 4))
    v[2, 1] = v[5, 3] = np.nan  # runs missing a topic
    b = bootstrap_run_means(v, 300, seed=11, alpha=0.1)
    idx = stream(11, "analysis.topic_bootstrap").integers(0, 9, size=(300, 9))  # the draws an int seed makes
    reps = np.array([np.nanmean(v[i], axis=0) for i in idx])
    assert b.replicates == pytest.approx(reps, nan_ok=True)
    assert b.estimate == pytest.approx(np.nanmean(v, axis=0))
    assert b.se == pytest.approx(np.nanstd(reps, axis=0, ddof=1))
    assert b.ci_low == pytest.approx(np.nanquantile(reps, 0.05, axis=0))
    assert b.ci_high == pytest.approx(np.nanquantile(reps, 0.95, axis=0))
    assert ((0 <= b.ci_low) & (b.ci_high <= 1)).all()  # means of [0, 1] scores stay inside [0, 1]
    again = bootstrap_run_means(v, 300, seed=11, alpha=0.1)
    assert np.array_equal(again.ci_low, b.ci_low)
    assert not np.array_equal(bootstrap_run_means(v, 300, seed=12, alpha=0.1).ci_low, b.ci_low)


def test_ratio_replicates_is_a_cluster_mean_and_run_means_its_special_case():
    tot, cnt = np.array([3.0, 1.0, 0.0]), np.array([4.0, 1.0, 2.0])
    w = np.array([[1, 1, 1], [2, 0, 1], [0, 0, 3]], float)
    assert ratio_replicates(tot, cnt, w) == pytest.approx([4 / 7, 6 / 10, 0.0])
    assert np.isnan(ratio_replicates(tot, np.zeros(3), w)).all()
    v = np.array([[0.2, np.nan], [0.6, 0.4]])
    got = run_mean_replicates(v, np.array([[1.0, 1.0], [2.0, 0.0]]))
    assert np.allclose(got, [[0.4, 0.4], [0.2, np.nan]], equal_nan=True)


def test_unseeded_bootstrap_is_refused():
    with pytest.raises(ValueError):
        topic_weights(5, 10, None)



@pytest.mark.parametrize("shape", [(400,), (400, 45), (300, 3, 4)])
def test_percentile_cis_with_some_gappy_columns_matches_nanquantile_exactly(shape):
    """Columns without NaN take np.quantile, the others nanquantile: the same numbers, bit for bit, as nanquantile
    over every column (the speed path may not move a figure); an all-NaN column gives NaN."""
    import warnings

    rng = np.random.default_rng(7)
    reps = np.round(rng.normal(size=shape), 3)  # rounded: ties, as tau replicates have
    flat = reps.reshape(shape[0], -1)  # a view: edits below change reps
    flat[rng.random(flat.shape) < 0.05] = np.nan  # every column gappy...
    if flat.shape[1] > 2:
        flat[:, ::2] = np.round(rng.normal(size=flat[:, ::2].shape), 3)  # ...then every second one full again
        flat[:, 1] = np.nan  # and one column with no defined replicate
    for alpha in (0.05, 0.1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want_lo, want_hi = np.nanquantile(reps, [alpha / 2, 1 - alpha / 2], axis=0)
        lo, hi = percentile_cis(reps, alpha)
        assert np.shape(lo) == shape[1:]
        assert np.array_equal(lo, want_lo, equal_nan=True) and np.array_equal(hi, want_hi, equal_nan=True)
        if flat.shape[1] > 2:
            assert np.isnan(lo.reshape(-1)[1]) and not np.isnan(lo.reshape(-1)[0])
