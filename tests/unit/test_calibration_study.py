"""The calibrate workflow (metaeval.study.calibration) and its parts: text pairing, score-level PPI/PPI++/
regression, selection with raw as a candidate, out-of-fold leaderboards, bounded intervals, fitted-model checks."""

import numpy as np
import pandas as pd
import pytest

from metaeval.calibration.crossfit import check_disjoint, choose
from metaeval.calibration.pairing import normalise_text, pair_by_text
from metaeval.calibration.scorelevel import apply_score_method, fit_score_method, power_tuned_lambda, ppi_mean
from metaeval.errors import ConfigError
from metaeval.simulation import simulate_judge
from metaeval.study.calibration import apply_model, calibrate_study, split_model


@pytest.fixture(scope="module")
def small(nist_labels):
    """10 topics x 12 runs of the NIST labels (fast enough for nested cross-fitting)."""
    return nist_labels.subset(qids=nist_labels.qids[:10], run_ids=nist_labels.run_ids[:12], name="nist10")


def _renumber(ls, name):
    """The same labels with nugget ids reversed within each topic: position no longer identifies a nugget."""
    lab = ls.labels.copy()
    mx = lab.groupby("qid")["nugget_id"].transform("max")
    lab["nugget_id"] = mx - lab["nugget_id"]
    out = ls.subset(name=name)
    out.labels = lab
    return out


def _other_nuggets(ls, name):
    """Judge labels on different nugget texts (an auto_auto judge): same answers, texts changed."""
    out = ls.subset(name=name)
    lab = out.labels.copy()
    lab["nugget"] = lab["nugget"].astype(str) + " (judge's own wording)"
    out.labels = lab
    return out


def test_normalise_text():
    assert normalise_text("  The  Sky is BLUE. ") == normalise_text("the sky is blue")


def test_pairing_by_text_not_position(small):
    judge = _renumber(simulate_judge(small, seed=3), "renumbered")
    p = pair_by_text(small, judge)
    assert p.coverage == 1.0 and p.matched == len(small.labels)
    # the human code attached to each judge pair is the human label of the same text, not the same id
    h = small.labels.set_index(["qid", "run_id", "nugget"])["support"].astype(str)
    jl = judge.labels
    keys = list(zip(jl["qid"], jl["run_id"], jl["nugget"]))
    names = np.array(["not_support", "partial_support", "support"])
    got = names[p.human[:200]]
    assert list(got) == [h.loc[k] for k in keys[:200]]


def test_label_level_refused_with_counts_score_level_runs(small):
    judge = _other_nuggets(simulate_judge(small, seed=1), "auto")
    res = calibrate_study(small, judge, {"folds": 3, "inner_folds": 2, "metrics": ["v_strict"], "n_boot": 100}, seed=0)
    assert res["pairing"]["label_level"] == "refused" and res["pairing"]["matched"] == 0
    for name in ("posterior", "matrix", "matrix_unconstrained", "ordinal"):
        c = res["candidates"][name]
        assert c["status"] == "refused" and f"0 of {len(small.labels)} label pairs" in c["reason"]
    for name in ("none", "ppi", "ppi_pp", "regression"):
        assert res["candidates"][name]["status"] == "ok"
        assert res["candidates"][name]["held_out"]["mae"]["mean"] > 0


def test_ppi_rectifier_by_hand():
    H = np.array([[0.5, 0.2], [0.7, 0.4], [0.9, 0.3]])
    J = np.array([[0.4, 0.1], [0.5, 0.2], [0.6, 0.3]])
    model = fit_score_method("ppi", H, J)
    Ju = np.array([[0.3, 0.0], [0.5, 0.4]])
    r = apply_score_method(model, Ju, level=0.9)
    d = H - J
    assert np.allclose(r.est, Ju.mean(axis=0) + d.mean(axis=0))
    from scipy.stats import t

    se = d.std(axis=0, ddof=1) * np.sqrt(1 / 3 + 1 / 2)
    assert np.allclose(r.se, se)
    half = t.ppf(0.95, 2) * se
    assert np.allclose(r.lo, np.clip(r.est - half, 0, 1)) and np.allclose(r.hi, np.clip(r.est + half, 0, 1))


def test_power_tuned_lambda_is_within_run_slope():
    rng = np.random.default_rng(0)
    J = rng.random((40, 3))
    H = 0.3 + 0.5 * J + rng.normal(0, 0.05, (40, 3))
    lam = power_tuned_lambda(H, J)
    dj, dh = J - J.mean(0), H - H.mean(0)
    assert lam == pytest.approx((dh * dj).sum() / (dj * dj).sum())
    assert 0.4 < lam < 0.6


def test_intervals_stay_in_unit_interval():
    H = np.array([[1.0, 0.0], [1.0, 0.0], [0.9, 0.1]])
    J = np.array([[0.2, 0.9], [0.3, 0.8], [0.1, 0.7]])
    for m in ("none", "ppi", "ppi_pp", "regression"):
        r = apply_score_method(fit_score_method(m, H, J), J, level=0.99)
        assert (r.lo >= 0).all() and (r.hi <= 1).all() and (r.lo <= r.hi).all()


def test_choose_keeps_raw_unless_clearly_better():
    errs = {"none": np.array([0.10, 0.12, 0.11]), "ppi": np.array([0.09, 0.13, 0.105])}
    assert choose(errs, "one_se")[0] == "none"
    errs["ppi"] = np.array([0.05, 0.06, 0.055])
    assert choose(errs, "one_se")[0] == "ppi"
    assert choose({"none": np.array([0.1, 0.1]), "x": np.array([0.2, 0.2])}, "min")[0] == "none"


def test_check_disjoint_refuses_overlap():
    with pytest.raises(AssertionError):
        check_disjoint([1, 2, 3], [3, 4])


def test_perfect_judge_keeps_raw_and_leaderboard_is_raw(small):
    judge = small.subset(name="same")
    res = calibrate_study(small, judge, {"folds": 3, "inner_folds": 2, "metrics": ["v_strict"], "n_boot": 100,
                                         "methods": ["ppi", "regression"]}, seed=0)
    assert res["selection"]["method"] == "none" and not res["selection"]["beats_raw"]
    assert "keep the raw judge scores" in res["recommendation"]
    for row in res["leaderboard"]["rows"]:
        assert row["corrected"] == pytest.approx(row["raw_labelled"])


def test_study_schema_out_of_fold_and_bounded(small):
    judge = simulate_judge(small, seed=2, name="sim")
    res = calibrate_study(small, judge, {"folds": 3, "inner_folds": 2, "metrics": ["V_strict", "a_strict"], "n_boot": 200,
                                         "methods": ["ppi", "ppi_pp", "regression", "posterior", "matrix"]}, seed=1)
    for key in ("schema", "pairing", "candidates", "selection", "leaderboard", "recommendation", "by_metric", "model"):
        assert key in res
    assert res["metric"] == "v_strict" and set(res["by_metric"]) == {"v_strict", "a_strict"}
    assert "none" in res["candidates"]
    lb = res["leaderboard"]
    assert lb["out_of_fold"] and lb["human_labelled_topics"] == 10 and lb["mae_vs_reference"] > 0
    for block in res["by_metric"].values():
        for row in block["leaderboard"]["rows"]:
            for lo, hi in (row["corrected_ci"], row["raw_ci"]):
                assert 0.0 <= lo <= hi <= 1.0
        for c in block["candidates"].values():
            if c["status"] == "ok" and c["held_out"]["mean_ci_width"] is not None:
                assert 0 < c["held_out"]["mean_ci_width"] <= 1
    sel = res["selection"]
    if sel["method"] != "none":  # the chosen method beats raw on the outer folds
        assert sel["held_out_mae"]["mean"] < sel["raw_mae"]["mean"]


def test_model_apply_refuses_on_changed_nuggets(small):
    judge = simulate_judge(small, seed=2, name="sim")
    res = calibrate_study(small, judge, {"folds": 3, "inner_folds": 2, "metrics": ["v_strict"], "n_boot": 50,
                                         "methods": ["ppi"]}, seed=0)
    _, model = split_model(res)
    ok = apply_model(model, judge, n_boot=50)
    rows = ok["by_metric"]["v_strict"]["rows"]
    assert all(0 <= r["corrected_ci"][0] <= r["corrected_ci"][1] <= 1 for r in rows)
    changed = _other_nuggets(judge, "sim")
    with pytest.raises(ConfigError, match="nugget_set"):
        apply_model(model, changed)
    warned = apply_model(model, changed, allow_mismatch=True, n_boot=50)
    assert any("nugget_set" in w for w in warned["warnings"])


def test_ordinal_fit_matches_statsmodels():
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    from metaeval.calibration.methods.ordinal import fit_cumulative_logit

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    y = np.digitize(X @ [1.0, -0.5, 0.2] + rng.logistic(size=1500), [-0.5, 0.7])
    params, cov, llf, ok = fit_cumulative_logit(X, y)
    ref = OrderedModel(pd.Series(pd.Categorical(y, categories=[0, 1, 2], ordered=True)), pd.DataFrame(X),
                       distr="logit").fit(method="bfgs", disp=False, maxiter=500)
    assert ok
    assert np.allclose(params, ref.params.to_numpy(), atol=1e-4)
    assert np.allclose(np.sqrt(np.diag(cov)), ref.bse.to_numpy(), rtol=1e-3)
    assert llf == pytest.approx(ref.llf, abs=1e-5)


@pytest.mark.ppi
@pytest.mark.parametrize("lam", [1.0, None])
def test_ppi_mean_agrees_with_ppi_python(lam):
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(7)
    n, N = 300, 2000
    y = rng.random(n)
    f = np.clip(y + rng.normal(0.1, 0.2, n), 0, 1)
    fu = np.clip(rng.random(N) + rng.normal(0.1, 0.2, N), 0, 1)
    theta, lo, hi = ppi_mean(y, f, fu, level=0.9, lam=lam)
    ref_theta = ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)
    ref_lo, ref_hi = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.1, lam=lam)
    assert theta == pytest.approx(float(np.ravel(ref_theta)[0]), abs=1e-6)
    assert lo == pytest.approx(float(np.ravel(ref_lo)[0]), abs=1e-6)
    assert hi == pytest.approx(float(np.ravel(ref_hi)[0]), abs=1e-6)


def test_outer_fold_predictions_ignore_their_own_human_labels(small):
    """Out-of-fold by construction: changing the human labels of one topic leaves the predictions for that topic's
    fold unchanged (every fitted model that scores the fold was fitted without it)."""
    from metaeval.calibration.crossfit import crossfit
    from metaeval.study.calibration import _Data, _label_candidate, _score_candidate

    judge = simulate_judge(small, seed=4, name="sim")

    def folds(reference):
        data = _Data(reference, judge, ["v_strict"])
        cands = [_score_candidate(m, data, ["v_strict"], 0.95) for m in ("none", "ppi", "ppi_pp", "regression")]
        cands.append(_label_candidate("posterior", data, ["v_strict"], 0.95, {}, 0))
        return data, crossfit(cands, data.labelled, data.truth, ["v_strict"], folds=3, inner_folds=2, seed=0)

    data, before = folds(small)
    target = small.qids[0]
    lab = small.labels.copy()
    flip = lab["qid"] == target
    lab.loc[flip, "support"] = "support"
    changed = small.subset(name="changed")
    changed.labels = lab
    _, after = folds(changed)
    t_idx = data.qids.index(target)
    for fb, fa in zip(before, after):
        same = t_idx in fb.topics
        for name in ("ppi", "ppi_pp", "regression", "posterior"):
            eq = np.allclose(fb.preds[name]["v_strict"].est, fa.preds[name]["v_strict"].est, equal_nan=True)
            assert eq == same, (name, fb.fold)  # unchanged on the held-out fold, changed where the topic trained
