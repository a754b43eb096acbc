"""The calibrate workflow (metaeval.study.calibration_workflow) and its parts: text pairing, score-level PPI/PPI++/
regression, the one procedure with raw and composite as candidates, the estimated human leaderboard, bounded intervals,
fitted-model checks."""

import json

import numpy as np
import pandas as pd
import pytest

from metaeval.calibration.crossfit import check_disjoint
from metaeval.calibration.pairing import normalise_text, pair_by_text
from metaeval.calibration.scorelevel import apply_score_method, fit_score_method, power_tuned_lambda, ppi_mean
from metaeval.errors import ConfigError
from metaeval.simulation import simulate_judge
from metaeval.study.calibration_workflow import apply_model, calibrate_study, split_model


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
    for name in ("raw", "composite", "ppi", "ppi_pp", "regression"):
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

    s2 = d.var(axis=0, ddof=1)  # moderated (Smyth 2004, prior df 4) toward the pooled variance, never below its own
    s2 = np.maximum(s2, (4 * s2.mean() + 2 * s2) / 6)
    se = np.sqrt(s2 * (1 / 3 + 1 / 2))
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


def test_power_tuned_lambda_clipped_at_one_when_the_optimum_exceeds_it():
    """A judge that compresses the human scores (J = H / 2 + noise): the within-run slope Cov(H, J) / Var(J) is
    about 2, and lambda is clipped to 1 (PPI), never extrapolated."""
    rng = np.random.default_rng(1)
    H = rng.random((30, 4))
    J = 0.5 * H + rng.normal(0, 0.01, (30, 4))
    dj, dh = J - J.mean(0), H - H.mean(0)
    assert (dh * dj).sum() / (dj * dj).sum() > 1.8
    assert power_tuned_lambda(H, J) == 1.0
    assert fit_score_method("ppi_pp", H, J)["lambda"] == 1.0
    assert power_tuned_lambda(H, -J) == 0.0  # and at 0 from below


def test_constant_differences_never_give_a_zero_width_interval():
    """A run whose human-minus-judge difference is constant on the labelled topics (s = 0) still gets an interval:
    the moderated pooled variance (d0 / (d0 + d_r) of the other runs' variance); all runs constant: the floor."""
    rng = np.random.default_rng(3)
    J = rng.random((6, 3))
    H = J + rng.normal(0, 0.1, (6, 3))
    H[:, 0] = J[:, 0] + 0.05  # run 0: constant difference
    for m in ("ppi", "ppi_pp"):
        r = apply_score_method(fit_score_method(m, H, J), rng.random((4, 3)))
        assert ((r.hi - r.lo) > 0.01).all()
    H_all = J + 0.05
    r = apply_score_method(fit_score_method("ppi", H_all, J), J[:4])
    assert (r.se >= np.sqrt(1e-4 * (1 / 6 + 1 / 4)) - 1e-12).all() and ((r.hi - r.lo) > 0).all()


def test_intervals_stay_in_unit_interval():
    H = np.array([[1.0, 0.0], [1.0, 0.0], [0.9, 0.1]])
    J = np.array([[0.2, 0.9], [0.3, 0.8], [0.1, 0.7]])
    for m in ("none", "ppi", "ppi_pp", "regression"):
        r = apply_score_method(fit_score_method(m, H, J), J, level=0.99)
        assert (r.lo >= 0).all() and (r.hi <= 1).all() and (r.lo <= r.hi).all()


def test_check_disjoint_refuses_overlap():
    with pytest.raises(AssertionError):
        check_disjoint([1, 2, 3], [3, 4])


def test_perfect_judge_keeps_raw_and_leaderboard_is_human(small):
    judge = small.subset(name="same")
    res = calibrate_study(small, judge, {"repeats": 3, "nested_splits": 2, "metrics": ["v_strict"], "n_boot": 100,
                                         "methods": ["ppi", "regression"]}, seed=0)
    sel = res["selection"]
    assert sel["method"] == "raw" and not sel["beats_raw"] and sel["splits"] == 3
    assert res["recommendation"].startswith("V_strict: leaderboard by the raw judge")
    for row in res["leaderboard"]["rows"]:  # every topic labelled: the estimate is the human score, no interval
        assert row["human_estimate"] == pytest.approx(row["human_labelled"]) == pytest.approx(row["judge_score"])
        assert row["human_estimate_ci"] is None


def _half_labelled(small, seed=2):
    reference = small.subset(qids=small.qids[:5], name="nist5")
    return reference, simulate_judge(small, seed=seed, name="sim")


def test_leaderboard_estimates_the_human_score_over_the_whole_track(small):
    """human_estimate = (n_L mean_L H + n_U corrected_U) / (n_L + n_U), its interval the judge-only interval scaled by
    n_U / N; judge_score is the judge's own run mean with the raw leaderboard's interval.  (5 labelled topics: no
    choice can be made, so composite is shown: corrected_judge_only is the raw judge there.)"""
    from metaeval.scoring import run_scores, score_answers

    reference, judge = _half_labelled(small)
    res = calibrate_study(reference, judge, {"folds": 5, "inner_folds": 2, "repeats": 2, "metrics": ["v_strict"],
                                             "n_boot": 100, "methods": ["ppi"]}, seed=0)
    lb = res["leaderboard"]
    assert lb["human_labelled_topics"] == 5 and lb["judge_only_topics"] == 5
    h = dict(zip(*run_scores(score_answers(reference))[["run_id", "v_strict"]].to_numpy().T))
    j = dict(zip(*run_scores(score_answers(judge))[["run_id", "v_strict"]].to_numpy().T))
    for row in lb["rows"]:
        n_l, n_u = row["n_human_labelled"], row["n_judge_only"]
        assert row["human_labelled"] == pytest.approx(h[row["run_id"]])
        assert row["judge_score"] == pytest.approx(j[row["run_id"]])
        want = (n_l * row["human_labelled"] + n_u * row["corrected_judge_only"]) / (n_l + n_u)
        assert row["human_estimate"] == pytest.approx(want)
        lo_u, hi_u = row["corrected_judge_only_ci"]
        lo, hi = row["human_estimate_ci"]
        assert hi - lo == pytest.approx((hi_u - lo_u) * n_u / (n_l + n_u))
        assert 0 <= lo <= row["human_estimate"] <= hi <= 1 and hi > lo  # never zero width, holds the point
        jl, jh = row["judge_score_ci"]
        assert jl <= row["judge_score"] <= jh
    assert "judge_score" in lb["columns"] and "human_estimate" in lb["columns"]
    assert "mae_vs_reference" not in lb  # by-construction figures are gone


def test_too_few_labelled_topics_choose_no_method(small):
    """Below min_topics no choice is evaluated: composite (nothing fitted) with PPI++ intervals, that verdict."""
    reference, judge = _half_labelled(small)
    st = {"repeats": 3, "nested_splits": 2, "metrics": ["v_strict"], "n_boot": 50, "methods": ["ppi"]}
    sel = calibrate_study(reference, judge, st, seed=0)["selection"]
    assert sel["verdict"] == "cannot decide" and sel["method"] == "composite" and sel["intervals_by"] == "ppi_pp"
    assert "too few human-labelled topics" in sel["why"]
    sel = calibrate_study(reference, judge, {**st, "min_topics": 5}, seed=0)["selection"]
    assert sel["verdict"] != "cannot decide" and sel["splits"] == 3


def test_seeds_are_separate(small):
    """calibration's seed moves the folds, not the judge score's interval; analysis_seed moves only that interval."""
    reference, judge = _half_labelled(small)
    st = {"folds": 5, "inner_folds": 2, "repeats": 2, "metrics": ["v_strict"], "n_boot": 200, "methods": ["ppi"]}
    a = calibrate_study(reference, judge, st, seed=0, analysis_seed=0)["leaderboard"]["rows"]
    b = calibrate_study(reference, judge, st, seed=5, analysis_seed=0)["leaderboard"]["rows"]
    c = calibrate_study(reference, judge, st, seed=0, analysis_seed=7)["leaderboard"]["rows"]
    ci = lambda rows: {r["run_id"]: r["judge_score_ci"] for r in rows}  # noqa: E731
    est = lambda rows: {r["run_id"]: r["human_estimate_ci"] for r in rows}  # noqa: E731
    assert ci(a) == ci(b) and ci(a) != ci(c)
    assert est(a) == est(c)


def test_study_schema_and_bounded(small):
    judge = simulate_judge(small, seed=2, name="sim")
    res = calibrate_study(small, judge, {"repeats": 2, "nested_splits": 2, "metrics": ["V_strict", "a_strict"],
                                         "n_boot": 200, "methods": ["ppi", "ppi_pp", "regression", "posterior", "matrix"]},
                          seed=1)
    for key in ("schema", "pairing", "candidates", "selection", "leaderboard", "recommendation", "by_metric", "model"):
        assert key in res
    assert res["metric"] == "v_strict" and set(res["by_metric"]) == {"v_strict", "a_strict"}
    assert "raw" in res["candidates"] and "composite" in res["candidates"] and "none" not in res["candidates"]
    for block in res["by_metric"].values():
        for row in block["leaderboard"]["rows"]:
            assert 0.0 <= row["judge_score_ci"][0] <= row["judge_score_ci"][1] <= 1.0
        for name, c in block["candidates"].items():
            h = c["held_out"]  # every candidate: coverage of the interval that would be shown with its point
            assert 0 < h["mean_ci_width"] <= 1 and h["zero_width"] == 0 and 0 <= h["coverage"] <= 1
        sel = block["selection"]
        assert sum(sel["wins"].values()) == 2 and sel["splits"] == 2
        if sel["method"] != "raw":  # shown only when it beats raw out of sample
            assert sel["held_out_mae"]["mean"] < sel["raw_mae"]["mean"]
        assert block["leaderboard"]["estimated_by"] == sel["method"] and sel["intervals_by"] == "ppi_pp"
        assert block["recommendation"].split(": ", 1)[1].startswith(f"leaderboard by ")


def test_model_apply_refuses_on_changed_nuggets(small):
    judge = simulate_judge(small, seed=2, name="sim")
    res = calibrate_study(small, judge, {"folds": 3, "inner_folds": 2, "repeats": 1, "metrics": ["v_strict"],
                                         "n_boot": 50, "methods": ["ppi"]}, seed=0)
    _, model = split_model(res)
    ok = apply_model(model, judge, n_boot=50, method="ppi")
    rows = ok["by_metric"]["v_strict"]["rows"]
    assert all(0 <= r["human_estimate_ci"][0] <= r["human_estimate"] <= r["human_estimate_ci"][1] <= 1 for r in rows)
    changed = _other_nuggets(judge, "sim")
    with pytest.raises(ConfigError, match="nugget_set"):
        apply_model(model, changed)
    warned = apply_model(model, changed, allow_mismatch=True, n_boot=50)
    assert any("nugget_set" in w for w in warned["warnings"])


def test_model_apply_refuses_another_judge_spec_and_renamed_topics(small):
    """Issue 25 item 9: a model fitted with a judge spec refuses labels whose spec is not given (not a warning), and
    topic ids renamed between fit and apply do not skip the nugget check."""
    judge = simulate_judge(small, seed=2, name="sim")
    res = calibrate_study(small, judge, {"folds": 3, "inner_folds": 2, "repeats": 1, "metrics": ["v_strict"],
                                         "n_boot": 50, "methods": ["ppi"], "judge_spec": "lexical"}, seed=0)
    _, model = split_model(res)
    apply_model(model, judge, n_boot=50, settings={"judge_spec": "lexical"})  # same spec: fine
    with pytest.raises(ConfigError, match="judge_spec"):
        apply_model(model, judge, n_boot=50)  # spec not given
    with pytest.raises(ConfigError, match="judge_spec"):
        apply_model(model, judge, n_boot=50, settings={"judge_spec": "lexical_strict"})
    renamed = judge.subset(name="sim")
    for attr in ("labels", "answers"):
        df = getattr(renamed, attr).copy()
        df["qid"] = "x-" + df["qid"].astype(str)
        setattr(renamed, attr, df)
    with pytest.raises(ConfigError, match="renamed"):
        apply_model(model, renamed, n_boot=50, settings={"judge_spec": "lexical"})


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
    """Out of sample by construction: changing the human labels of one topic leaves every split's predictions for
    its held-out topics unchanged exactly when that topic is held out (every model that scores a split was fitted
    without its held-out topics)."""
    from metaeval.calibration.crossfit import applied_splits
    from metaeval.study.calibration_workflow.data import CalibrationData, label_candidate, score_candidate

    judge = simulate_judge(small, seed=4, name="sim")
    splits = applied_splits(np.arange(10), 7, 6, np.random.default_rng(0))

    def preds(reference):
        data = CalibrationData(reference, judge, ["v_strict"])
        cands = [score_candidate(m, data, ["v_strict"], 0.95) for m in ("ppi", "ppi_pp", "regression")]
        cands.append(label_candidate("posterior", data, ["v_strict"], 0.95, {}, 0))
        return data, [{c.name: c.apply(c.fit(A), B, False)["v_strict"].est for c in cands} for A, B in splits]

    data, before = preds(small)
    target = small.qids[0]
    lab = small.labels.copy()
    lab.loc[lab["qid"] == target, "support"] = "support"
    changed = small.subset(name="changed")
    changed.labels = lab
    _, after = preds(changed)
    t_idx = data.qids.index(target)
    for (A, B), pb, pa in zip(splits, before, after):
        for name in pb:
            assert np.allclose(pb[name], pa[name], equal_nan=True) == (t_idx not in A), name


def test_report_section_renders_the_estimated_human_leaderboard(small):
    from metaeval.report.calibration_section import cell_blocks, summary_row
    from metaeval.report.model import Detail
    from metaeval.study.calibration_workflow.workflow import split_model
    from metaeval.study.records import CellCalibration, decode, encode

    reference, judge = _half_labelled(small)
    res = calibrate_study(reference, judge, {"repeats": 2, "nested_splits": 2, "metrics": ["v_strict"],
                                             "n_boot": 50, "methods": ["ppi"], "min_topics": 5}, seed=0)
    cal = decode(CellCalibration, split_model(res)[0], "calibration.json")  # as the summary holds it
    # the record writes back what the workflow wrote, key order included (judge-only topics: the corrected columns)
    assert json.dumps(encode(cal)) == json.dumps(split_model(res)[0])
    assert cal.leaderboard.judge_only_topics > 0 and cal.leaderboard.rows[0].corrected_judge_only_ci is not None
    detail = [b for b in cell_blocks(cal) if isinstance(b, Detail)][0]
    table = detail.blocks[0].shown()  # the report view (paper-only columns belong to the LaTeX table)
    assert table.columns == ["rank", "run", "human estimate", "interval", "human (labelled topics)", "judge score"]
    assert "estimated human run score over all 10 topics" in table.caption and "judge's own" in table.caption
    first = res["leaderboard"]["rows"][0]
    assert table.rows[0][2] == f"{first['human_estimate']:.4f}"
    row = summary_row(cal)
    assert row["held_out_mae"].startswith(f"{res['selection']['nested_mae']['mean']:.4f}")  # led by the nested error


def test_forked_repeats_give_the_same_calibration_as_one_process(nist_labels):
    """``workers=2`` runs the procedure's splits (and nested re-runs) in forked processes: calibration.json and the model are the
    same numbers, byte for byte once serialised, as ``workers=1``; a bad count is one line."""
    import json

    from metaeval.errors import ConfigError
    from metaeval.study.calibration_workflow import calibrate_study
    from metaeval.testing.relabel import judge_like

    judge = judge_like(nist_labels, name="jl")
    base = {"repeats": 4, "nested_splits": 2, "metrics": ["v_strict", "a"]}
    one = calibrate_study(nist_labels, judge, {**base, "workers": 1}, seed=3)
    two = calibrate_study(nist_labels, judge, {**base, "workers": 2}, seed=3)
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert "workers" not in one["settings"]  # it moves no number, so the results do not record it
    with pytest.raises(ConfigError, match="workers=0"):
        calibrate_study(nist_labels, judge, {**base, "workers": 0}, seed=3)


def test_model_apply_defaults_to_the_chosen_point_method(small):
    """``apply_model`` shows what the procedure chose (its point, PPI++'s interval widened to contain it), not PPI++'s
    point; an explicit ``method`` overrides with that method's own point and interval."""
    judge = simulate_judge(small, seed=2, name="sim")
    res = calibrate_study(small, judge, {"folds": 3, "repeats": 2, "metrics": ["v_strict"], "n_boot": 50,
                                         "methods": ["matrix"]}, seed=0)
    _, model = split_model(res)
    assert model["intervals_by"]["v_strict"] == "ppi_pp"
    for chosen in ("raw", "matrix"):  # whatever was chosen, that point is applied (not PPI++'s)
        model["chosen"]["v_strict"] = chosen
        block = apply_model(model, judge, n_boot=50)["by_metric"]["v_strict"]
        own = apply_model(model, judge, n_boot=50, method=chosen)["by_metric"]["v_strict"]
        pp = apply_model(model, judge, n_boot=50, method="ppi_pp")["by_metric"]["v_strict"]
        assert block["method"] == chosen and block["intervals_by"] == "ppi_pp" and not block["overridden"]
        assert "intervals by ppi_pp" in block["note"] and "widened to contain the point" in block["note"]
        assert pp["method"] == "ppi_pp" and pp["overridden"]
        by_run = {r["run_id"]: r for r in block["rows"]}
        pp_run = {r["run_id"]: r for r in pp["rows"]}
        moved = 0
        for run, r in by_run.items():
            point = r["judge_score"] if chosen == "raw" else {x["run_id"]: x for x in own["rows"]}[run]["human_estimate"]
            assert r["human_estimate"] == pytest.approx(point)
            lo, hi = r["human_estimate_ci"]
            plo, phi = pp_run[run]["human_estimate_ci"]
            assert lo == pytest.approx(min(plo, point)) and hi == pytest.approx(max(phi, point))  # widened PPI++
            moved += abs(r["human_estimate"] - pp_run[run]["human_estimate"]) > 1e-9
        assert moved > 0  # the chosen point is not PPI++'s
