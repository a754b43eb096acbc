"""Matrix (prevalence) correction: the Figure 6 identity, the simplex solver, and the method end to end."""

import json

import numpy as np
import pytest

from metaeval.calibration.methods.matrix import MatrixCorrection, simplex_lstsq
from metaeval.calibration.pairs import pairs_from_labelset
from metaeval.paper import FIG6_COUNTS, TABLE4
from metaeval.paths import shared_data_dir
from metaeval.types import build_label_set

ORDER = ["not_support", "partial_support", "support"]


def _paper():
    return json.loads((shared_data_dir() / "paper" / "great-nugget-recall.json").read_text())


@pytest.mark.parametrize("fig, row", [("autonuggets_edits_36_topics", "1a_autonuggets_edits__manualassign"),
                                      ("manual_nuggets_20_topics", "1b_manualnuggets__manualassign")])
def test_fig6_judge_mix_inverts_to_table4_human_mix(fig, row):
    paper = _paper()
    counts = np.array(paper["figure6_confusion_counts"][fig], dtype=float)
    M = counts / counts.sum(axis=1, keepdims=True)          # P(judge | human)
    judge_mix = counts.sum(axis=0) / counts.sum()            # column sums: what the judge said
    p = simplex_lstsq(M.T, judge_mix[None, :], 1.0)[0]
    table4 = np.array(paper["table4_descriptive"][row][5:8])  # % not_support, partial, support
    assert np.abs(100 * p - table4).max() <= 0.1
    # and the judge mix itself is far from the human mix (the correction does something)
    assert np.abs(100 * judge_mix - table4).max() > 5


def _labelset_from_counts(counts):
    """One topic, one run, one answer holding every (human, judge) pair of a count matrix."""
    rows_h, rows_j, i = [], [], 0
    for h in range(3):
        for j in range(3):
            for _ in range(int(counts[h][j])):
                rows_h.append(("q1", "r1", i, f"n{i}", "vital", ORDER[h], "vital", ORDER[h], -1))
                rows_j.append(("q1", "r1", i, f"n{i}", "vital", ORDER[j], "vital", ORDER[j], -1))
                i += 1
    ans = [("q1", "r1", "text", 10, -1)]
    return build_label_set("human", rows_h, ans), build_label_set("judge", rows_j, ans)


def test_matrix_method_on_fig6_pairs_recovers_human_mix():
    human, judge = _labelset_from_counts(FIG6_COUNTS["paper-fig6-edits"])
    jp = pairs_from_labelset(judge)
    hp = pairs_from_labelset(human)
    m = MatrixCorrection()
    model = m.fit_pairs(jp, hp.sup)
    pred = m.apply_pairs(model, jp, metrics=["a_strict", "a"])
    support = pred.run["a_strict"][0]
    partial = 2 * (pred.run["a"][0] - support)
    row = TABLE4["1a_autonuggets_edits__manualassign"]
    assert abs(100 * support - row[7]) <= 0.1
    assert abs(100 * partial - row[6]) <= 0.1
    # the raw judge support share is Table 4 row 3a, far from the human 35.6 %
    assert abs(100 * jp.observed_scores(["a_strict"])["a_strict"][0] - 27.2) < 0.1


def test_simplex_lstsq_matches_slsqp():
    from scipy.optimize import minimize

    rng = np.random.default_rng(4)
    for _ in range(40):
        A = rng.dirichlet(np.ones(4), size=3).T        # (4, 3) columns = P(judge | human)
        q = rng.dirichlet(np.ones(4)) * rng.uniform(0.5, 2)
        t = q.sum()
        ours = simplex_lstsq(A, q[None, :], t)[0]
        res = minimize(lambda p: ((A @ p - q) ** 2).sum(), np.full(3, t / 3), method="SLSQP",
                       bounds=[(0, None)] * 3, constraints=[{"type": "eq", "fun": lambda p: p.sum() - t}],
                       options={"ftol": 1e-14, "maxiter": 500})
        assert ours.min() >= 0 and abs(ours.sum() - t) < 1e-9
        f_ours, f_ref = ((A @ ours - q) ** 2).sum(), ((A @ res.x - q) ** 2).sum()
        assert f_ours <= f_ref + 1e-10
        assert np.abs(ours - res.x).max() < 1e-4


def test_unconstrained_inversion_is_linear_and_can_leave_simplex():
    A = np.array([[0.8, 0.5, 0.1], [0.15, 0.35, 0.25], [0.05, 0.15, 0.65]])
    q = np.array([[0.9, 0.05, 0.05]])  # more not_support than any human mix can produce
    p = simplex_lstsq(A, q, 1.0, constrained=False)[0]
    assert p.min() < 0 and abs(p.sum() - 1) < 1e-12
    assert np.allclose(A @ p, q[0])
    pc = simplex_lstsq(A, q, 1.0)[0]
    assert pc.min() >= 0 and abs(pc.sum() - 1) < 1e-12


def test_identity_judge_returns_human_scores(nist_labels):
    hp = pairs_from_labelset(nist_labels)
    m = MatrixCorrection()
    pred = m.apply_pairs(m.fit_pairs(hp, hp.sup, kappa=0.0), hp, metrics=["v_strict", "a"])
    truth = hp.observed_scores(["v_strict", "a"])
    for metric in ("v_strict", "a"):
        # shrinkage prior adds 0.5 pseudo-counts per cell, so M is identity up to ~1e-4
        assert np.abs(pred.run[metric] - hp.run_means(truth[metric])).max() < 2e-3
