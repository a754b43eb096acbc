"""Run-pair tests: exact sign-flip p-values by hand, Monte Carlo resolution below alpha/m, Holm as statsmodels,
and Holm-significant flips reachable on NIST vs a Figure 6 judge."""

import itertools

import numpy as np
import pytest

from metaeval.analysis.cells import Aligned, align, to_long
from metaeval.analysis.runpairs import holm, paired_t, run_flips, sign_flip


def _brute_force_p(d):
    """Two-sided sign-flip p over all 2^n sign vectors, written out."""
    d = np.asarray(d, float)
    obs = abs(d.sum())
    hits = sum(abs(np.dot(s, d)) >= obs - 1e-12 for s in itertools.product([-1, 1], repeat=len(d)))
    return hits / 2 ** len(d)


def test_exact_sign_flip_equals_enumeration_on_hand_cases():
    # 3 topics, all positive: only the observed signs and their negation reach |S| = 6 -> p = 2/8
    p, min_p, info = sign_flip(np.array([[1.0], [2.0], [3.0]]))
    assert info["exact"] and p[0] == pytest.approx(0.25) and min_p[0] == pytest.approx(0.25)
    cases = [[1, -2, 3, 0.5], [0.2, 0.2, 0.2, 0.2, 0.2], [1, -1, 1, -1], [3, 0, 0, -1, 2, 2.5]]
    for d in cases:
        got, _, _ = sign_flip(np.array(d, float)[:, None])
        assert got[0] == pytest.approx(_brute_force_p(d)), d


def test_exact_handles_missing_and_zero_columns():
    d = np.array([[1.0, 0.0, np.nan], [2.0, 0.0, 1.0], [np.nan, 0.0, 1.0]])
    p, _, _ = sign_flip(d)
    assert p[0] == pytest.approx(_brute_force_p([1, 2]))
    assert p[1] == 1.0  # no difference at all
    assert p[2] == pytest.approx(_brute_force_p([1, 1]))


def test_monte_carlo_resolution_reaches_holm_threshold():
    rng = np.random.default_rng(0)
    t, m = 21, 300
    d = rng.normal(0, 1, (t, m))
    d[:, :5] += 3.0  # five clearly separated pairs
    p, min_p, info = sign_flip(d, seed=1, n_tests=m, alpha=0.05)
    assert not info["exact"]
    assert min_p[0] < 0.05 / m  # resolution below the first Holm threshold
    assert (p[:5] < 0.05 / m).all()  # the strong pairs get there
    assert (p > 0).all() and (p <= 1).all()
    # pairs with large p stop early but their p agrees with the exact enumeration within Monte Carlo error
    small = rng.normal(0, 1, (12, 1))
    exact = _brute_force_p(small[:, 0])
    big = np.vstack([small, np.zeros((10, 1))])  # 22 topics -> Monte Carlo, same distribution (zeros add nothing)
    mc, _, info = sign_flip(big, seed=2, first_batch=20000, max_draws=20000, exact_budget=0)
    assert mc[0] == pytest.approx(exact, abs=0.02) and info["kind"][0] == "monte_carlo"


def test_paired_t_equals_scipy():
    from scipy import stats

    rng = np.random.default_rng(3)
    a, b = rng.normal(0.5, 0.2, (15, 4)), rng.normal(0.45, 0.2, (15, 4))
    p, _ = paired_t(a - b)
    assert p == pytest.approx(stats.ttest_rel(a, b).pvalue)


def test_holm_equals_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(4)
    for _ in range(20):
        p = np.concatenate([rng.uniform(0, 0.002, 5), rng.uniform(0, 1, 40)])
        p[rng.integers(0, 45, 3)] = np.nan
        ok = ~np.isnan(p)
        want = np.zeros(len(p), bool)
        want[ok] = multipletests(p[ok], alpha=0.05, method="holm")[0]
        assert (holm(p, 0.05) == want).all()


def test_holm_unreachable_is_reported():
    # 4 topics: exact sign-flip cannot go below 2^-3 = 0.125 > alpha/m
    x = np.array([[0.9, 0.5, 0.1], [0.8, 0.4, 0.2], [0.7, 0.6, 0.1], [0.95, 0.3, 0.0]])
    al = Aligned("m", ["1", "2", "3", "4"], ["a", "b", "c"], x, (x[:, ::-1].copy(),))
    summary, table = run_flips(al, test="permutation")
    assert summary["holm_reachable"] is False and "cannot be reached" in summary["holm_note"]
    assert summary["n_ref_significant_holm"] == 0 and summary["min_attainable_p"] == pytest.approx(0.125)
    assert summary["n_flips"] == 3 and table["flip"].all()


def test_nist_vs_figure6_judge_holm_significant_counts_are_reachable(nist_labels):
    from metaeval.simulation import simulate_judge

    judge = simulate_judge(nist_labels, seed=0)
    al = align(to_long(nist_labels), [to_long(judge)], "v_strict")
    t_sum, _ = run_flips(al, test="t")
    p_sum, table = run_flips(al, test="permutation", seed=0)
    for s in (t_sum, p_sum):
        assert s["n_pairs"] == 990 and s["holm_reachable"] and s["holm_note"] is None
        assert s["n_ref_significant_holm"] > 0
    assert p_sum["min_attainable_p"] < 0.05 / 990
    # the permutation test's Holm count is of the same size as the t test's (120 on this file)
    assert 0.5 * t_sum["n_ref_significant_holm"] <= p_sum["n_ref_significant_holm"] <= 1.5 * t_sum["n_ref_significant_holm"]
    assert table["ref_significant_holm"].sum() == p_sum["n_ref_significant_holm"]


def test_hoeffding_shortcut_is_a_valid_upper_bound_and_skips_draws():
    rng = np.random.default_rng(9)
    d = rng.normal(1.0, 0.5, (200, 3))  # 200 topics, every difference clearly positive
    d[:, 2] = rng.normal(0, 1, 200)  # one pair without a difference
    p, _, info = sign_flip(d, seed=0, n_tests=3)
    assert info["n_hoeffding"] == 2 and list(info["kind"]) == ["hoeffding_bound", "hoeffding_bound", "monte_carlo"]
    bound = 2 * np.exp(-d[:, :2].sum(axis=0) ** 2 / (2 * (d[:, :2] ** 2).sum(axis=0)))
    assert p[:2] == pytest.approx(bound) and (p[:2] < 1e-6).all()
    assert p[2] > 0.01
    # the bound holds exactly on a small case (it is never below the exact p)
    small = np.array([1.0, 2.0, 1.5, 0.5, 2.5, 1.0, 1.2, 0.8])
    exact = _brute_force_p(small)
    assert 2 * np.exp(-small.sum() ** 2 / (2 * (small ** 2).sum())) >= exact


#: 18 topic differences whose exact two-sided sign-flip p is 0.0481 (2^17 sign vectors enumerated): just below 0.05
NEAR_ALPHA = [0.26, 0.72, 1.17, 0.92, 0.75, 0.3, 1.18, 0.68, -0.0, 0.35, -0.72, -0.46, -1.38, -0.18, 1.84, -0.06,
              1.29, 0.5]


def test_monte_carlo_near_alpha_draws_until_the_decision_is_stable():
    d = np.array(NEAR_ALPHA)[:, None]
    exact, _, info = sign_flip(d, exact_max_topics=18)
    assert info["exact"] and exact[0] == pytest.approx(0.048126, abs=1e-6)
    for seed in range(4):  # forced Monte Carlo: same decision at alpha as the exact p, every seed
        p, _, info = sign_flip(d, seed=seed, n_tests=1, alpha=0.05, exact_max_topics=0, exact_budget=0)
        assert info["kind"][0] == "monte_carlo" and info["undecided"] == 0
        assert p[0] < 0.05 and p[0] == pytest.approx(exact[0], abs=0.0015)
        assert info["draws_max"] > 20_000  # far beyond 20 exceedances (~400 draws), where the former rule stopped


def test_sign_flip_seed_is_a_named_stream():
    from metaeval.random_streams import stream

    d = np.random.default_rng(1).normal(0.3, 1, (25, 4))
    a = sign_flip(d, seed=3)[0]
    assert np.array_equal(a, sign_flip(d, seed=stream(3, "analysis.sign_flip"))[0])
    assert not np.array_equal(a, sign_flip(d, seed=4)[0])


def test_exact_whenever_enumeration_fits_the_budget_and_blocks_add_up(monkeypatch):
    import metaeval.analysis.runpairs as rp

    d = np.array(NEAR_ALPHA)[:, None]  # 18 topics, one pair: 2^17 sign vectors fit the default budget
    p, min_p, info = sign_flip(d)
    assert info["exact"] and info["kind"][0] == "exact" and p[0] == pytest.approx(0.048126220703125, abs=1e-15)
    wide = np.tile(d, (1, 200))  # 200 pairs x 2^17 > 2^24: Monte Carlo
    assert not sign_flip(wide, seed=0)[2]["exact"]
    monkeypatch.setattr(rp, "_CHUNK", 7)  # tiny sign-vector blocks: the enumeration is split, the count is not
    for case in ([1, -2, 3, 0.5], [3, 0, 0, -1, 2, 2.5], [0.2, -0.4, 1.1, 0.9, -0.3, 0.8, 1.5]):
        got, _, _ = sign_flip(np.array(case, float)[:, None])
        assert got[0] == pytest.approx(_brute_force_p(case))
