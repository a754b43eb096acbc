"""The simulation harness on the NIST labels with a few replications (the 200-rep study is a CLI run)."""

import numpy as np
import pytest

from metaeval.calibration.harness import run_study
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
            assert 0 <= f["coverage_worst_run"] <= f["coverage"] <= 1
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


def test_bad_inputs(nist_labels):
    with pytest.raises(ConfigError):
        run_study(nist_labels, kinds=("resampled",), reps=1)
    with pytest.raises(ConfigError):
        run_study(nist_labels, kinds=("fig6",), reps=1, holdout=0.99)


def test_summarize_kind_matches_hand_computed_figures():
    """bias, RMSE, mean |per-run bias|, bias cut, coverage (overall and worst run) and CI width from 3 replications
    x 2 runs worked out by hand (this replaces a check that RMSE >= |bias|, which holds for any numbers)."""
    from metaeval.calibration.harness import summarize_kind

    truth = np.array([[0.5, 0.4], [0.5, 0.4], [0.5, 0.4]])
    raw = {"est": truth - 0.1, "lo": truth - 0.2, "hi": truth, "truth": truth}  # always 0.1 low
    est = truth + np.array([[0.1, 0.0], [-0.1, 0.0], [0.0, 0.3]])
    good = {"est": est, "lo": est - 0.05, "hi": est + 0.05, "truth": truth}
    figs = summarize_kind({"none": raw, "m": good}, np.random.default_rng(0), n_boot=20)
    m = figs["m"]
    e = [0.1, 0.0, -0.1, 0.0, 0.0, 0.3]
    assert m["bias"] == pytest.approx(sum(e) / 6)
    assert m["rmse"] == pytest.approx((sum(x * x for x in e) / 6) ** 0.5)
    assert m["mean_abs_bias"] == pytest.approx((0.0 + 0.1) / 2)  # per-run biases 0.0 and 0.1
    assert m["bias_cut"] == pytest.approx(1 - 0.05 / 0.1)
    assert m["coverage"] == pytest.approx(3 / 6) and m["coverage_worst_run"] == pytest.approx(1 / 3)  # run 2: 1 of 3
    assert m["mean_ci_width"] == pytest.approx(0.1)
    assert figs["none"]["bias"] == pytest.approx(-0.1) and figs["none"]["rmse"] == pytest.approx(0.1)
    assert figs["none"]["coverage"] == pytest.approx(1.0)


def test_command_lists_the_same_kinds():
    from metaeval.commands.simulate import JUDGE_KINDS as cli_kinds
    from metaeval.simulation import JUDGE_KINDS

    assert cli_kinds == JUDGE_KINDS


def test_real_judge_kind_splits_topics_without_replacement(nist_labels, monkeypatch):
    """The real-judge kind draws a simple random split: no topic twice, train and test disjoint, 25% held out
    (resampling with replacement duplicated topics and made every interval too narrow)."""
    import metaeval.calibration.harness as hz
    from metaeval.simulation import simulate_judge

    seen = []
    real = hz._fit_apply

    def spy(method, judge, human, train, test, *a, **k):
        seen.append((np.asarray(train), np.asarray(test), len(judge.qids)))
        return real(method, judge, human, train, test, *a, **k)

    monkeypatch.setattr(hz, "_fit_apply", spy)
    run_study(nist_labels, kinds=("resampled",), reps=3, methods=("ppi",), real_judge=simulate_judge(nist_labels, seed=1))
    assert len(seen) == 6
    for train, test, n in seen:
        assert n == 21 and len(test) == 5 and len(train) == 16
        both = np.concatenate([train, test])
        assert len(np.unique(both)) == len(both) == n
