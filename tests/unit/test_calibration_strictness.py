"""Strictness models: effect sizes against a direct statsmodels fit, clustered index by hand."""

import numpy as np
import pytest

from metaeval.simulation import simulate_judge
from metaeval.calibration.strictness import clustered_index, shift_frame, strictness_models


@pytest.fixture(scope="module")
def pair(nist_labels):
    # a judge that demotes support -> partial 40% of the time and never promotes: strictly stricter
    conf = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0.4, 0.6]])
    return nist_labels, simulate_judge(nist_labels, conf, seed=3)


def test_shift_frame_and_index(pair):
    human, judge = pair
    df = shift_frame(human, judge)
    assert len(df) == len(human.labels)
    assert (df["shift"] <= 0).all() and set(df["shift"].unique()) <= {0, -1}
    idx = clustered_index(df)
    share = (df["shift"] < 0).mean()
    assert idx["strictness_index"] == pytest.approx(share) and idx["p_higher"] == 0
    # clustered SE by hand, with the CR1 factor G/(G-1)
    s = (df["shift"] < 0).astype(float).to_numpy() - share
    per = df.assign(s=s).groupby("qid")["s"].sum().to_numpy()
    g = len(per)
    assert idx["se_cluster"] == pytest.approx(np.sqrt(g / (g - 1)) * np.sqrt((per ** 2).sum()) / len(df))
    assert idx["ci_cluster"][0] > 0


def test_clustered_index_equals_statsmodels_cluster_ols_with_small_sample_t(pair):
    """The index is the mean of s_i = sign(human - judge): its CI equals statsmodels' OLS(s ~ 1) with
    cov_type='cluster' (CR1 correction) and use_t=True (t with G - 1 df), here on 8 topics."""
    import statsmodels.api as sm
    from scipy import stats

    human, judge = pair
    df = shift_frame(human, judge)
    sub = df[df["qid"].isin(sorted(df["qid"].unique())[:8])].reset_index(drop=True)
    idx = clustered_index(sub, alpha=0.1)
    s = np.sign(sub["human"] - sub["judge"]).to_numpy(float)
    groups = sub["qid"].astype("category").cat.codes.to_numpy()
    fit = sm.OLS(s, np.ones((len(s), 1))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    lo, hi = fit.conf_int(0.1)[0]
    assert idx["n_topics"] == 8 and idx["df"] == 7
    assert idx["se_cluster"] == pytest.approx(fit.bse[0], rel=1e-10)
    assert idx["ci_cluster"] == pytest.approx([lo, hi], rel=1e-10)
    assert idx["t_crit"] == pytest.approx(stats.t.ppf(0.95, 7)) and idx["t_crit"] > 1.645  # not z


def test_per_topic_strata_use_a_within_topic_bootstrap_never_zero_width(pair):
    human, judge = pair
    res = strictness_models(human, judge, mixed=False, n_boot=300, seed=1)
    for q, st in res["strictness_index"]["topic"].items():
        lo, hi = st["ci_cluster"]
        assert "within-topic bootstrap" in st["ci_method"], q
        assert -1 <= lo <= st["strictness_index"] <= hi <= 1
        assert hi > lo, q  # a topic where the judge demotes some but not all supports has spread
    one = shift_frame(human, judge)
    single = one[(one["qid"] == one["qid"].iloc[0]) & (one["run_id"] == one["run_id"].iloc[0])]
    assert np.isnan(clustered_index(single)["ci_cluster"]).all()  # one answer: n/a, not zero width


def test_models_match_statsmodels(pair):
    import statsmodels.formula.api as smf

    human, judge = pair
    res = strictness_models(human, judge)
    df = shift_frame(human, judge)
    g = df["qid"].astype("category").cat.codes.to_numpy()
    ols = smf.ols("shift ~ vital + log_length_z", df).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True)
    coef = {r["term"]: r for r in res["ols"]["coefficients"]}
    assert coef["vital"]["coef"] == pytest.approx(ols.params["vital"])
    assert coef["vital"]["se"] == pytest.approx(ols.bse["vital"])
    assert coef["vital"]["ci"] == pytest.approx(list(ols.conf_int().loc["vital"]))  # t(G-1), not z
    assert coef["vital"]["p"] == pytest.approx(float(ols.pvalues["vital"]))
    logit = {r["term"]: r for r in res["logit"]["coefficients"]}
    assert logit["vital"]["effect"] == pytest.approx(np.exp(logit["vital"]["coef"]))
    assert res["strictness_index"]["all"]["all"]["strictness_index"] > 0.1
    assert set(res["strictness_index"]["importance"]) == {"vital", "okay"}
    assert len(res["strictness_index"]["run"]) == 45 and len(res["strictness_index"]["topic"]) == 21
    # the random-intercept model against statsmodels fitted here (same formula, REML): values, not just types
    mm = smf.mixedlm("shift ~ vital + log_length_z", df, groups=df["qid"]).fit(reml=True)
    topic = res["mixedlm"]["topic"]
    assert topic["converged"] is bool(mm.converged)
    fe = {r["term"]: r for r in topic["coefficients"]}
    assert fe["vital"]["coef"] == pytest.approx(mm.fe_params["vital"], rel=1e-6)
    assert topic["topic_variance"] == pytest.approx(float(mm.cov_re.iloc[0, 0]), rel=1e-6)
    assert topic["residual_variance"] == pytest.approx(float(mm.scale), rel=1e-6)
    assert topic["icc"] == pytest.approx(topic["topic_variance"] / (topic["topic_variance"] + topic["residual_variance"]))
    # inference is read from the cluster-robust fits; mixedlm's model-based SEs are labelled as such
    assert "cluster-robust" in res["ols"]["se"] and "cluster-robust" in res["logit"]["se"]
    assert res["mixedlm"]["topic"]["se"].startswith("model-based") and "ols / logit" in res["inference"]
    lg = smf.logit("stricter ~ vital + log_length_z", df).fit(disp=False, cov_type="cluster", cov_kwds={"groups": g},
                                                               use_t=True)
    assert logit["vital"]["se"] == pytest.approx(float(lg.bse["vital"]), rel=1e-6)
