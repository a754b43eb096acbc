"""The simulation harness on the NIST labels with a few replications (the 200-rep study is a CLI run)."""

import numpy as np
import pytest

from metaeval.calibration.harness import resample_topics, run_study
from metaeval.calibration.pairs import pairs_from_labelset
from metaeval.errors import ConfigError
from metaeval.simulation import simulate_structured


@pytest.fixture(scope="module")
def study(nist_labels):
    return run_study(nist_labels, kinds=("fig6", "run_bias"), reps=8, seed=5, methods=["ppi", "matrix"])


def test_raw_judge_is_biased_and_ppi_corrects(study):
    raw = study["kinds"]["fig6"]["none"]
    assert raw["bias"] < -0.08 and raw["mean_abs_bias"] > 0.08
    ppi = study["kinds"]["fig6"]["ppi"]
    assert ppi["bias_cut"] > 0.5 and 0.8 <= ppi["coverage"] <= 1.0
    for kind in study["kinds"].values():
        for f in kind.values():
            assert f["rmse"] >= abs(f["bias"]) and 0 <= f["coverage_worst_run"] <= f["coverage"] <= 1
            assert set(f["mc_se"]) >= {"bias_cut", "rmse", "coverage", "coverage_worst_run", "mean_ci_width"}
            assert 0 < f["mean_ci_width"] <= 1


def test_run_bias_breaks_the_pooled_matrix(study):
    """A judge that favours some runs: one pooled confusion matrix cannot remove per-run bias, PPI's per-run
    rectifier can."""
    rb = study["kinds"]["run_bias"]
    assert rb["ppi"]["mean_abs_bias"] < rb["matrix"]["mean_abs_bias"]


def test_structured_kinds_shift_strictness(nist_labels):
    hp = pairs_from_labelset(nist_labels)
    rng = np.random.default_rng(0)
    run = hp.pair_run()
    codes = simulate_structured(hp.sup, run, hp.ans_topic[hp.ans], hp.ans_len[hp.ans], "run_bias", rng)
    share = np.bincount(run, weights=codes == 2) / np.bincount(run)
    base = simulate_structured(hp.sup, run, hp.ans_topic[hp.ans], hp.ans_len[hp.ans], "fig6", rng)
    share0 = np.bincount(run, weights=base == 2) / np.bincount(run)
    assert np.std(share - share0) > 2 * np.std(share0 - np.bincount(run, weights=hp.sup == 2) / np.bincount(run)) / 2
    with pytest.raises(ConfigError):
        simulate_structured(hp.sup, run, hp.ans_topic[hp.ans], hp.ans_len[hp.ans], "nope", rng)


def test_resample_topics_keeps_topic_blocks(nist_labels):
    hp = pairs_from_labelset(nist_labels)
    q, h = resample_topics(hp, hp.sup, np.array([0, 0, 3]))
    assert len(q.qids) == 3 and q.n_answers == 2 * (hp.ans_topic == 0).sum() + (hp.ans_topic == 3).sum()
    assert (h == q.sup).all() and q.ans.max() == q.n_answers - 1


def test_bad_inputs(nist_labels):
    with pytest.raises(ConfigError):
        run_study(nist_labels, kinds=("resampled",), reps=1)
    with pytest.raises(ConfigError):
        run_study(nist_labels, kinds=("fig6",), reps=1, holdout=0.99)
