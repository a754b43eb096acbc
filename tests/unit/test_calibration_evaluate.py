"""``procedure.evaluate`` and ``selection.held_out`` on a tiny exact matrix (every score a multiple of 1/8, so every
whole-track sum is exact in binary): the interval candidate's coverage at its boundary, the levels on the first three
splits only, a candidate that cannot fit recorded (never raw), and the held-out figures by hand.  Written for the
survivors of ``scripts/mutation_check.py`` on the merged procedure (docs/development.md, "Mutation check")."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.calibration.crossfit import Candidate, Prediction, applied_splits
from metaeval.study.calibration_workflow.procedure import evaluate
from tests.helpers.crossfit_stubs import METRIC, TinyData

T, R = 8, 4


def exact_data() -> TinyData:
    rng = np.random.default_rng(35)
    H = rng.integers(0, 9, (T, R)) / 8
    J = np.clip(H + 1 / 8, 0, 1)
    return TinyData({METRIC: H}, {METRIC: J}, [f"r{i}" for i in range(R)])


def cands(data: TinyData, calls: list, broken: bool = False):
    """raw / composite (judge mean), and ``ppi_pp`` (the interval method): its point is the human mean on the applied
    topics and its interval ``[point, point]`` (zero width: the truth sits on both limits), given only when asked."""

    def mean(X, B):
        return X[METRIC][B].mean(axis=0)

    def point(name, X, uses_labels=True):
        def apply(_m, B, _ci):
            est = mean(X, B)
            nan = np.full(R, np.nan)
            return {METRIC: Prediction(est=est, lo=nan, hi=nan, se=nan, answers=X[METRIC][B])}
        return Candidate(name, "score", lambda A: None, apply, uses_labels=uses_labels)

    def pp_fit(A):
        calls.append("fit")
        return "full"

    def pp_fit_point(A):
        calls.append("fit_point")
        return "point"

    def pp_apply(model, B, ci):
        est = mean(data.H, B)
        if ci and model == "full":
            return {METRIC: Prediction(est=est, lo=est.copy(), hi=est.copy(), se=np.full(R, 1 / 16))}
        nan = np.full(R, np.nan)
        return {METRIC: Prediction(est=est, lo=nan, hi=nan, se=nan)}

    out = [point("raw", data.J, False), point("composite", data.J),
           Candidate("ppi_pp", "score", pp_fit, pp_apply, fit_point=pp_fit_point)]
    if broken:
        def fail(A):
            raise ValueError("singular")
        out.append(Candidate("regression", "score", fail, lambda m, B, ci: {}))
    return out


def _evaluate(data, cs, n=5):
    splits = applied_splits(np.arange(T), 6, n, np.random.default_rng(1))
    return evaluate(cs, data, [METRIC], splits, 6, 2, want_ci=True)


def test_interval_candidate_is_fitted_with_intervals_and_a_truth_on_its_limits_is_covered():
    data, calls = exact_data(), []
    ev = _evaluate(data, cands(data, calls))
    assert calls == ["fit"] * 5  # the interval method's full fit, never its point-only one, when intervals are wanted
    cover = ev.cover[METRIC]
    assert cover["ppi_pp"].shape == (5, R) and np.all(cover["ppi_pp"] == 1.0)
    assert np.all(ev.width[METRIC]["ppi_pp"] == 0.0)  # lo == truth == hi: covered (<= at both limits)
    # raw's point (the judge's, 1/8 above on the applied topics) is above the interval: widened to contain it
    assert np.all(cover["raw"] == 1.0) and np.all(ev.width[METRIC]["raw"] > 0)


def test_levels_are_computed_on_the_first_three_splits_only():
    data = exact_data()
    ev = _evaluate(data, cands(data, []))
    assert len(ev.levels[METRIC]["raw"]["topic_avg"]) == 3 and len(ev.levels[METRIC]["raw"]["pooled"]) == 3
    assert ev.levels[METRIC]["ppi_pp"]["topic_avg"] == []  # no per-answer values: no levels


def test_a_candidate_that_cannot_fit_is_recorded_not_hidden_and_raw_is_kept():
    data = exact_data()
    ev = _evaluate(data, cands(data, [], broken=True))
    assert ev.failed == {"regression": "ValueError: singular"}
    assert ev.names == ["raw", "composite", "ppi_pp"]


def test_raw_that_cannot_fit_raises():
    data = exact_data()
    cs = cands(data, [])
    cs[0] = Candidate("raw", "score", lambda A: (_ for _ in ()).throw(ValueError("no judge")), cs[0].apply,
                      uses_labels=False)
    with pytest.raises(ValueError, match="no judge"):
        _evaluate(data, cs)


def test_held_out_figures_by_hand():
    from metaeval.study.calibration_workflow.selection import coverage_tolerance, held_out

    data = exact_data()
    ev = _evaluate(data, cands(data, []))
    h = held_out(ev, "ppi_pp", METRIC, 0.9, "score")
    assert h["mae"]["mean"] == 0.0 and h["coverage"] == 1.0 and h["coverage_worst_run"] == 1.0
    assert h["wins"] == 5 and h["splits"] == 5 and (h["fit_topics"], h["held_out_topics"]) == (6, 2)
    assert h["coverage_needed"] == pytest.approx(0.9 - 2 * np.sqrt(0.9 * 0.1 / R), abs=1e-15)
    assert coverage_tolerance(0.9, R) == pytest.approx(2 * np.sqrt(0.09 / 4), abs=1e-15)
    assert h["qualifies"] is True and h["zero_width"] == 5 * R
    raw = held_out(ev, "raw", METRIC, 0.9, "score")
    want = np.mean([np.abs(data.J[METRIC][np.r_[a, b]].mean(0) - data.H[METRIC][np.r_[a, b]].mean(0)).mean()
                    for a, b in ev.splits])
    assert raw["mae"]["mean"] == pytest.approx(want, abs=1e-15) and raw["wins"] == 0
    assert raw["diff_vs_raw"]["mean"] == 0.0 and h["diff_vs_raw"]["mean"] == pytest.approx(-want, abs=1e-15)
    # coverage below the needed share does not qualify; the worst run is that run's own share
    ev.cover[METRIC]["raw"] = np.ones((5, R))
    ev.cover[METRIC]["raw"][:, 0] = [1, 0, np.nan, 0, np.nan]
    low = held_out(ev, "raw", METRIC, 0.9, "score")
    assert low["coverage"] == pytest.approx(16 / 18) and low["coverage_worst_run"] == pytest.approx(1 / 3)
    assert low["coverage_needed"] == pytest.approx(0.9 - 2 * np.sqrt(0.09 / 4))
    ev.cover[METRIC]["raw"][:, 0] = [0, np.nan, np.nan, np.nan, np.nan]  # one interval only: that run's share is 0
    assert held_out(ev, "raw", METRIC, 0.9, "score")["coverage_worst_run"] == 0.0
    ev.cover[METRIC]["raw"][:, 1:3] = 0  # 6 of 18: below 0.6
    assert held_out(ev, "raw", METRIC, 0.9, "score")["qualifies"] is False


def test_held_out_boundaries_point_text_zero_width_and_coverage_exactly_needed():
    from metaeval.study.calibration_workflow.selection import coverage_tolerance, held_out

    data = exact_data()
    ev = _evaluate(data, cands(data, []))
    assert coverage_tolerance(0.9, 1) == pytest.approx(2 * np.sqrt(0.09), abs=1e-15)  # one interval, not max(n, 2)
    assert coverage_tolerance(0.9, 0) == coverage_tolerance(0.9, 1)
    assert held_out(ev, "ppi_pp", METRIC, 0.9, "score")["point"] == "point estimate"
    assert held_out(ev, "ppi_pp", METRIC, 0.9, "label")["point"] == ("point estimate (label-level: its own intervals "
                                                                      "are not used)")
    ev.width[METRIC]["raw"] = np.full((5, R), 0.1)
    ev.width[METRIC]["raw"][0, :2] = 0.0
    assert held_out(ev, "raw", METRIC, 0.9, "score")["zero_width"] == 2
    # level 0.5 over 4 runs: tolerance 2 sqrt(0.25 / 4) = 0.5, so coverage 0 is exactly the share needed (>=)
    ev.cover[METRIC]["raw"] = np.zeros((5, R))
    h = held_out(ev, "raw", METRIC, 0.5, "score")
    assert h["coverage_needed"] == 0.0 and h["coverage"] == 0.0 and h["qualifies"] is True


def _selection(ev, method):
    from types import SimpleNamespace

    from metaeval.study.calibration_workflow.selection import held_out, selection_record

    cs = {n: {"held_out": held_out(ev, n, METRIC, 0.9, "score")} for n in ev.names}
    dec = SimpleNamespace(choice={METRIC: {"method": method, "verdict": "v", "why": "w"}}, evaluation=ev,
                          n_fit=ev.n_fit, n_held=ev.n_held)
    return selection_record(METRIC, dec, None, cs, {"min_topics": 5}, T, 0), cs


def test_beats_raw_only_for_a_shown_method_other_than_raw_whose_error_is_lower():
    data = exact_data()
    ev = _evaluate(data, cands(data, []))
    assert _selection(ev, "ppi_pp")[0]["beats_raw"] is True
    assert _selection(ev, "raw")[0]["beats_raw"] is False
    ev.err[METRIC]["composite"] = ev.err[METRIC]["raw"].copy()  # equal error: a difference of 0 does not beat raw
    assert _selection(ev, "composite")[0]["beats_raw"] is False


def test_the_recommendation_line_gives_error_tau_and_coverage_of_what_is_shown_vs_raw():
    from metaeval.study.calibration_workflow.selection import recommendation

    data = exact_data()
    ev = _evaluate(data, cands(data, []))
    sel, cs = _selection(ev, "ppi_pp")
    line = recommendation(METRIC, sel, cs)
    raw_tau, pp_tau = cs["raw"]["held_out"]["tau"]["run"], cs["ppi_pp"]["held_out"]["tau"]["run"]
    assert f"run tau raw {raw_tau:.3f} -> ppi_pp {pp_tau:.3f}" in line
    assert "5 splits of 8 human-labelled topics, fit 6 / held out 2" in line
    assert "intervals shown: held-out coverage 1.00, worst run 1.00" in line and "below the nominal" not in line
