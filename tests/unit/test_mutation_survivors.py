"""Tests written for the survivors of ``scripts/mutation_check.py`` (docs/development.md, "Mutation check"): each
kills one mutant that the module's own tests let through.  Values are checked against scipy or by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from tests.helpers.crossfit_stubs import OLD_PROCEDURE_ONLY, fold, pred


# ------------------------------------------------------------------ analysis/kendall.py
def test_tau_b_of_two_items_is_plus_or_minus_one():
    """One pair: the tau-b denominator is exactly 1 (kills ``den > 0`` -> ``den > 1`` in ``_div``)."""
    from metaeval.analysis.kendall import tau_a, tau_b, tau_b_batch

    assert tau_b([0.1, 0.2], [0.3, 0.9]) == 1.0 == kendalltau([0.1, 0.2], [0.3, 0.9]).statistic
    assert tau_b([0.1, 0.2], [0.9, 0.3]) == -1.0 and tau_a([0.1, 0.2], [0.9, 0.3]) == -1.0
    assert tau_b_batch(np.array([[0.1, 0.2], [0.5, 0.4]]), np.array([[1.0, 2.0], [1.0, 2.0]])).tolist() == [1.0, -1.0]
    assert np.isnan(tau_b([0.1, 0.1], [0.3, 0.9]))  # a tie on one side: undefined


# ------------------------------------------------------------------ study/calibration/selection.py
@OLD_PROCEDURE_ONLY
def test_held_out_run_tau_is_computed_from_three_runs():
    """A fold with 3 runs has a run-level tau (tau-b of the held-out run scores with the human ones); fewer than 3
    runs give none."""
    from metaeval.study.calibration.selection import held_out
    from types import SimpleNamespace

    truth = [[0.2, 0.5, 0.4], [0.1, 0.3, 0.6]]
    est = [[0.25, 0.45, 0.5], [0.2, 0.1, 0.7]]
    folds = [fold({"none": pred(e), "ppi": pred(e, 0.05)}, t, [k]) for k, (e, t) in enumerate(zip(est, truth))]
    got = held_out([folds], SimpleNamespace(name="ppi", level="score"), "v_strict", data=None, level=0.9)
    want = np.mean([kendalltau(e, t).statistic for e, t in zip(est, truth)])
    assert got["tau"]["run"] == pytest.approx(want, abs=1e-12)
    two = [fold({"none": pred(e[:2]), "ppi": pred(e[:2], 0.05)}, t[:2], [k]) for k, (e, t) in enumerate(zip(est, truth))]
    assert held_out([two], SimpleNamespace(name="ppi", level="score"), "v_strict", data=None, level=0.9)["tau"]["run"] is None


@OLD_PROCEDURE_ONLY
def test_held_out_intervals_below_the_needed_coverage_do_not_qualify():
    """1 repeat x 2 folds x 5 runs, 6 of 10 intervals hold the truth: coverage 0.6 < 0.9 - 2 sqrt(0.09 / 10) = 0.710."""
    from types import SimpleNamespace

    from metaeval.study.calibration.selection import held_out

    hits = [[True, True, True, False, False], [True, True, True, False, False]]
    folds = []
    for k, h in enumerate(hits):
        truth = np.where(np.array(h), 0.55, 0.7)
        folds.append(fold({"none": pred(np.full(5, 0.5)), "ppi": pred(np.full(5, 0.5), 0.1)}, truth, [k]))
    got = held_out([folds], SimpleNamespace(name="ppi", level="score"), "v_strict", data=None, level=0.9)
    assert got["coverage"] == pytest.approx(0.6) and got["coverage_worst_run"] == 0.0
    assert got["coverage_needed"] == pytest.approx(0.9 - 2 * np.sqrt(0.09 / 10))
    assert got["qualifies"] is False


@OLD_PROCEDURE_ONLY
def test_worst_run_coverage_is_each_runs_own_share_over_the_intervals_it_has():
    """Run 0 has an interval in both folds, run 1 in one fold, run 2 in none: run 2 is left out (not 0) and run 1's
    share is over its one interval (not halved)."""
    from types import SimpleNamespace

    from metaeval.calibration.crossfit import Prediction
    from metaeval.study.calibration.selection import held_out

    def run(run0_second_fold_hits: bool):
        folds = []
        for k in range(2):
            est = np.full(3, 0.5)
            lo, hi = est - 0.1, est + 0.1
            lo[2] = hi[2] = np.nan                       # run 2: never an interval
            if k == 0:
                lo[1] = hi[1] = np.nan                   # run 1: an interval in fold 1 only
            truth = np.array([0.55 if (k == 0 or run0_second_fold_hits) else 0.7, 0.55, 0.55])
            folds.append(fold({"none": pred(est), "ppi": Prediction(est=est, lo=lo, hi=hi, se=np.full(3, 0.05))},
                              truth, [k]))
        return held_out([folds], SimpleNamespace(name="ppi", level="score"), "v_strict", data=None, level=0.9)

    every = run(True)
    assert every["coverage"] == 1.0 and every["coverage_worst_run"] == 1.0
    one_miss = run(False)
    assert one_miss["coverage"] == pytest.approx(2 / 3) and one_miss["coverage_worst_run"] == pytest.approx(0.5)


@OLD_PROCEDURE_ONLY
def test_reaching_the_win_share_without_beating_raw_says_so():
    """4 of 5 wins is the win share 0.8 itself: the reason is the margin over raw, not the share."""
    from metaeval.study.calibration.selection import decide

    cands = {"none": {"held_out": {"diff_vs_raw": {"mean": 0.0, "se": 0.0}, "qualifies": False}},
             "ppi": {"held_out": {"diff_vs_raw": {"mean": -0.01, "se": 0.02}, "qualifies": True}},
             "ppi_pp": {"held_out": {"diff_vs_raw": {"mean": -0.01, "se": 0.02}, "qualifies": True}}}
    sel = decide(cands, ["ppi"] * 4 + ["none"], {"diff_vs_raw": {"mean": -0.01, "se": 0.01}}, 0.8, 20, 10)
    assert sel["verdict"] == "unstable: methods within noise"
    assert sel["why"] == "ppi won 4 of 5 repeats but does not beat raw by more than one SE, or the nested error does not"


# ------------------------------------------------------------------ analysis/levels.py
def _long_tables():
    """6 topics x 7 runs of a reference and a noisy candidate (long tables: run_id, qid, metric, value)."""
    import pandas as pd

    rng = np.random.default_rng(35)
    x = rng.random((6, 7)).round(2)
    y = (x + rng.normal(0, 0.15, x.shape)).round(2)
    rows = lambda m: [(f"r{r}", f"q{t}", "v_strict", float(m[t, r])) for t in range(6) for r in range(7)]  # noqa: E731
    cols = ["run_id", "qid", "metric", "value"]
    return pd.DataFrame(rows(x), columns=cols), pd.DataFrame(rows(y), columns=cols)


def test_tau_levels_defaults_are_seed_0_and_95_percent():
    from metaeval.analysis.levels import tau_levels

    ref, cand = _long_tables()
    got = tau_levels(ref, cand, n_boot=200)
    want = tau_levels(ref, cand, n_boot=200, seed=0, alpha=0.05)
    assert (got.seed, got.alpha) == (0, 0.05) and got.ci == want.ci
    assert got.ci != tau_levels(ref, cand, n_boot=200, seed=1).ci  # the seed does move the intervals
    assert tau_levels(ref, cand).n_boot == 0 and tau_levels(ref, cand).ci == {}


def test_levels_from_aligned_bootstraps_for_any_positive_n_boot_and_not_by_default():
    from metaeval.analysis.cells import align
    from metaeval.analysis.levels import levels_from_aligned

    ref, cand = _long_tables()
    al = align(ref, [cand], "v_strict")
    none = levels_from_aligned(al)
    assert none.n_boot == 0 and none.ci == {} and none.seed is None
    one = levels_from_aligned(al, n_boot=1)
    assert one.n_boot == 1 and set(one.ci) == {"run", "topic_avg", "pooled"}
    assert levels_from_aligned(al, n_boot=50).ci == levels_from_aligned(al, n_boot=50, seed=0).ci


def test_tau_levels_as_dict_keeps_both_limits_of_every_interval():
    import json

    from metaeval.analysis.levels import tau_levels

    res = tau_levels(*_long_tables(), n_boot=100)
    d = res.as_dict()
    assert res.top_heavy_ci and d["top_heavy_ci"] == {k: [float(lo), float(hi)] for k, (lo, hi) in res.top_heavy_ci.items()}
    assert d["ci"] == {k: [float(lo), float(hi)] for k, (lo, hi) in res.ci.items()}
    assert all(lo <= hi for lo, hi in d["top_heavy_ci"].values())
    json.dumps(d)


# ------------------------------------------------------------------ report/verdict.py
def test_a_yaml_error_without_a_position_names_no_line(tmp_path):
    """An unreadable character is a YAML reader error (no ``problem_mark``): line 0, "the whole file"."""
    from metaeval.errors import FormatError
    from metaeval.report.verdict import load_thresholds

    p = tmp_path / "t.yaml"
    p.write_bytes(b"metric: v_strict\nmin_run_tau_low: \x07\n")
    with pytest.raises(FormatError) as e:
        load_thresholds(p)
    assert e.value.line == 0 and str(p) in str(e.value) and "not valid YAML" in str(e.value)
    p.write_text("metric: [v_strict\n", encoding="utf-8")  # a parser error has a position: its 1-based line
    with pytest.raises(FormatError) as e:
        load_thresholds(p)
    assert e.value.line == 2
