"""Topic-clustered Stuart-Maxwell (``analysis.confusion.clustered_stuart_maxwell``) and the p-value bound text."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.analysis.confusion import clustered_stuart_maxwell, stuart_maxwell
from metaeval.report.model import p_text


def _hand(per_topic):
    """The clustered Wald statistic by explicit loops (module docstring's formula, written out independently)."""
    G = len(per_topic)
    K = len(per_topic[0])
    N = sum(sum(sum(r) for r in m) for m in per_topic)
    e = []
    for m in per_topic:
        col = [sum(m[i][j] for i in range(K)) for j in range(K)]
        row = [sum(m[j][i] for i in range(K)) for j in range(K)]
        e.append([col[j] - row[j] for j in range(K - 1)])
    d = [sum(e[g][j] for g in range(G)) / N for j in range(K - 1)]
    V = [[0.0] * (K - 1) for _ in range(K - 1)]
    for g, m in enumerate(per_topic):
        n_g = sum(sum(r) for r in m)
        u = [e[g][j] - n_g * d[j] for j in range(K - 1)]
        for a in range(K - 1):
            for b in range(K - 1):
                V[a][b] += G / (G - 1) * u[a] * u[b] / N ** 2
    # 2 x 2 inverse by hand
    det = V[0][0] * V[1][1] - V[0][1] * V[1][0]
    inv = [[V[1][1] / det, -V[0][1] / det], [-V[1][0] / det, V[0][0] / det]]
    return sum(d[a] * inv[a][b] * d[b] for a in range(2) for b in range(2))


def test_clustered_statistic_equals_a_hand_computation_and_its_p_the_f_and_chi2_tails():
    from scipy.stats import chi2, f

    per_topic = [[[5, 2, 0], [1, 4, 3], [0, 1, 6]], [[3, 0, 1], [2, 2, 0], [1, 0, 9]],
                 [[8, 1, 0], [4, 1, 1], [2, 2, 3]], [[2, 2, 1], [0, 5, 0], [0, 3, 4]]]
    res = clustered_stuart_maxwell(np.array(per_topic))
    stat = _hand(per_topic)
    assert res["stuart_maxwell_clustered_stat"] == pytest.approx(stat, rel=1e-12)
    assert res["stuart_maxwell_clustered_df"] == 2 and res["stuart_maxwell_clustered_topics"] == 4
    assert res["stuart_maxwell_clustered_p"] == pytest.approx(f.sf(stat / 2, 2, 3), rel=1e-9)
    assert res["stuart_maxwell_clustered_p_chi2"] == pytest.approx(chi2.sf(stat, 2), rel=1e-9)


def test_one_label_per_cluster_reduces_to_the_plain_test_that_statsmodels_computes():
    """With every label its own cluster, ``V = N/(N-1) (V_SM - d d') / N``, so by Sherman-Morrison the clustered
    statistic is ``(N - 1)/N * X / (1 - X / N)`` with ``X`` statsmodels' Stuart-Maxwell (``homogeneity``)."""
    from statsmodels.stats.contingency_tables import SquareTable

    m = np.array([[40, 12, 3], [20, 30, 9], [8, 15, 25]])
    x = SquareTable(m, shift_zeros=False).homogeneity().statistic
    assert stuart_maxwell(m)["stuart_maxwell_stat"] == pytest.approx(x, rel=1e-10)
    singles = []
    for i in range(3):
        for j in range(3):
            one = np.zeros((3, 3))
            one[i, j] = 1
            singles += [one] * int(m[i, j])
    n = m.sum()
    res = clustered_stuart_maxwell(np.stack(singles))
    assert res["stuart_maxwell_clustered_stat"] == pytest.approx((n - 1) / n * x / (1 - x / n), rel=1e-9)


def test_topic_clustering_lowers_the_statistic_when_topics_shift_together():
    """Planted: 20 topics, each shifting all its labels one way (the topic, not the label, is the unit).  The plain
    test treats 2,000 labels as independent; the clustered one sees 20 topics with margins that disagree."""
    rng = np.random.default_rng(0)
    mats = []
    for g in range(20):
        m = np.diag([30.0, 30.0, 30.0])
        k = rng.integers(0, 3)
        m[k, (k + 1) % 3] += 10 + g % 3   # every topic shifts its labels in its own direction
        mats.append(m)
    mats = np.stack(mats)
    plain = stuart_maxwell(mats.sum(0))["stuart_maxwell_stat"]
    clus = clustered_stuart_maxwell(mats)["stuart_maxwell_clustered_stat"]
    assert clus < plain / 5


def test_identical_margins_give_zero_and_too_few_topics_give_none():
    same = np.stack([np.eye(3) * 4, np.array([[1, 1, 0], [1, 1, 0], [0, 0, 2]])])
    assert clustered_stuart_maxwell(same)["stuart_maxwell_clustered_p"] == 1.0
    one = clustered_stuart_maxwell(np.array([[[1, 2, 0], [0, 1, 0], [0, 0, 1]]]))
    assert one["stuart_maxwell_clustered_stat"] is None and one["stuart_maxwell_clustered_p"] is None


@pytest.mark.parametrize("p,text", [(0.5, "p = 0.500"), (0.0123, "p = 0.012"), (0.0012, "p = 0.0012"),
                                    (9e-4, "p < 1e-3"), (2.79e-12, "p < 1e-11"), (1e-10, "p < 1e-9"),
                                    (0.0, "p < 1e-16"), (None, "p n/a"), (float("nan"), "p n/a")])
def test_p_values_are_printed_as_a_bound_where_tiny(p, text):
    assert p_text(p) == text
