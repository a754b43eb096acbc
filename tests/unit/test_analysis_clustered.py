"""Topic-clustered agreement CIs: the vectorised statistics equal statsmodels, and clustering widens intervals."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from metaeval.analysis.agreement import join_labels, label_agreement
from metaeval.analysis.clustered import agreement_statistics, clustered_agreement_ci, per_topic_counts
from metaeval.analysis.confusion import strictness_index
from metaeval.calibration import simulate_judge
from metaeval.types import SUPPORT_ORDER


def test_vectorised_statistics_equal_statsmodels():
    rng = np.random.default_rng(0)
    ms = rng.integers(0, 50, size=(5, 3, 3)).astype(float)
    got = agreement_statistics(ms)
    for b, m in enumerate(ms):
        assert got["cohen_kappa"][b] == pytest.approx(cohens_kappa(m).kappa, abs=1e-12)
        assert got["weighted_kappa"][b] == pytest.approx(cohens_kappa(m, wt="linear").kappa, abs=1e-12)
        assert got["strictness_index"][b] == pytest.approx(strictness_index(m)["strictness_index"], abs=1e-12)


def test_per_topic_counts_sum_to_the_confusion_matrix(nist_labels):
    judge = simulate_judge(nist_labels, seed=3)
    joined, _ = join_labels(nist_labels, judge)
    topics, counts = per_topic_counts(joined, SUPPORT_ORDER)
    assert len(topics) == 21
    ag = label_agreement(nist_labels, judge, n_boot=0)
    assert counts.sum(axis=0).astype(int).tolist() == ag["confusion"]


def test_clustered_intervals_contain_the_estimate_and_are_wider(nist_labels):
    judge = simulate_judge(nist_labels, seed=3)
    ag = label_agreement(nist_labels, judge, n_boot=500, seed=1)
    cl = ag["clustered"]
    assert cl["n_topics"] == 21 and cl["n_boot"] == 500
    for est, ci_iid, ci_topic in (("cohen_kappa", "cohen_kappa_ci", "cohen_kappa_ci_topic"),
                                  ("weighted_kappa", "weighted_kappa_ci", "weighted_kappa_ci_topic"),
                                  ("strictness_index", "strictness_ci", "strictness_ci_topic")):
        lo, hi = cl[ci_topic]
        assert lo < ag[est] < hi
        assert hi - lo > ag[ci_iid][1] - ag[ci_iid][0]  # topics share nuggets and assessors: wider than i.i.d.
    again = clustered_agreement_ci(join_labels(nist_labels, judge)[0], SUPPORT_ORDER, n_boot=500, seed=1)
    assert again["cohen_kappa_ci_topic"] == cl["cohen_kappa_ci_topic"]  # seeded


def test_flip_counts_with_holm_correction(nist_labels):
    from statsmodels.stats.multitest import multipletests

    from metaeval.analysis.bootstrap import run_flips
    from metaeval.analysis.cells import align, to_long
    from metaeval.testing.relabel import judge_like

    al = align(to_long(nist_labels), [to_long(judge_like(nist_labels))], "v_strict")
    summary, table = run_flips(al)
    holm = multipletests(table["p_ref"].dropna(), alpha=0.05, method="holm")[0]
    assert summary["n_ref_significant_holm"] == int(holm.sum()) <= summary["n_ref_significant"]
    assert summary["n_flips_ref_significant_holm"] == int((table["flip"] & table["ref_significant_holm"]).sum())
    assert summary["n_flips_ref_significant_holm"] <= summary["n_flips_ref_significant"]
