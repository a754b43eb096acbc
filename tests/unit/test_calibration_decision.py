"""The calibration decision (``metaeval.study.calibration_workflow.procedure``, docs/calibration.md) tested directly, on every
branch, with hand-made inputs: per-split errors and taus for :func:`decide`, and stub candidates on a 12-topic x
4-run synthetic matrix for :func:`run_procedure` / :func:`nested` (the splits they are fitted on are recorded).

Branches: cannot decide (too few labelled topics; fewer than 3 runs) with no split computed; raw kept; composite
chosen; a correction chosen (beats the baseline by more than one corrected SE); a correction within one SE, or whose
tau is below raw's beyond noise, not chosen; the strict boundaries of the rule (composite at equal error, a correction
at exactly one SE); the SE is Nadeau & Bengio's corrected resampled SE; splits sized like ``n_L : n_U``; every split,
and every nested re-run, drawn from its own random stream; the one-line note when intervals and points differ.

Hand values: with ``n_fit = 8``, ``n_held = 4`` and ``S = 4`` splits the corrected SE of differences ``d`` is
``sqrt((1/4 + 4/8) s^2_d) = sqrt(0.75 s^2_d)``; for ``d = (-2, 0, -2, 0) / 64``, ``s^2_d = 4/3 / 64^2`` and the SE is
exactly ``1/64`` (the plain ``s_d / sqrt(S)`` would be ``0.577/64``).  Every value below is exact in binary.
"""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.calibration.crossfit import applied_split_sizes, applied_splits, corrected_resampled_se
from metaeval.random_streams import stream
from metaeval.study.calibration_workflow.procedure import cannot_decide, decide, nested, paired, run_procedure
from tests.helpers.crossfit_stubs import METRIC, Recorder, settings, stub_candidates, tiny_data

U = 1 / 64          # one unit of error
FIT, HELD = 8, 4    # corrected SE factor 1/4 + 4/8 = 0.75 with S = 4
FLAT = np.zeros(4)  # a tau equal to raw's on every split


def _err(raw=(0.5, 0.5, 0.5, 0.5), **others):
    return {"raw": np.asarray(raw, dtype=float), **{k: np.asarray(v, dtype=float) for k, v in others.items()}}


def _tau(names, **over):
    return {n: np.asarray(over.get(n, FLAT), dtype=float) for n in names}


def _decide(err, tau=None):
    return decide(err, tau or _tau(err), FIT, HELD)


def _raw_minus(*units):
    return 0.5 + np.asarray(units, dtype=float) * U


# ------------------------------------------------------------------ the SE: Nadeau & Bengio's corrected resampled SE
def test_the_se_is_the_corrected_resampled_se_by_hand():
    d = np.array([-2, 0, -2, 0]) * U
    s2 = np.var(d, ddof=1)
    assert s2 == pytest.approx(4 / 3 * U * U, rel=1e-15)
    assert corrected_resampled_se(d, FIT, HELD) == pytest.approx(np.sqrt((1 / 4 + HELD / FIT) * s2), rel=1e-15)
    assert corrected_resampled_se(d, FIT, HELD) == U
    assert corrected_resampled_se(d, HELD, FIT) == pytest.approx(np.sqrt((1 / 4 + FIT / HELD) * s2), rel=1e-15)
    got = paired(_raw_minus(-2, 0, -2, 0), _raw_minus(0, 0, 0, 0), FIT, HELD)
    assert got == {"mean": -U, "se": U}
    assert np.isnan(corrected_resampled_se(d[:1], FIT, HELD))  # one split: no SE
    assert paired(d[:1], np.zeros(1), FIT, HELD) == {"mean": -2 * U, "se": None}


def test_decide_uses_the_corrected_se_not_the_plain_one_nor_the_swapped_ratio():
    """d = (-5, -1, -5, -1)/128 vs composite: mean -3/128, corrected SE 2/128 -> chosen; with n_fit / n_held swapped
    the SE would be sqrt(12)/128 > 3/128 (not chosen); the plain SE would choose the within-one-SE one below too."""
    comp = np.full(4, 0.25)
    err = _err(composite=comp, ppi=comp + np.array([-5, -1, -5, -1]) / 128)
    sel = _decide(err)
    assert sel["method"] == "ppi"
    assert sel["why"] == ("ppi beats composite by 0.0234 (> one corrected SE 0.0156) and its tau is not below raw's "
                          "beyond noise")


# ------------------------------------------------------------------ rule 1: raw or composite
def test_raw_is_kept_when_composite_is_not_better_and_no_correction_beats_it():
    sel = _decide(_err(composite=_raw_minus(1, 1, 1, 1), ppi=_raw_minus(-2, 0, -2, 0)))
    assert (sel["method"], sel["verdict"]) == ("raw", "no correction beats the baseline")
    assert sel["why"] == ("composite is not better than raw; no correction beats it by more than one corrected SE "
                          "with a tau not below raw's")


def test_composite_at_exactly_raws_error_does_not_replace_raw():
    """Rule 1 is "lower", not "not higher"."""
    assert _decide(_err(composite=_raw_minus(0, 0, 0, 0)))["method"] == "raw"
    assert _decide(_err(composite=_raw_minus(-1, 0, 0, 0)))["method"] == "composite"  # lower by 1/4 unit, no SE needed


def test_composite_is_chosen_when_its_error_is_lower_and_its_tau_not_below_raws_beyond_noise():
    sel = _decide(_err(composite=_raw_minus(-8, -8, -8, -8)))
    assert (sel["method"], sel["verdict"]) == ("composite", "no correction beats the baseline")
    assert sel["why"].startswith("composite's held-out error is 0.1250 below raw's, its tau not below raw's beyond "
                                 "noise; no correction")
    # tau lower than raw's but within one SE (d = (-2, 0, -2, 0) U: mean -U, SE U): still chosen
    tau = _tau(["raw", "composite"], composite=np.array([-2, 0, -2, 0]) * U)
    assert _decide(_err(composite=_raw_minus(-8, -8, -8, -8)), tau)["method"] == "composite"


def test_composite_whose_tau_is_below_raws_beyond_noise_is_not_chosen():
    tau = _tau(["raw", "composite"], composite=np.array([-3, -1, -3, -1]) * U)  # mean -2U, SE U
    sel = _decide(_err(composite=_raw_minus(-8, -8, -8, -8)), tau)
    assert sel["method"] == "raw"
    assert sel["why"].startswith("composite's tau is below raw's beyond noise; ")


# ------------------------------------------------------------------ rule 2: a correction
def test_a_correction_beating_raw_by_more_than_one_se_is_chosen():
    sel = _decide(_err(composite=_raw_minus(1, 1, 1, 1), ppi=_raw_minus(-3, -1, -3, -1)))  # mean -2U, SE U
    assert (sel["method"], sel["verdict"]) == ("ppi", "correction beats the baseline")
    assert sel["why"] == ("ppi beats raw by 0.0312 (> one corrected SE 0.0156) and its tau is not below raw's "
                          "beyond noise")


def test_a_correction_at_exactly_one_se_is_not_chosen():
    """Rule 2 is "by more than one SE": mean -U with SE exactly U is not enough (the analogue of "the win share must
    be exceeded, not reached"); a hair more is."""
    d = _raw_minus(-2, 0, -2, 0)
    assert paired(d, _raw_minus(0, 0, 0, 0), FIT, HELD) == {"mean": -U, "se": U}
    sel = _decide(_err(composite=_raw_minus(1, 1, 1, 1), ppi=d))
    assert (sel["method"], sel["verdict"]) == ("raw", "no correction beats the baseline")
    assert _decide(_err(composite=_raw_minus(1, 1, 1, 1), ppi=_raw_minus(-2.5, -0.5, -2.5, -0.5)))["method"] == "ppi"


def test_a_correction_within_one_se_is_not_chosen():
    sel = _decide(_err(composite=_raw_minus(1, 1, 1, 1), ppi=_raw_minus(-1.5, 0.5, -1.5, 0.5)))  # mean -U/2, SE U
    assert sel["method"] == "raw"


def test_a_correction_is_measured_against_composite_when_composite_is_the_baseline():
    """ppi beats raw by 6U but composite (4U below raw) by only U/2 within one SE U: composite is shown."""
    sel = _decide(_err(composite=_raw_minus(-4, -4, -4, -4), ppi=_raw_minus(-5.5, -3.5, -5.5, -3.5)))
    assert sel["method"] == "composite"
    sel = _decide(_err(composite=_raw_minus(-4, -4, -4, -4), ppi=_raw_minus(-7, -5, -7, -5)))  # 2U below, SE U
    assert sel["method"] == "ppi" and "beats composite by 0.0312" in sel["why"]


def test_a_correction_whose_tau_is_below_raws_beyond_noise_is_not_chosen():
    err = _err(composite=_raw_minus(1, 1, 1, 1), ppi=_raw_minus(-30, -30, -30, -30))
    tau = _tau(err, ppi=np.array([-3, -1, -3, -1]) * U)  # mean -2U, SE U: below beyond noise
    assert _decide(err, tau)["method"] == "raw"
    tau = _tau(err, ppi=np.array([-2, 0, -2, 0]) * U)    # mean -U, SE U: exactly one SE below is not beyond noise
    assert _decide(err, tau)["method"] == "ppi"


def test_of_the_passing_corrections_the_lowest_error_wins_ties_by_name():
    err = _err(composite=_raw_minus(1, 1, 1, 1), ppi=_raw_minus(-3, -1, -3, -1), ppi_pp=_raw_minus(-5, -3, -5, -3),
               regression=_raw_minus(-5, -3, -5, -3))
    assert _decide(err)["method"] == "ppi_pp"  # ppi_pp and regression tie at -4U: by name
    err["regression"] = _raw_minus(-6, -4, -6, -4)
    assert _decide(err)["method"] == "regression"


def test_a_correction_with_one_finite_split_has_no_se_and_is_not_chosen():
    nan = np.nan
    err = _err(composite=_raw_minus(1, 1, 1, 1), ppi=[nan, nan, nan, 0.0])
    assert _decide(err)["method"] == "raw"


# ------------------------------------------------------------------ rule 3: cannot decide, no split computed
def test_cannot_decide_below_min_topics_or_three_runs_or_three_topics():
    assert cannot_decide(10, 3, 10) is None
    assert cannot_decide(9, 3, 10) == "too few human-labelled topics to evaluate a correction (9 < min_topics 10)"
    assert cannot_decide(10, 2, 10) == "too few runs to compare leaderboards (2 < 3)"
    assert cannot_decide(2, 5, 2) is not None and cannot_decide(3, 5, 2) is None  # a split needs 3 topics


@pytest.mark.parametrize("n_topics,n_runs", [(9, 4), (12, 2), (12, 1)])
def test_cannot_decide_shows_composite_and_computes_no_split(n_topics, n_runs):
    data = tiny_data(n_topics=12, n_runs=n_runs)
    rec = Recorder()
    dec = run_procedure(stub_candidates(data, rec), data, np.arange(n_topics), 24, settings(), seed=1, want_ci=False)
    assert dec.choice[METRIC]["method"] == "composite" and dec.choice[METRIC]["verdict"] == "cannot decide"
    assert dec.evaluation is None and dec.n_fit is None and rec.fits == []  # nothing fitted, nothing evaluated


def test_exactly_min_topics_and_three_runs_decide():
    data = tiny_data(n_topics=10, n_runs=3)
    rec = Recorder()
    dec = run_procedure(stub_candidates(data, rec), data, np.arange(10), 0, settings(), seed=1, want_ci=False)
    assert dec.choice[METRIC]["verdict"] != "cannot decide" and dec.evaluation is not None and rec.fits


# ------------------------------------------------------------------ the splits: sizes and streams
def test_split_sizes_mimic_labelled_to_applied_by_hand():
    assert applied_split_sizes(12, 36) == (3, 9)          # share 12/48: round(3)
    assert applied_split_sizes(12, 12) == (6, 6)
    assert applied_split_sizes(10, 1) == (9, 1)           # round(9.09)
    assert applied_split_sizes(12, 0, folds=5) == (10, 2)  # nothing applied: 1 - 1/5, round(9.6)
    assert applied_split_sizes(12, 0, folds=4) == (9, 3)
    assert applied_split_sizes(3, 100) == (2, 1)          # at least 2 to fit
    assert applied_split_sizes(3, 0, folds=100) == (2, 1)  # at least 1 held out


def test_the_procedure_fits_on_splits_of_the_applied_size_from_its_own_stream():
    data = tiny_data()
    rec = Recorder()
    labelled = np.arange(12)
    dec = run_procedure(stub_candidates(data, rec), data, labelled, 36, settings(repeats=6), seed=7, key=("k",),
                        want_ci=False)
    assert (dec.n_fit, dec.n_held) == (3, 9)
    want = applied_splits(labelled, 3, 6, stream(7, "calibration.splits", "k"))
    assert [(a.tolist(), b.tolist()) for a, b in dec.evaluation.splits] == [(a.tolist(), b.tolist()) for a, b in want]
    raw_fits = [f for n, f in rec.fits if n == "raw"]
    assert raw_fits == [tuple(a.tolist()) for a, _ in want]
    assert len(set(raw_fits)) == 6, "splits repeat one another"
    for a, b in dec.evaluation.splits:
        assert len(a) == 3 and len(b) == 9 and not set(a.tolist()) & set(b.tolist())


def test_each_nested_rerun_draws_its_splits_from_its_own_stream():
    """Outer split ``o``'s inner procedure draws from ``stream(seed, "calibration.splits", "nested", o)``: without
    the outer index every inner procedure would permute its topics the same way."""
    data = tiny_data()
    rec = Recorder()
    cands = stub_candidates(data, rec)
    s = settings(repeats=4, nested_splits=3, min_topics=5)
    top = run_procedure(cands, data, np.arange(12), 12, s, seed=3, want_ci=False)
    rec.fits.clear()
    out = nested(cands, data, top, s, seed=3)
    inner = [f for n, f in rec.fits if n == "raw"]
    assert len(inner) == 3 * 4
    for o in range(3):
        A_o, B_o = top.evaluation.splits[o]
        a, _ = applied_split_sizes(len(A_o), len(B_o), s["folds"])
        want = applied_splits(A_o, a, 4, stream(3, "calibration.splits", "nested", o))
        assert inner[4 * o: 4 * o + 4] == [tuple(x.tolist()) for x, _ in want], o
    # positions within each outer fit part differ between outer splits (the same stream would give the same ones)
    pos = [[tuple(np.searchsorted(top.evaluation.splits[o][0], f)) for f in inner[4 * o: 4 * o + 4]] for o in range(3)]
    assert len({tuple(p) for p in pos}) == 3
    assert out[METRIC]["choices"] == ["oracle"] * 3  # the oracle beats composite on every inner evaluation


def test_the_oracle_correction_is_chosen_end_to_end_and_scored_on_the_outer_split():
    data = tiny_data()
    rec = Recorder()
    cands = stub_candidates(data, rec)
    s = settings(repeats=6, nested_splits=2, min_topics=5)
    top = run_procedure(cands, data, np.arange(12), 12, s, seed=5, want_ci=False)
    assert top.choice[METRIC]["method"] == "oracle"
    ev = top.evaluation
    assert np.allclose(ev.err[METRIC]["oracle"], 0.0)
    # raw's whole-track error on split 0, by hand: the judge's mean over A+B vs the human mean there
    A, B = ev.splits[0]
    both = np.concatenate([A, B])
    want = np.abs(data.J[METRIC][both].mean(0) - data.H[METRIC][both].mean(0)).mean()
    assert ev.err[METRIC]["raw"][0] == pytest.approx(want, rel=1e-12)
    out = nested(cands, data, top, s, seed=5)[METRIC]
    assert out["err"].tolist() == ev.err[METRIC]["oracle"][:2].tolist()
    assert out["raw_err"].tolist() == ev.err[METRIC]["raw"][:2].tolist()


# ------------------------------------------------------------------ the note when intervals differ from points
def _record(method):
    from types import SimpleNamespace

    from metaeval.study.calibration_workflow.selection import selection_record

    dec = SimpleNamespace(choice={METRIC: {"method": method, "verdict": "v", "why": "w"}}, evaluation=None,
                          n_fit=None, n_held=None)
    return selection_record(METRIC, dec, None, {}, {"min_topics": 10}, 5, 0)


def test_the_note_says_when_the_interval_method_differs_from_the_point_method():
    from metaeval.study.calibration_workflow.selection import INTERVALS_NAME, recommendation

    sel = _record("composite")
    assert sel["intervals_by"] == "ppi_pp"
    assert sel["intervals_why"] == ("the interval method differs from the point method: points by composite, "
                                    f"intervals by {INTERVALS_NAME} widened to contain the point")
    line = recommendation(METRIC, sel, {})
    assert "(the interval method differs from the point method: each interval is widened to contain its point)" in line
    assert line.endswith(" - w: nothing evaluated, nothing fitted is shown")
    same = _record("ppi_pp")
    assert same["intervals_why"] == f"points and intervals by {INTERVALS_NAME}"
    assert "differs" not in recommendation(METRIC, same, {})
