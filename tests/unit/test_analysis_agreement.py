"""Label agreement: confusion counts, kappas (statsmodels), Krippendorff's alpha (package), strictness, joins."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest

from metaeval.analysis.agreement import join_labels, label_agreement
from metaeval.analysis.confusion import confusion_agreement, krippendorff_alpha_ordinal, strictness_index
from metaeval.errors import ConfigError
from metaeval.paper import FIG6_COUNTS
from metaeval.types import SUPPORT_ORDER, build_label_set

from tests.unit.test_analysis_levels import relabel


def _units(m):
    """Reliability data (2 coders x units) that has the count matrix ``m``."""
    a, b = [], []
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            a += [i] * int(m[i, j])
            b += [j] * int(m[i, j])
    return np.array([a, b], dtype=float)


@pytest.mark.parametrize("name", sorted(FIG6_COUNTS))
def test_krippendorff_alpha_equals_package(name):
    m = np.asarray(FIG6_COUNTS[name])
    want = krippendorff.alpha(reliability_data=_units(m), level_of_measurement="ordinal")
    assert krippendorff_alpha_ordinal(m) == pytest.approx(want, abs=1e-10)


def test_small_matrix_hand_values():
    m = np.array([[4, 1, 0], [1, 2, 1], [0, 2, 9]])
    res = confusion_agreement(m)
    n = 20
    p_o = 15 / n
    p_e = (5 * 5 + 4 * 5 + 11 * 10) / n**2
    assert res["exact_agreement"] == pytest.approx(p_o)
    assert res["cohen_kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    lo, hi = res["cohen_kappa_ci"]
    assert lo < res["cohen_kappa"] < hi
    # linear agreement weights 1 - |i-j|/2
    w = 1 - np.abs(np.subtract.outer(range(3), range(3))) / 2
    pw_o = (w * m).sum() / n
    pw_e = (w * np.outer(m.sum(1), m.sum(0))).sum() / n**2
    assert res["weighted_kappa"] == pytest.approx((pw_o - pw_e) / (1 - pw_e))
    # candidate below reference: cells (1,0), (2,1) = 1 + 2; above: (0,1), (1,2) = 1 + 1
    assert res["strictness_index"] == pytest.approx((3 - 2) / n)
    assert res["reference_mix"] == pytest.approx({"not_support": 25.0, "partial_support": 20.0, "support": 55.0})
    assert res["candidate_mix"] == pytest.approx({"not_support": 25.0, "partial_support": 25.0, "support": 50.0})
    json.dumps(res)  # JSON-ready


def test_kappas_and_stuart_maxwell_equal_statsmodels_on_random_tables():
    """Our numpy kappas (Fleiss, Cohen & Everitt 1969 SEs) and Stuart-Maxwell equal statsmodels exactly."""
    from statsmodels.stats.contingency_tables import SquareTable
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = np.random.default_rng(11)
    tables = [np.asarray(FIG6_COUNTS[k]) for k in FIG6_COUNTS] + [rng.integers(0, 40, (3, 3)) + np.diag(rng.integers(5, 80, 3))
                                                                  for _ in range(30)]
    for m in tables:
        res = confusion_agreement(m, alpha=0.1)
        for key, wt in (("cohen_kappa", None), ("weighted_kappa", "linear")):
            ref = cohens_kappa(m, wt=wt)
            assert res[key] == pytest.approx(float(ref.kappa), rel=1e-12, abs=1e-12)
            assert res[f"{key}_se"] == pytest.approx(float(ref.std_kappa), rel=1e-10)
        sm = SquareTable(m, shift_zeros=False).homogeneity()
        assert res["stuart_maxwell_stat"] == pytest.approx(float(sm.statistic), rel=1e-10)
    z = 1.6448536269514722  # alpha = 0.1
    assert res["cohen_kappa_ci"] == pytest.approx([res["cohen_kappa"] - z * res["cohen_kappa_se"],
                                                   res["cohen_kappa"] + z * res["cohen_kappa_se"]])


def test_stuart_maxwell_and_strictness_direction():
    from statsmodels.stats.contingency_tables import SquareTable

    m = np.asarray(FIG6_COUNTS["paper-fig6-edits"])
    res = confusion_agreement(m)
    assert res["stuart_maxwell_p"] == pytest.approx(SquareTable(m, shift_zeros=False).homogeneity().pvalue)
    assert res["stuart_maxwell_df"] == 2
    strict = np.array([[10, 0, 0], [5, 5, 0], [2, 8, 10]])  # candidate never above the reference
    s = strictness_index(strict)
    assert s["strictness_index"] == pytest.approx(15 / 40) and s["p_higher"] == 0
    assert s["strictness_ci"][0] < s["strictness_index"] < s["strictness_ci"][1]
    assert strictness_index(strict.T)["strictness_index"] == pytest.approx(-15 / 40)


def test_bad_matrix_rejected():
    with pytest.raises(ConfigError, match="3x3"):
        confusion_agreement([[1, 2], [3, 4]])
    with pytest.raises(ConfigError, match="non-negative"):
        confusion_agreement([[1, -2, 0], [0, 1, 0], [0, 0, 1]])


def test_nist_relabelling_confusion_equals_direct_count(nist_labels):
    cand = relabel(nist_labels)
    res = label_agreement(nist_labels, cand)
    ref = nist_labels.labels["support"].astype(str).to_numpy()
    new = cand.labels["support"].astype(str).to_numpy()
    direct = [[int(((ref == a) & (new == b)).sum()) for b in SUPPORT_ORDER] for a in SUPPORT_ORDER]
    assert res["confusion"] == direct
    assert res["n"] == len(ref) == 13158
    assert res["join"]["n_joined"] == 13158 and res["join"]["text_mismatches"] == 0
    assert res["exact_agreement"] == pytest.approx((ref == new).mean())
    imp = res["importance"]
    assert imp["identical"] is True and imp["cohen_kappa"] == pytest.approx(1.0) and imp["stuart_maxwell_p"] == 1.0
    # the perturbation moves support down more than not_support up -> stricter candidate
    assert res["strictness_index"] > 0
    k_alpha = krippendorff.alpha(
        reliability_data=np.array([[SUPPORT_ORDER.index(v) for v in ref], [SUPPORT_ORDER.index(v) for v in new]], float),
        level_of_measurement="ordinal")
    assert res["krippendorff_alpha"] == pytest.approx(k_alpha, abs=1e-10)


def _tiny(name, rows):
    labels = [(q, r, n, text, imp, sup, imp, sup, 1) for (q, r, n, text, imp, sup) in rows]
    answers = sorted({(q, r, "", 0, 1) for (q, r, *_rest) in rows})
    return build_label_set(name, labels, answers)


def test_join_reports_failed_mismatches_and_one_sided_rows():
    ref = _tiny("ref", [("1", "a", 0, "x is y", "vital", "support"), ("1", "a", 1, "z", "okay", "not_support"),
                        ("1", "a", 2, "w", "vital", "FAILED"), ("1", "b", 0, "x is y", "vital", "partial_support")])
    cand = _tiny("cand", [("1", "a", 0, " x is y ", "okay", "partial_support"), ("1", "a", 1, "other text", "okay", "support"),
                          ("1", "a", 2, "w", "vital", "support"), ("2", "a", 0, "q", "vital", "support")])
    joined, info = join_labels(ref, cand)
    assert info["n_joined"] == 2 and info["text_mismatches"] == 1 and info["reference_only"] == 1
    assert info["candidate_only"] == 1
    assert info["text_mismatch_examples"][0]["candidate"] == "other text"
    res = label_agreement(ref, cand)
    assert res["failed"] == {"reference": 1, "candidate": 0, "both": 0}
    assert res["confusion"] == [[0, 0, 0], [0, 0, 0], [0, 1, 0]]
    imp = res["importance"]
    assert imp["confusion"] == [[0, 0], [1, 1]] and imp["identical"] is False
    with pytest.raises(ConfigError, match="share no"):
        label_agreement(ref, _tiny("other", [("9", "z", 0, "t", "vital", "support")]))


def _pairs(name, n, differ, topic="1"):
    """n labels of one answer; the first ``differ`` nugget texts changed on this side."""
    sup = ["support", "partial_support", "not_support"]
    return [(topic, "a", i, (f"other {i}" if i < differ else f"nugget {i}"), "vital", sup[i % 3]) for i in range(n)]


def test_coverage_note_below_95_percent_and_statistics_na_below_50_percent():
    ref = _tiny("ref", _pairs("ref", 40, 0))
    full = label_agreement(ref, _tiny("c", _pairs("c", 40, 0)), n_boot=50)
    assert full["coverage"]["share"] == 1.0 and full["coverage"]["note"] is None
    assert full["cohen_kappa"] == pytest.approx(1.0)
    part = label_agreement(ref, _tiny("c", _pairs("c", 40, 4)), n_boot=50)  # 36 of 40 match: 90%
    assert part["coverage"]["note"] == "on 36 of 40 pairs (nugget texts differ)"
    assert part["coverage"]["statistics"] and part["n"] == 36 and part["cohen_kappa"] == pytest.approx(1.0)
    few = label_agreement(ref, _tiny("c", _pairs("c", 40, 39)), n_boot=50)  # 1 of 40: a kappa would mislead
    assert few["coverage"]["note"] == "on 1 of 40 pairs (nugget texts differ)" and not few["coverage"]["statistics"]
    for key in ("cohen_kappa", "weighted_kappa", "krippendorff_alpha", "exact_agreement", "strictness_index"):
        assert np.isnan(few[key]), key
    assert np.isnan(few["cohen_kappa_ci"]).all() and "n/a" in few["statistics_note"]
    assert few["confusion"] == [[0, 0, 0], [0, 0, 0], [0, 0, 1]]  # the counts stay
    from metaeval.analysis.agreement import confusion_frame

    assert set(confusion_frame(part)["coverage_note"]) == {"on 36 of 40 pairs (nugget texts differ)"}
    assert confusion_frame(full)["coverage_note"].isna().all()
    half = label_agreement(ref, _tiny("c", _pairs("c", 40, 20)), n_boot=50)  # exactly 50%: still computed
    assert half["coverage"]["statistics"] and np.isfinite(half["cohen_kappa"])


def test_coverage_counts_only_answers_both_sides_labelled():
    ref = _tiny("ref", _pairs("ref", 10, 0) + [("2", "a", 0, "t", "vital", "support")])
    cand = _tiny("c", _pairs("c", 10, 0) + [("3", "a", 0, "t", "vital", "support")])
    res = label_agreement(ref, cand, n_boot=0)
    assert res["coverage"]["matched"] == 10 and res["coverage"]["total"] == 10 and res["coverage"]["note"] is None
    assert res["join"]["reference_only"] == 1 and res["join"]["candidate_only"] == 1
