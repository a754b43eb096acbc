"""Topic bootstrap weights, CI methods, paired bootstrap test and run-pair flips."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval.analysis.bootstrap import (CI_METHODS, bca_ci, centered_ci, paired_bootstrap, percentile_ci,
                                         run_flips, topic_weights)
from metaeval.analysis.cells import Aligned
from metaeval.errors import ConfigError


def _aligned(x, *ys):
    t, r = x.shape
    return Aligned("m", [f"q{i}" for i in range(t)], [f"r{j}" for j in range(r)], x, tuple(ys), {})


def test_topic_weights_are_seeded_multinomial_counts():
    w = topic_weights(7, 50, seed=3)
    assert w.shape == (50, 7) and (w.sum(axis=1) == 7).all()
    assert np.array_equal(w, topic_weights(7, 50, seed=3))
    assert not np.array_equal(w, topic_weights(7, 50, seed=4))
    # an int seed draws from the named analysis stream; a Generator is used as it is
    from metaeval.random_streams import stream

    assert np.array_equal(w, topic_weights(7, 50, seed=stream(3, "analysis.topic_bootstrap")))
    assert not np.array_equal(w, topic_weights(7, 50, seed=3, purpose="calibration.raw"))
    idx = stream(3, "analysis.topic_bootstrap").integers(0, 7, size=(50, 7))
    assert np.array_equal(w, np.stack([np.bincount(r, minlength=7) for r in idx]))


def test_ci_methods():
    rng = np.random.default_rng(0)
    reps = rng.normal(0.5, 0.1, 4001)
    lo, hi = percentile_ci(reps)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(reps, [0.025, 0.975])))
    # symmetric replicates centred on the estimate, no acceleration: BCa = percentile (up to quantile noise)
    assert bca_ci(reps, 0.05, float(np.median(reps))) == pytest.approx((lo, hi), abs=0.01)
    # replicates biased down by 0.2: percentile misses the estimate, centred keeps it, BCa moves up
    theta = 0.7
    assert percentile_ci(reps)[1] < theta
    c_lo, c_hi = centered_ci(reps, 0.05, theta)
    assert c_lo < theta < c_hi and c_hi - c_lo == pytest.approx(hi - lo)
    assert bca_ci(reps, 0.05, theta)[0] > lo
    assert set(CI_METHODS) == {"percentile", "centered", "bca"}
    assert np.isnan(percentile_ci(np.array([np.nan]))[0])


def test_paired_bootstrap_identical_candidates_and_a_clear_difference():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(15, 10)) + np.linspace(0, 3, 10)
    good = x + rng.normal(scale=0.1, size=x.shape)
    bad = x + rng.normal(scale=3.0, size=x.shape)
    same = paired_bootstrap(_aligned(x, good, good), n_boot=200, seed=0)
    assert (same["diff"] == 0).all() and (same["p_value"] == 1.0).all()
    res = paired_bootstrap(_aligned(x, good, bad), n_boot=500, seed=0)
    assert (res["diff"] > 0).all()
    assert (res["p_value"] < 0.05).all() and (res["ci_low"] > 0).all()
    assert set(res["level"]) == {"run", "topic_avg", "pooled"}


def test_run_flips_against_scipy_ttest():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(12, 6)) + np.array([0, 0.1, 0.5, 1.0, 1.2, 2.0])
    y = x[:, [1, 0, 2, 3, 5, 4]]  # swaps runs 0<->1 and 4<->5 in the candidate
    x[3, 2] = np.nan  # a missing cell
    summary, table = run_flips(_aligned(x, y))
    assert summary["n_pairs"] == 15
    xm = np.where(np.isnan(x) | np.isnan(y), np.nan, x)
    ym = np.where(np.isnan(x) | np.isnan(y), np.nan, y)
    for row in table.itertuples():
        i, j = int(row.run_a[1:]), int(row.run_b[1:])
        ok = ~np.isnan(xm[:, i]) & ~np.isnan(xm[:, j])
        p = stats.ttest_rel(xm[ok, i], xm[ok, j]).pvalue
        assert row.p_ref == pytest.approx(p, rel=1e-9)
        ref = np.nanmean(xm[:, i]) - np.nanmean(xm[:, j])
        cand = np.nanmean(ym[:, i]) - np.nanmean(ym[:, j])
        assert row.flip == (ref * cand < 0)
    assert summary["n_flips"] == int(table["flip"].sum()) >= 2
    assert summary["n_flips_ref_significant"] == int((table["flip"] & (table["p_ref"] < 0.05)).sum())
    perm, _ = run_flips(_aligned(x, y), test="permutation", seed=0)
    assert perm["n_flips"] == summary["n_flips"]
    with pytest.raises(ConfigError, match="unknown paired test"):
        run_flips(_aligned(x, y), test="wilcoxon")


def test_zero_variance_pair_is_significant_only_with_a_difference():
    x = np.array([[1.0, 2.0, 1.0], [1.0, 2.0, 1.0], [1.0, 2.0, 1.0]])
    summary, table = run_flips(_aligned(x, x.copy()))
    p = dict(zip(zip(table.run_a, table.run_b), table.p_ref))
    assert p[("r0", "r1")] == 0.0 and p[("r0", "r2")] == 1.0
    assert summary["n_flips"] == 0


def test_paired_p_value_inverts_the_percentile_interval():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(20, 8)) + np.linspace(0, 2, 8)
    a = x + rng.normal(scale=0.8, size=x.shape)
    b = x + rng.normal(scale=1.0, size=x.shape)
    res = paired_bootstrap(_aligned(x, a, b), n_boot=400, seed=1)
    for r in res.itertuples():
        assert (r.p_value < 0.05) == (r.ci_low > 0 or r.ci_high < 0)


def test_centered_interval_stays_inside_tau_range():
    """Estimate 1, replicates mostly 0.99 with a few 0: the recentred replicates are 1.0198 above the 2.5%
    quantile, so an interval clipped only at its upper end would read [1.02, 1.00]."""
    from metaeval.analysis.resample import centered_ci, percentile_ci

    reps = np.array([0.0] * 4 + [0.99] * 196)
    shifted = percentile_ci(reps - (reps.mean() - 1.0))
    assert shifted[0] > 1.0  # the unclipped lower limit
    assert centered_ci(reps, 0.05, 1.0) == (1.0, 1.0)
    assert centered_ci(-reps, 0.05, -1.0) == (-1.0, -1.0)


def test_paired_bootstrap_p_is_two_sided():
    """Swapping the candidates flips the sign of every difference, not the p-value; a clearly *worse* candidate a
    is as significant as a clearly better one.  A one-sided p (``(1 + #{d* <= 0}) / (B + 1)``) fails both."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(15, 10)) + np.linspace(0, 3, 10)
    good = x + rng.normal(scale=0.1, size=x.shape)
    bad = x + rng.normal(scale=3.0, size=x.shape)
    ab = paired_bootstrap(_aligned(x, good, bad), n_boot=500, seed=0)
    ba = paired_bootstrap(_aligned(x, bad, good), n_boot=500, seed=0)
    assert (ba["diff"] < 0).all() and (ba["p_value"] < 0.05).all() and (ba["ci_high"] < 0).all()
    assert list(ab["p_value"]) == pytest.approx(list(ba["p_value"]))
    mixed = x + rng.normal(scale=1.0, size=x.shape)
    for r in paired_bootstrap(_aligned(x, mixed, x + rng.normal(scale=1.0, size=x.shape)), n_boot=500, seed=0).itertuples():
        # 2 min(one-sided tails), capped at 1: the two tails of the same replicates
        assert r.p_value <= 1.0 and (r.p_value < 0.05) == (r.ci_low > 0 or r.ci_high < 0)
