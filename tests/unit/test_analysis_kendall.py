"""Kendall tau variants: tau-b against scipy, tau-a and tau_AP against hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval.analysis.kendall import TAU_VARIANTS, get_variant, kendall, tau_a, tau_ap, tau_ap_sym, tau_b
from metaeval.errors import ConfigError


def _yilmaz_loop(x, y):
    """Literal Yilmaz et al. (2008) formula for rankings without ties: positions from y, truth from x."""
    order = np.argsort(-np.asarray(y), kind="stable")
    n = len(order)
    total = 0.0
    for pos in range(1, n):
        i = order[pos]
        c = sum(1 for j in order[:pos] if x[j] > x[i])
        total += c / pos
    return 2.0 / (n - 1) * total - 1.0


def test_tau_b_equals_scipy_with_ties_and_batches():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(20, 15)).astype(float)
    y = x + rng.integers(-2, 3, size=(20, 15))
    got = TAU_VARIANTS["b"].batch(x, y)
    want = [stats.kendalltau(a, b).statistic for a, b in zip(x, y)]
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_tau_b_skips_missing_pairs_and_constant_is_nan():
    x = np.array([1.0, 2.0, np.nan, 4.0, 5.0])
    y = np.array([2.0, 1.0, 3.0, 4.0, np.nan])
    assert tau_b(x, y) == pytest.approx(stats.kendalltau([1, 2, 4], [2, 1, 4]).statistic)
    assert np.isnan(tau_b([1, 2, 3], [5, 5, 5]))


def test_tau_a_hand_cases():
    assert tau_a([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    # one pair tied in x: S = 2 of n0 = 3 pairs; tau-b = 2 / sqrt(2 * 3)
    assert tau_a([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / 3)
    assert tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / np.sqrt(6))


def test_tau_ap_hand_cases():
    ref = [4, 3, 2, 1]
    # swap at the bottom: p = 1, 1, 2/3 -> 2/3 * (8/3) - 1 = 7/9 (tau would be 2/3)
    assert tau_ap(ref, [4, 3, 1, 2]) == pytest.approx(7 / 9)
    # swap at the top is penalised more: p = 0, 1, 1 -> 2/3 * 2 - 1 = 1/3
    assert tau_ap(ref, [3, 4, 2, 1]) == pytest.approx(1 / 3)
    assert tau_b(ref, [3, 4, 2, 1]) == pytest.approx(tau_b(ref, [4, 3, 1, 2]))
    assert tau_ap(ref, ref) == pytest.approx(1.0)
    assert tau_ap(ref, ref[::-1]) == pytest.approx(-1.0)


def test_tau_ap_tie_policy():
    # candidate tie at the top: neither tied item has anything strictly above it -> only C counts, p = 1
    assert tau_ap([3, 2, 1], [2, 2, 1]) == pytest.approx(1.0)
    # reference tie: B's only item above (A) is tied with it in the reference -> 1/2; C: p = 1 -> mean(0, 1)
    assert tau_ap([2, 2, 1], [3, 2, 1]) == pytest.approx(0.5)
    assert np.isnan(tau_ap([1, 2, 3], [7, 7, 7]))


def test_tau_ap_matches_literal_formula_and_symmetric_mean():
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.permutation(12).astype(float)
        y = rng.permutation(12).astype(float)
        assert tau_ap(x, y) == pytest.approx(_yilmaz_loop(x, y), abs=1e-12)
        assert tau_ap_sym(x, y) == pytest.approx(0.5 * (_yilmaz_loop(x, y) + _yilmaz_loop(y, x)), abs=1e-12)


def test_variant_registry_and_errors():
    assert set(TAU_VARIANTS) == {"b", "a", "ap", "ap_sym", "ap_b"}
    assert get_variant("tau_b").name == "b"
    assert kendall([1, 2, 3], [1, 2, 3], "AP") == pytest.approx(1.0)
    with pytest.raises(ConfigError, match="unknown tau variant"):
        get_variant("c")
    with pytest.raises(ValueError, match="shapes differ"):
        tau_b([1, 2], [1, 2, 3])


def test_chunked_batches_equal_unchunked(monkeypatch):
    import metaeval.analysis.kendall as k

    rng = np.random.default_rng(11)
    x = rng.integers(0, 5, size=(3, 40, 9)).astype(float)
    y = x + rng.integers(-2, 3, size=x.shape)
    x[0, 0, 0] = np.nan
    full = {v: TAU_VARIANTS[v].batch(x, y) for v in TAU_VARIANTS}
    monkeypatch.setattr(k, "_CHUNK_ELEMENTS", 81 * 7)  # 7 rows per chunk
    for v in TAU_VARIANTS:
        got = TAU_VARIANTS[v].batch(x, y)
        assert got.shape == (3, 40)
        np.testing.assert_allclose(got, full[v], atol=1e-12)
