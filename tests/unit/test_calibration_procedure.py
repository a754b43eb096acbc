"""The one calibration procedure (issue 30): decided at the applied size, composite beside raw, what is recommended is
what is shown, the nested evaluation re-runs exactly that procedure, intervals for the human score whatever is
chosen (per-run bootstrap-t, widened to the shown point), cells that cannot decide compute no split."""

import numpy as np
import pytest

from metaeval.calibration.crossfit import applied_split_sizes, corrected_resampled_se
from metaeval.calibration.scorelevel import _t, bootstrap_t_bounds, moderated_variance
from metaeval.simulation import simulate_judge
from metaeval.study.calibration_workflow import calibrate_study


@pytest.fixture(scope="module")
def small(nist_labels):
    return nist_labels.subset(qids=nist_labels.qids[:12], run_ids=nist_labels.run_ids[:12], name="nist12")


# --------------------------------------------------------------------------- sizes and noise
def test_split_sizes_mimic_labelled_to_judge_only():
    assert applied_split_sizes(10, 11) == (5, 5)      # 10 * 10 / 21 = 4.8 -> fit 5, held out 5 (not 8 / 2)
    assert applied_split_sizes(5, 16) == (2, 3)       # never fewer than 2 to fit
    assert applied_split_sizes(20, 1) == (19, 1)
    assert applied_split_sizes(21, 0, folds=5) == (17, 4)  # nothing applied: fit share 1 - 1/folds


def test_corrected_resampled_se_by_hand():
    d = np.array([0.1, -0.2, 0.05, 0.3])
    want = np.sqrt((1 / 4 + 5 / 5) * np.var(d, ddof=1))   # Nadeau & Bengio: (1/S + n_test/n_train) s^2
    assert corrected_resampled_se(d, 5, 5) == pytest.approx(want)
    assert np.isnan(corrected_resampled_se(np.array([0.1]), 5, 5))


# --------------------------------------------------------------------------- bootstrap-t
def _bt_by_loop(D, est, n_u, level, rng, B):
    """Independent re-implementation: explicit resampled samples, same multinomial draws."""
    n = len(D)
    p = np.full(n, 1.0 / n)
    cl = rng.multinomial(n, p, size=B)
    cu = rng.multinomial(n_u, p, size=B)
    T = []
    for b in range(B):
        L = np.repeat(D, cl[b])
        U = np.repeat(D, cu[b])
        s = max(L.var(ddof=1), 1e-4)
        T.append((L.mean() - U.mean()) / (np.sqrt(s) * np.sqrt(1 / n + 1 / n_u)))
    se = D.std(ddof=1) * np.sqrt(1 / n + 1 / n_u)
    a = (1 - level) / 2
    return (np.clip(est - np.quantile(T, 1 - a) * se, 0, 1), np.clip(est - np.quantile(T, a) * se, 0, 1))


def test_bootstrap_t_matches_a_direct_loop():
    rng = np.random.default_rng(0)
    D = rng.exponential(0.1, size=(9, 1)) - 0.05
    lo, hi = bootstrap_t_bounds(D, np.array([0.5]), np.array([14]), 0.95, np.random.default_rng(7), n_boot=400)
    wl, wh = _bt_by_loop(D[:, 0], 0.5, 14, 0.95, np.random.default_rng(7), 400)
    assert lo[0] == pytest.approx(wl) and hi[0] == pytest.approx(wh)


def _pool_coverage(n_l, n_u, reps, union=True, seed=0):
    """Per-run coverage of the interval for mean_U H (= est + mean_U D - mean_L D) over ``reps`` draws: 10 runs with
    normal differences (sd 0.02 .. 0.3) and one skewed run the judge fails on 15% of topics (D = -0.6 there)."""
    from metaeval.calibration.scorelevel import apply_score_method

    rng = np.random.default_rng(seed)
    R = 11
    sd = np.r_[np.linspace(0.02, 0.3, R - 1), 0.02]
    hits = np.zeros(R)
    for _ in range(reps):
        def draw(n):
            D = rng.normal(0, 1, (n, R)) * sd
            D[:, -1] += np.where(rng.random(n) < 0.15, -0.6, 0.0)
            return D

        DL, DU = draw(n_l), draw(n_u)
        # a PPI++ model with lambda 0 (H = D, J = 0.5): estimate 0.5 + mean_L D, target 0.5 + mean_U D
        model = {"method": "ppi_pp", "lambda": 0.0, "rectifier": (0.5 + DL.mean(0)).tolist(),
                 "var": moderated_variance(DL.var(0, ddof=1), np.full(R, float(n_l))).tolist(),
                 "n_l": [float(n_l)] * R, "extra": [0.0] * R, "resid": DL.tolist()}
        if union:
            r = apply_score_method(model, np.full((n_u, R), 0.5), 0.95, rng=rng, n_boot=499)
            lo, hi = r.lo, r.hi
        else:  # the run's own bootstrap-t alone
            lo, hi = bootstrap_t_bounds(DL, 0.5 + DL.mean(0), np.full(R, n_u), 0.95, rng, n_boot=499)
        target = 0.5 + DU.mean(0)
        hits += (lo <= target) & (target <= hi)
    return hits / reps


def test_interval_holds_a_skewed_run_that_its_own_topics_may_not_show():
    """10 labelled topics, 30 applied.  The run's own bootstrap-t alone leaves the skewed run near 0.8 (its 10
    topics show no failure in 0.85^10 = 20% of samples); the union with the moderated-variance t holds it.
    Planted bug: bootstrap-t alone fails here; the symmetric t alone fails the asymmetry test below."""
    own = _pool_coverage(10, 30, 300, union=False)
    both = _pool_coverage(10, 30, 300, union=True)
    assert own[-1] < 0.85, own
    assert both[-1] >= 0.85 and both.min() >= 0.85 and both.mean() >= 0.93, both


def test_bootstrap_t_is_asymmetric_toward_a_skewed_sample():
    """A sample with a visible one-sided tail (two failures of -0.6 among 10 topics): the interval extends further
    on the side the tail points to, and further than the symmetric t on the same variance."""
    D = np.r_[np.linspace(-0.01, 0.01, 8), -0.6, -0.6][:, None]
    est = np.array([0.5])
    lo, hi = bootstrap_t_bounds(D, est, np.array([30]), 0.95, np.random.default_rng(0), n_boot=1999)
    half = _t(0.95, 9) * D.std(ddof=1) * np.sqrt(1 / 10 + 1 / 30)
    # error = mean_L D - mean_U D: a labelled sample that under-represents the tail puts mean_L D above mean_U D,
    # so the human score on U may lie far below the estimate: the interval reaches down, beyond the symmetric t
    assert est[0] - lo[0] > half
    assert (est[0] - lo[0]) > 1.5 * (hi[0] - est[0])


def test_small_variance_run_bootstrap_t_uses_its_own_spread():
    """The bootstrap-t part is the run's own: a run with small differences gets a narrower bootstrap-t than the
    moderated variance's t (which widens it toward the pool)."""
    rng = np.random.default_rng(3)
    D = np.column_stack([rng.normal(0, 0.02, 12)] + [rng.normal(0, 0.2, 12) for _ in range(5)])
    lo, hi = bootstrap_t_bounds(D, np.full(6, 0.5), np.full(6, 12), 0.95, np.random.default_rng(1), n_boot=999)
    mod = moderated_variance(D.var(axis=0, ddof=1), np.full(6, 12.0))
    t_half = _t(0.95, 11) * np.sqrt(mod[0] * (2 / 12))
    assert 0 < (hi[0] - lo[0]) < t_half


def test_constant_run_has_no_bootstrap_t_and_keeps_the_guarded_interval():
    from metaeval.calibration.scorelevel import apply_score_method

    D = np.column_stack([np.zeros(8), np.random.default_rng(0).normal(0, 0.2, 8)])
    lo, hi = bootstrap_t_bounds(D, np.array([0.5, 0.5]), np.array([8, 8]), 0.95, np.random.default_rng(0))
    assert np.isnan(lo[0]) and hi[1] > lo[1]
    model = {"method": "ppi_pp", "lambda": 0.0, "rectifier": [0.5, 0.5], "n_l": [8.0, 8.0], "extra": [0.0, 0.0],
             "var": moderated_variance(D.var(0, ddof=1), np.full(2, 8.0)).tolist(), "resid": D.tolist()}
    r = apply_score_method(model, np.full((8, 2), 0.5), 0.95, rng=np.random.default_rng(0))
    assert np.all(r.hi - r.lo > 0)  # never a zero-width interval


# --------------------------------------------------------------------------- the procedure
def _biased(small, seed=1):
    """A judge that is much stricter than the humans (a correction can matter)."""
    from metaeval.simulation import resolve_confusion

    conf = resolve_confusion("paper-fig6-edits").copy()
    conf[2] = [0.5, 0.3, 0.2]  # supported nuggets are mostly missed
    return simulate_judge(small, confusion=conf, seed=seed, name="strict")


ST = {"repeats": 6, "nested_splits": 3, "metrics": ["v_strict"], "n_boot": 50, "n_boot_t": 199,
      "methods": ["ppi", "regression"], "workers": 1}


def test_recommended_is_shown_and_nested_is_the_same_procedure(small):
    """Finding 4: the line, the leaderboard, its ranks and intervals come from one decision, and each nested choice
    is what the whole procedure (same function, settings, sizes and fallback) chooses on that split's fit topics.
    Planted bug: a nested rule that differs (e.g. the old 'one SE vs raw, else raw' on K folds, or the top-level
    choice copied in) fails the comparison."""
    from metaeval.study.calibration_workflow.data import CalibrationData, score_candidate
    from metaeval.study.calibration_workflow.procedure import nested, run_procedure
    from metaeval.study.calibration_workflow.defaults import resolve_settings

    judge = _biased(small)
    s = resolve_settings({**ST, "min_topics": 5})
    res = calibrate_study(small, judge, s, seed=0)
    sel, lb = res["selection"], res["leaderboard"]
    assert lb["estimated_by"] == sel["method"] and f"leaderboard by " in res["recommendation"]
    assert "none recommended" not in res["recommendation"]
    assert res["candidates"]["raw"]["status"] == "ok" and "none" not in res["candidates"]
    # the nested evaluation, recomputed by hand from the procedure itself
    data = CalibrationData(small, judge, s["metrics"])
    cands = [score_candidate(n, data, s["metrics"], s["level"], 0, s["n_boot_t"]) for n in s["methods"]]
    top = run_procedure(cands, data, data.labelled, len(data.judge_only), s, 0, want_ci=True)
    assert top.choice["v_strict"]["method"] == sel["method"]
    nest = nested(cands, data, top, s, 0)["v_strict"]
    for o in range(s["nested_splits"]):
        A, B = top.evaluation.splits[o]
        inner = run_procedure(cands, data, A, len(B), s, 0, ("nested", o), want_ci=False)
        assert nest["choices"][o] == inner.choice["v_strict"]["method"]
        assert nest["err"][o] == top.evaluation.err["v_strict"][nest["choices"][o]][o]
    assert sel["nested_choices"] == {c: nest["choices"].count(c) for c in set(nest["choices"])}
    # decided at the applied size: 12 labelled, nothing judge-only -> fit 1 - 1/5 of them
    assert (res["settings"]["fit_topics"], res["settings"]["held_out_topics"]) == applied_split_sizes(12, 0)


def test_choice_never_worse_than_raw_beyond_noise(small):
    """Whatever is shown has held-out error below raw's (or is raw) and a tau not below raw's by more than one SE."""
    for seed in (0, 1):
        res = calibrate_study(small, _biased(small, seed), {**ST, "min_topics": 5}, seed=seed)
        sel, cands = res["selection"], res["candidates"]
        m = sel["method"]
        if m != "raw":
            assert cands[m]["held_out"]["diff_vs_raw"]["mean"] < 0
            t = cands[m]["held_out"]["tau_diff_vs_raw"]
            assert t["mean"] >= -(t["se"] or 0)


def test_perfect_judge_keeps_raw(small):
    """A judge equal to the humans: composite and every correction tie raw at zero error: raw is shown (named raw)."""
    res = calibrate_study(small, small.subset(name="same"), {**ST, "min_topics": 5}, seed=0)
    assert res["selection"]["method"] == "raw"
    assert res["recommendation"].startswith("V_strict: leaderboard by the raw judge")
    for row in res["leaderboard"]["rows"]:
        assert row["human_estimate"] == pytest.approx(row["human_labelled"])


def test_shown_interval_contains_the_point_and_is_for_the_human_score(small):
    """Half labelled: the interval shown beside a kept raw or composite point is PPI++'s interval for the human
    score widened to the point - never the judge's own topic-bootstrap interval."""
    reference = small.subset(qids=small.qids[:6], name="half")
    judge = _biased(small)
    res = calibrate_study(reference, judge, {**ST, "min_topics": 5}, seed=0)
    lb = res["leaderboard"]
    for row in lb["rows"]:
        lo, hi = row["human_estimate_ci"]
        assert lo <= row["human_estimate"] <= hi
        assert [lo, hi] != row["judge_score_ci"]
        lo_u, hi_u = row["corrected_judge_only_ci"]
        assert lo_u <= row["corrected_judge_only"] <= hi_u
    if res["selection"]["method"] != "ppi_pp":
        assert "differs from the point method" in res["recommendation"]


def test_cell_that_cannot_decide_computes_no_split(small):
    """Issue 34: with fewer human-labelled topics than min_topics nothing is cross-fitted (only the fits on every
    labelled topic that the leaderboard and the saved model use); composite is shown with PPI++ intervals."""
    from metaeval.study.calibration_workflow import data as data_mod

    calls = []
    orig = data_mod.score_candidate

    def spy(*a, **k):
        c = orig(*a, **k)
        fit = c.fit

        def counted(train):
            calls.append(len(train))
            return fit(train)

        c.fit = counted
        return c

    reference = small.subset(qids=small.qids[:5], name="five")
    data_mod.score_candidate, saved = spy, data_mod.score_candidate
    try:
        res = calibrate_study(reference, _biased(small), {**ST, "min_topics": 10}, seed=0)
    finally:
        data_mod.score_candidate = saved
    sel = res["selection"]
    assert sel["method"] == "composite" and sel["verdict"] == "cannot decide" and sel["splits"] == 0
    assert set(calls) == {5}  # every fit is on all 5 labelled topics: no split was evaluated
    assert "nothing evaluated" in res["recommendation"]
    assert all(r["human_estimate_ci"] is not None for r in res["leaderboard"]["rows"])
