"""The sequential early stop of the nested runs' splits (metaeval.study.calibration_workflow.sequential): the choice it
stops on is the full repeats' choice, over many seeds, and it does stop early."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.study.calibration_workflow.procedure import decide
from metaeval.study.calibration_workflow.sequential import MIN_SPLITS, _band, settled

S = 20


def _stop(err, tau, n_fit, n_held):
    """The first prefix length at which settled() holds (S if never)."""
    for s in range(1, S + 1):
        if settled({k: v[:s] for k, v in err.items()}, {k: v[:s] for k, v in tau.items()}, S, n_fit, n_held):
            return s
    return S


def _scenario(rng):
    """Per-split errors and taus of raw, composite and three corrections, with effects drawn around the rule's
    thresholds (differences of the order of their corrected SE)."""
    n_fit, n_held = int(rng.integers(8, 60)), int(rng.integers(4, 50))
    sd = rng.uniform(0.002, 0.02)
    se1 = sd * np.sqrt(1 / S + n_held / n_fit)
    common = rng.normal(0.05, sd, S)
    err = {"raw": common + rng.normal(0, sd, S)}
    tau = {"raw": 0.7 + rng.normal(0, 0.05, S)}
    for name in ("composite", "ppi", "ppi_pp", "regression"):
        err[name] = err["raw"] + rng.normal(rng.uniform(-3, 1.5) * se1, sd, S)
        tau[name] = tau["raw"] + rng.normal(rng.uniform(-2, 2) * 0.05 * np.sqrt(1 / S + n_held / n_fit), 0.05, S)
    return err, tau, n_fit, n_held


def _choice(err, tau, n_fit, n_held, s):
    d = decide({k: v[:s] for k, v in err.items()}, {k: v[:s] for k, v in tau.items()}, n_fit, n_held)
    return d["method"], d["verdict"]


def test_the_early_choice_is_the_full_choice_over_many_random_scenarios():
    rng = np.random.default_rng(20261202)
    stops, wrong = [], 0
    for _ in range(3000):
        err, tau, a, b = _scenario(rng)
        s = _stop(err, tau, a, b)
        stops.append(s)
        wrong += _choice(err, tau, a, b, s) != _choice(err, tau, a, b, S)
    assert wrong <= 3, f"{wrong} of 3000 early choices differ from the full ones"  # <= 0.1%, scenarios at the edge
    assert np.mean(stops) < 0.9 * S and np.mean(np.array(stops) < S) > 0.5  # and it saves splits, even here
    assert min(stops) >= MIN_SPLITS


def test_a_comparison_at_its_threshold_never_settles_and_a_clear_one_does():
    d_edge = np.array([0.01, -0.01] * 5)
    assert _band(d_edge, 0, S, 40, 10, 3.0, MIN_SPLITS) is None
    d_clear = np.linspace(-0.11, -0.09, 10)
    assert _band(d_clear, 1, S, 40, 10, 3.0, MIN_SPLITS) == -1
    assert _band(d_clear[:MIN_SPLITS - 1], 1, S, 40, 10, 3.0, MIN_SPLITS) is None  # too few splits
    assert _band(np.zeros(10), 0, S, 40, 10, 3.0, MIN_SPLITS) is None  # exactly at the threshold


def test_a_correction_near_one_se_keeps_the_splits_going():
    rng = np.random.default_rng(1)
    n_fit, n_held = 40, 10
    err = {"raw": 0.05 + rng.normal(0, 0.01, S)}
    d = rng.normal(0, 0.01, S)
    d = d - d.mean()
    se = np.sqrt((1 / S + n_held / n_fit) * d.var(ddof=1))
    err["ppi"] = err["raw"] + d - se  # beats raw by exactly one corrected SE over all S splits
    tau = {k: np.full(S, 0.7) for k in err}
    assert _stop(err, tau, n_fit, n_held) > S // 2


@pytest.fixture(scope="module")
def small_track():
    from benchmarks.bench_grid import synthetic_track
    from metaeval.testing.relabel import judge_like

    human = synthetic_track(topics=20, runs=8, nuggets=5, seed=3)
    return human, [judge_like(human, name=f"j{k}", shift=k) for k in range(2)]


def test_nested_choices_with_the_early_stop_equal_the_full_repeats_over_many_seeds(small_track):
    """The whole procedure on a small, noisy synthetic track (20 topics, 8 runs; inner splits of 13 : 3 topics),
    every method, two judges x three calibration seeds x ten outer splits x two metrics: the inner choices of the
    nested evaluation with the early stop against all 20 repeats.  At most one of the 120 may differ (measured:
    1, a last split four SDs out; 0 of 60 on the full-track benchmark), the nested figures are equal wherever
    the choices are, and the stop saves fits."""
    from metaeval.study.calibration_workflow.data import CalibrationData, label_candidate, score_candidate
    from metaeval.study.calibration_workflow.procedure import nested, run_procedure
    from metaeval.study.calibration_workflow.defaults import SCORE_LEVEL, resolve_settings
    import metaeval.study.calibration_workflow.procedure as proc

    human, judges = small_track
    s = resolve_settings({"workers": 1, "metrics": ["v_strict", "v"], "nested_splits": 10})
    fits = {"fast": 0, "full": 0}
    mode = ["full"]
    real = proc._one_split

    def counting(cands, *a, **k):
        fits[mode[0]] += len(cands)
        return real(cands, *a, **k)

    proc._one_split = counting
    wrong = total = 0
    try:
        for judge in judges:
            data = CalibrationData(human, judge, s["metrics"])
            cands = [score_candidate(n, data, s["metrics"], s["level"], 0, 199) if n in SCORE_LEVEL
                     else label_candidate(n, data, s["metrics"], s["level"], {}, 0) for n in s["methods"]]
            for seed in range(3):
                top = run_procedure(cands, data, data.labelled, 0, s, seed, want_ci=False)
                mode[0] = "fast"
                fast = nested(cands, data, top, s, seed, sequential=True)
                mode[0] = "full"
                full = nested(cands, data, top, s, seed, sequential=False)
                for m in s["metrics"]:
                    for o, (a, b) in enumerate(zip(fast[m]["choices"], full[m]["choices"])):
                        total += 1
                        wrong += a != b
                        if a == b:
                            assert fast[m]["verdicts"][o] == full[m]["verdicts"][o]
                            assert fast[m]["err"][o] == full[m]["err"][o] and fast[m]["tau"][o] == full[m]["tau"][o]
    finally:
        proc._one_split = real
    assert total == 120 and wrong <= 1, f"{wrong} of {total} inner choices differ"
    assert fits["fast"] < 0.95 * (fits["full"] - 6 * 20 * len(s["methods"]))  # fewer candidate fits than all 20
