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


# pyircor's published test vectors (Urbano & Marrero's reference implementation, tests/test_pyircor.py)
_IRCOR = [
    ([0.897, 0.372, 0.908, 0.898, 0.661, 0.062, 0.177, 0.384, 0.498, 0.992],
     [0.82, 0.406, 0.817, 0.953, 0.673, 0.073, 0.364, 0.547, 0.589, 0.988],
     [0.9, 0.4, 0.9, 0.9, 0.7, 0.1, 0.2, 0.4, 0.5, 1], [0.8, 0.4, 0.8, 1, 0.7, 0.1, 0.4, 0.5, 0.6, 1],
     0.8519, 0.8333, 0.7321),
    ([0.266, 0.573, 0.202, 0.945, 0.629, 0.206, 0.687, 0.77, 0.718, 0.38],
     [0.263, 0.843, 0.728, 0.928, 0.08, 0.114, 0.467, 0.641, 0.973, 0.644],
     [0.3, 0.6, 0.2, 0.9, 0.6, 0.2, 0.7, 0.8, 0.7, 0.4], [0.3, 0.8, 0.7, 0.9, 0.1, 0.1, 0.5, 0.6, 1, 0.6],
     0.2504, 0.2880, 0.297),
    ([0.185, 0.573, 0.944, 0.129, 0.468, 0.553, 0.761, 0.405, 0.976, 0.445],
     [0.845, 0.272, 0.275, 0.924, 0.605, 0.334, 0.162, 0.872, 0.018, 0.25],
     [0.2, 0.6, 0.9, 0.1, 0.5, 0.6, 0.8, 0.4, 1, 0.4], [0.8, 0.3, 0.3, 0.9, 0.6, 0.3, 0.2, 0.9, 0, 0.2],
     -0.6971, -0.668, -0.7047),
]


@pytest.mark.parametrize("x,y,xt,yt,ap,apb,apb_ties", _IRCOR)
def test_tau_ap_and_tau_ap_b_equal_pyircor_values(x, y, xt, yt, ap, apb, apb_ties):
    from metaeval.analysis.kendall import tau_ap_b

    assert tau_ap(x, y) == pytest.approx(ap, abs=5e-5)
    assert tau_ap_b(x, y) == pytest.approx(apb, abs=5e-5)
    assert tau_ap_b(x, y) == pytest.approx(tau_ap_sym(x, y))  # no ties: the symmetric tau_AP
    assert tau_ap_b(xt, yt) == pytest.approx(apb_ties, abs=5e-5)
    assert tau_ap_b(yt, xt) == pytest.approx(apb_ties, abs=5e-5)
    assert get_variant("tauap_b").name == "ap_b"


def test_kendall_at_k_is_tau_b_over_the_reference_top_k():
    from scipy import stats

    from metaeval.analysis.kendall import kendall_at_k

    rng = np.random.default_rng(7)
    x = rng.random(30)
    y = x + rng.normal(0, 0.3, 30)
    top = np.argsort(-x)[:10]
    assert kendall_at_k(x, y, 10) == pytest.approx(stats.kendalltau(x[top], y[top]).statistic)
    assert kendall_at_k(x, y, 100) == pytest.approx(stats.kendalltau(x, y).statistic)
    batch = kendall_at_k(np.vstack([x, x[::-1]]), np.vstack([y, y[::-1]]), 10)
    assert batch == pytest.approx([kendall_at_k(x, y, 10)] * 2)


def test_long_vectors_use_the_n_log_n_path_with_the_same_values():
    from scipy import stats

    import metaeval.analysis.kendall as k

    rng = np.random.default_rng(8)
    x = rng.integers(0, 12, 2000) / 11.0
    y = np.clip(x + rng.integers(-3, 4, 2000) / 11.0, 0, 1)
    x[5] = np.nan
    ok = ~np.isnan(x)
    assert len(x) > k._LONG
    # scipy ranks the raw floats (3/11 + 2/11 and 5/11 differ in the last bit there); we rank settled values
    xs, ys = k.settle(x[ok]), k.settle(y[ok])
    assert kendall(x, y, "b") == pytest.approx(stats.kendalltau(xs, ys).statistic, abs=1e-12)
    assert kendall(x, y, "b") == pytest.approx(float(k.tau_b_batch(x, y)), abs=1e-12)
    assert kendall(x, y, "a") == pytest.approx(float(k.tau_a_batch(x, y)), abs=1e-12)
    assert np.isnan(kendall(np.ones(500), y[:500], "b"))
    cont_x, cont_y = rng.random(3000), rng.random(3000)  # ~3000 distinct values: the scipy path
    assert kendall(cont_x, cont_y, "b") == pytest.approx(stats.kendalltau(cont_x, cont_y).statistic, abs=1e-12)
    assert kendall(cont_x, cont_y, "a") == pytest.approx(float(k.tau_a_batch(cont_x, cont_y)), abs=1e-12)


@pytest.mark.parametrize("variant", ["b", "a", "ap", "ap_sym", "ap_b"])
def test_one_shot_and_per_item_paths_agree(monkeypatch, variant):
    """Small inputs use full sign matrices, large ones a per-item loop: same values, NaNs and ties included."""
    import metaeval.analysis.kendall as k

    rng = np.random.default_rng(12)
    x = rng.integers(0, 5, (40, 12)) / 4.0
    y = np.clip(x + rng.integers(-1, 2, (40, 12)) / 4.0, 0, 1)
    x[3, 2] = np.nan
    y[7, :5] = np.nan
    y[9] = 0.5  # constant row: tau-b undefined
    small = k.get_variant(variant).batch(x, y)
    monkeypatch.setattr(k, "_SMALL", 0)
    loop = k.get_variant(variant).batch(x, y)
    assert np.allclose(small, loop, equal_nan=True)
    assert np.isnan(small[9]) == np.isnan(loop[9])


def test_near_ties_from_floating_point_noise_are_ties():
    """Scores equal in exact arithmetic but not in floating point (0.1 + 0.2 vs 0.3; a mean summed in another
    order) tie deterministically, on every path (one-shot, per-item, long vectors, pooled)."""
    from scipy import stats

    import metaeval.analysis.kendall as k
    from metaeval.analysis.pooled import PooledKernel

    assert 0.1 + 0.2 != 0.3
    x = np.array([0.1 + 0.2, 0.3, 0.5, 0.7])
    y = np.array([0.2, 0.1, 0.5, 0.7])
    exact = stats.kendalltau([0.3, 0.3, 0.5, 0.7], y).statistic  # x[0] and x[1] tied
    assert kendall(x, y, "b") == pytest.approx(exact, abs=1e-12)
    assert float(k.tau_b_batch(x[None, :], y[None, :])[0]) == pytest.approx(exact, abs=1e-12)
    big_x, big_y = np.tile(x, 100), np.tile(y, 100)  # > _LONG: the O(n log n) path
    assert kendall(big_x, big_y, "b") == pytest.approx(stats.kendalltau(np.round(big_x, 10), big_y).statistic, abs=1e-12)
    kern = PooledKernel(x[None, :], y[None, :])
    assert kern.xcode.tolist() == [0, 0, 1, 2]  # one code for the two "0.3"s
