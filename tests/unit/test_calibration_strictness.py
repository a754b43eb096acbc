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
    # clustered SE by hand
    s = (df["shift"] < 0).astype(float).to_numpy() - share
    per = df.assign(s=s).groupby("qid")["s"].sum().to_numpy()
    assert idx["se_cluster"] == pytest.approx(np.sqrt((per ** 2).sum()) / len(df))
    assert idx["ci_cluster"][0] > 0


def test_models_match_statsmodels(pair):
    import statsmodels.formula.api as smf

    human, judge = pair
    res = strictness_models(human, judge)
    df = shift_frame(human, judge)
    g = df["qid"].astype("category").cat.codes.to_numpy()
    ols = smf.ols("shift ~ vital + log_length_z", df).fit(cov_type="cluster", cov_kwds={"groups": g})
    coef = {r["term"]: r for r in res["ols"]["coefficients"]}
    assert coef["vital"]["coef"] == pytest.approx(ols.params["vital"])
    assert coef["vital"]["se"] == pytest.approx(ols.bse["vital"])
    logit = {r["term"]: r for r in res["logit"]["coefficients"]}
    assert logit["vital"]["effect"] == pytest.approx(np.exp(logit["vital"]["coef"]))
    assert res["strictness_index"]["all"]["all"]["strictness_index"] > 0.1
    assert set(res["strictness_index"]["importance"]) == {"vital", "okay"}
    assert len(res["strictness_index"]["run"]) == 45 and len(res["strictness_index"]["topic"]) == 21
    assert res["mixedlm"]["topic"]["converged"] in (True, False)
    assert "coefficients" in res["mixedlm"]["topic"]
