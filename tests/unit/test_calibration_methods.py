"""Posterior, ordinal and PPI corrections checked against hand computations and statsmodels; model files."""

import json

import numpy as np
import pandas as pd
import pytest

from metaeval.calibration.apply import apply_models, fit_models, load_models, save_models
from metaeval.calibration.methods import REGISTRY, get_method
from metaeval.calibration.pairs import pairs_from_labelset
from metaeval.simulation import simulate_judge
from metaeval.errors import ConfigError, FormatError
from metaeval.scoring import score_answers


@pytest.fixture(scope="module")
def sim(nist_labels):
    return simulate_judge(nist_labels, seed=11, name="sim")


def test_registry_names():
    assert {"posterior", "matrix", "matrix_unconstrained", "ordinal", "ppi"} <= set(REGISTRY)
    with pytest.raises(ConfigError):
        get_method("nope")


def test_posterior_shrinkage_by_hand(nist_labels, sim):
    jp = pairs_from_labelset(sim)
    h = pairs_from_labelset(nist_labels).sup
    kappa = 10.0
    model = get_method("posterior").fit_pairs(jp, h, kappa=kappa)
    j = np.where(jp.sup < 0, 3, jp.sup)
    marg = (np.bincount(h, minlength=3) + 1) / (len(h) + 3)
    # pooled P(human = support | judge = partial) by the documented formula
    n = np.array([((j == 1) & (h == k)).sum() for k in range(3)])
    pooled = (n + kappa * marg) / (n.sum() + kappa)
    assert np.allclose(model["pooled"]["posterior"][1], pooled)
    vital = jp.imp == 0
    nv = np.array([((j == 1) & (h == k) & vital).sum() for k in range(3)])
    assert np.allclose(model["by_importance"]["vital"]["posterior"][1], (nv + kappa * pooled) / (nv.sum() + kappa))
    # unseen judge category (FAILED) falls back to the marginal
    assert np.allclose(model["pooled"]["posterior"][3], marg)
    # expected V_strict of one answer = mean over its vital pairs of P(support | judge label)
    pred = get_method("posterior").apply_pairs(model, jp, metrics=["v_strict"])
    post = np.array(model["by_importance"]["vital"]["posterior"])
    a = 0
    sel = (jp.ans == a) & vital
    assert np.isclose(pred.answers["v_strict"][a], post[j[sel], 2].mean())


def test_posterior_run_strata_shrink_and_fall_back(nist_labels, sim):
    jp = pairs_from_labelset(sim)
    h = pairs_from_labelset(nist_labels).sup
    model = get_method("posterior").fit_pairs(jp, h, strata="run", kappa=20.0)
    assert set(model["strata"]["groups"]) == set(jp.run_ids)
    # a run unseen in calibration uses the importance-level posterior
    train = jp.select_topics(range(21))
    model_l = get_method("posterior").fit_pairs(jp, h, strata="length")
    assert len(model_l["strata"]["edges"]) == 2
    pred = get_method("posterior").apply_pairs(model_l, train, metrics=["a"], rng=np.random.default_rng(0))
    assert np.isfinite(pred.se["a"]).all() and (pred.se["a"] > 0).all()


def test_ordinal_probabilities_match_statsmodels(nist_labels, sim):
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    from metaeval.calibration.methods.ordinal import _matrix, _probs, _cuts, design

    jp = pairs_from_labelset(sim).select_topics(range(8))
    h = pairs_from_labelset(nist_labels).select_topics(range(8)).sup
    model = get_method("ordinal").fit_pairs(jp, h)
    X = pd.DataFrame(_matrix(design(jp), model), columns=model["columns"])
    res = OrderedModel(pd.Series(pd.Categorical(h, categories=[0, 1, 2], ordered=True)), X, distr="logit").fit(method="bfgs", disp=False, maxiter=500)
    p = len(model["columns"])
    ours = _probs(X.to_numpy(), np.asarray(model["params"])[:p], _cuts(np.asarray(model["params"])[p:]))
    ref = np.asarray(res.predict(X))
    assert np.abs(ours - ref).max() < 1e-8
    assert model["beta"]["judge_support"] > model["beta"]["judge_partial"] > 0


def test_ppi_by_hand(nist_labels, sim):
    jp = pairs_from_labelset(sim)
    h = pairs_from_labelset(nist_labels).sup
    cal, held = list(range(15)), list(range(15, 21))
    m = get_method("ppi")
    model = m.fit_pairs(jp.select_topics(cal), jp.with_support(h).select_topics(cal).sup, metrics=["v_strict"])
    pred = m.apply_pairs(model, jp.select_topics(held), metrics=["v_strict"], level=0.9)
    qids = list(jp.qids)
    hs = score_answers(nist_labels).set_index(["run_id", "qid"])["v_strict"]
    js = score_answers(sim).set_index(["run_id", "qid"])["v_strict"]
    run = "ldilab_gpt_4o"
    r = jp.run_ids.index(run)
    d = np.array([hs[(run, qids[t])] - js[(run, qids[t])] for t in cal if (run, qids[t]) in hs.index])
    jh = np.array([js[(run, qids[t])] for t in held if (run, qids[t]) in js.index])
    est = jh.mean() + d.mean()
    se = d.std(ddof=1) * np.sqrt(1 / len(d) + 1 / len(jh))
    from scipy.stats import t as student_t

    q = student_t.ppf(0.95, len(d) - 1)
    assert np.isclose(pred.run["v_strict"][r], est) and np.isclose(pred.se["v_strict"][r], se)
    assert np.isclose(pred.hi["v_strict"][r] - pred.lo["v_strict"][r], 2 * q * se)


def test_ppi_new_run_gets_pooled_rectifier(nist_labels, sim):
    jp = pairs_from_labelset(sim)
    h = pairs_from_labelset(nist_labels).sup
    runs = list(jp.run_ids)
    human_sub = nist_labels.subset(qids=list(jp.qids[:12]), run_ids=runs[:30])
    bundle = fit_models(human_sub, sim, ["ppi"], metrics=["v_strict"])
    assert len(bundle["fitted_on"]["runs"]) == 45  # judge covers all runs, but only 30 have human labels
    pred = apply_models(bundle, sim, metrics=["v_strict"])["ppi"]
    assert set(pred.notes["pooled_rectifier_runs"]) == set(runs[30:])
    assert pred.runs["ci_low"].notna().all()


def test_model_file_round_trip(tmp_path, nist_labels, sim):
    human = nist_labels.subset(qids=nist_labels.qids[:10])
    bundle = fit_models(human, sim, ["posterior", "matrix", "ppi"], metrics=["v_strict", "a"])
    path = tmp_path / "model.json"
    save_models(bundle, path)
    text = path.read_text()
    assert "NaN" not in text and json.loads(text)["fitted_on"]["topics"] == list(nist_labels.qids[:10])
    loaded = load_models(path)
    a = apply_models(bundle, sim, metrics=["v_strict", "a"], seed=3)
    b = apply_models(loaded, sim, metrics=["v_strict", "a"], seed=3)
    for name in a:
        pd.testing.assert_frame_equal(a[name].runs, b[name].runs)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "metaeval-calibration", "models": {"matrix": {"method": "ppi"}}}')
    with pytest.raises(FormatError):
        load_models(bad)
    bad.write_text("{oops")
    with pytest.raises(FormatError):
        load_models(bad)


def test_ppi_population_estimand_variance(nist_labels, sim):
    jp = pairs_from_labelset(sim)
    h = pairs_from_labelset(nist_labels).sup
    cal, held = list(range(14)), list(range(14, 21))
    m = get_method("ppi")
    model = m.fit_pairs(jp.select_topics(cal), jp.with_support(h).select_topics(cal).sup, metrics=["a"])
    ej = jp.select_topics(held)
    pop = m.apply_pairs(model, ej, metrics=["a"], estimand="population")
    app = m.apply_pairs(model, ej, metrics=["a"], estimand="applied")
    assert np.allclose(pop.run["a"], app.run["a"])  # same point estimate, different target
    r = 0
    fit = model["runs"][jp.run_ids[r]]["a"]
    js = ej.observed_scores(["a"])["a"][ej.ans_run == r]
    se = np.sqrt(fit["sd"] ** 2 / fit["n_topics"] + js.var(ddof=1) / len(js))
    assert np.isclose(pop.se["a"][r], se)
    with pytest.raises(ConfigError):
        m.apply_pairs(model, ej, metrics=["a"], estimand="nope")
