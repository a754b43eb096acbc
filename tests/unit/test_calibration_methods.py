"""Posterior, ordinal and PPI corrections checked against hand computations and statsmodels; model files."""

import json

import numpy as np
import pandas as pd
import pytest

from metaeval.calibration.methods import REGISTRY, get_method
from metaeval.calibration.pairs import IMP_CODES, pairs_from_labelset
from metaeval.simulation import simulate_judge
from metaeval.errors import ConfigError, FormatError
from metaeval.scoring import score_answers


@pytest.fixture(scope="module")
def sim(nist_labels):
    return simulate_judge(nist_labels, seed=11, name="sim")


def test_registry_names():
    """One registry holds every method, score-level first (the order candidates are tried and listed)."""
    from metaeval.calibration.methods import display_names, method_names

    assert method_names() == ("none", "ppi", "ppi_pp", "regression", "posterior", "matrix", "matrix_unconstrained",
                              "ordinal")
    assert set(method_names("label")) == {"posterior", "matrix", "matrix_unconstrained", "ordinal"}
    assert set(method_names()) == set(REGISTRY)
    assert display_names(["none", "ppi_pp", "matrix_unconstrained"]) == {"none": "raw", "ppi_pp": "PPI++",
                                                                       "matrix_unconstrained": "matrix (free)"}
    assert get_method("ppi").gives_ci and get_method("ordinal").point_fit_options == {"covariance": False}
    with pytest.raises(ConfigError, match="expected one of none, ppi, ppi_pp"):
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
    vital = jp.imp == IMP_CODES["vital"]
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
    # the fallback itself, by value: fitted without run r0, the run-stratified model scores r0's answers exactly as
    # the importance-level posterior does (the same model without strata), and a run it has seen differently
    r0 = 0
    keep = jp.ans_run != r0
    fit_on = jp.select_answers(keep)
    h_fit = h[keep[jp.ans]]
    post = get_method("posterior")
    by_run = post.fit_pairs(fit_on, h_fit, strata="run", kappa=20.0)
    plain = post.fit_pairs(fit_on, h_fit, kappa=20.0)
    assert jp.run_ids[r0] not in by_run["strata"]["groups"]
    p_run = post.apply_pairs(by_run, jp, metrics=["v_strict"]).answers["v_strict"]
    p_imp = post.apply_pairs(plain, jp, metrics=["v_strict"]).answers["v_strict"]
    unseen = jp.ans_run == r0
    assert np.allclose(p_run[unseen], p_imp[unseen], equal_nan=True)
    assert not np.allclose(p_run[~unseen], p_imp[~unseen], equal_nan=True)


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
    # two optimisers (ours: analytic gradient; statsmodels: numerical) stop at the same MLE within their tolerances
    assert np.abs(ours - ref).max() < 1e-4
    assert model["loglike"] >= res.llf - 1e-6
    assert model["beta"]["judge_support"] > model["beta"]["judge_partial"] > 0


def test_calibration_defaults_live_in_one_place():
    """``metaeval calibrate``'s options, the typed sweep section and its YAML read study/calibration_workflow/defaults.DEFAULTS."""
    import argparse

    import yaml

    from metaeval.commands import calibrate as cmd
    from metaeval.judges.catalog import PACKAGE_CONF
    from metaeval.study.calibration_workflow.defaults import DEFAULTS, SEED_DEFAULT
    from metaeval.study.settings import CalibrationSettings

    sub = argparse.ArgumentParser().add_subparsers()
    cmd.add_parser(sub)
    args = sub.choices["calibrate"].parse_args(["--judge", "j", "--out", "o"])
    assert (args.folds, args.inner_folds, args.repeats, args.win_share, args.min_topics, args.selection,
            args.min_coverage, args.level, args.bootstrap, args.workers, args.seed) == (
        DEFAULTS["folds"], DEFAULTS["inner_folds"], DEFAULTS["repeats"], DEFAULTS["win_share"], DEFAULTS["min_topics"],
        DEFAULTS["selection"], DEFAULTS["min_coverage"], DEFAULTS["level"], DEFAULTS["n_boot"], DEFAULTS["workers"],
        SEED_DEFAULT)
    assert cmd.fit_options(args) == {"posterior": {"strata": None}, "matrix": {}, "matrix_unconstrained": {}}
    typed = CalibrationSettings()
    assert (typed.folds, typed.seed, typed.workers, typed.methods) == (DEFAULTS["folds"], SEED_DEFAULT,
                                                                       DEFAULTS["workers"], DEFAULTS["methods"])
    conf = yaml.safe_load((PACKAGE_CONF / "calibration" / "default.yaml").read_text(encoding="utf-8"))
    assert {k: conf[k] for k in ("methods", "folds", "workers")} == {k: DEFAULTS[k] for k in ("methods", "folds", "workers")}
    assert conf["seed"] == SEED_DEFAULT


def test_an_unknown_method_on_the_command_line_names_the_registered_ones(tmp_path):
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "metaeval", "simulate", "--human", "h.jsonl", "--method", "ppx",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert res.returncode != 0 and "--method: unknown ppx; expected none, ppi, ppi_pp, regression" in res.stderr
    assert "Traceback" not in res.stderr
