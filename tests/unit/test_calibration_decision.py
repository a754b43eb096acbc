"""The calibration decision (``metaeval.study.calibration.selection``) tested directly, on every branch: too few
topics, stable (raw, or a correction that beats raw by more than one SE with a nested error below raw's), unstable
(no method wins ``win_share`` of the repeats, or the winner is within one SE of raw, or its nested error is not
below raw's), and where the leaderboard's intervals come from (the chosen method when it qualifies, else PPI++ with
the reason).  The study-level fixtures of ``test_calibration_study.py`` have 5 topics and never get past the first
branch; the end-to-end tests at the bottom use 12 labelled NIST topics (above ``min_topics``) and reach a stable
correction whose intervals come from another method (method != intervals_by).

Every expected value is written out by hand from the rule in the module docstring.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.helpers.crossfit_stubs import _old_procedure, errors_fold

if not _old_procedure():
    pytest.skip("the repeated-cross-fitting decision was replaced by l30a's calibration procedure: tests to be "
                "rewritten for it (issue 35 follow-up)", allow_module_level=True)

from metaeval.study.calibration.selection import (coverage_tolerance, decide, mean_se, nested_errors, recommendation,
                                                  repeat_winners)  # noqa: E402

FALLBACK_VERDICT = "unstable: methods within noise"
TOO_FEW = "too few human-labelled topics to choose a method"


def _cand(mean=None, se=None, *, qualifies=True, intervals="topic-clustered t", coverage=0.95, needed=0.9):
    return {"held_out": {"diff_vs_raw": {"mean": mean, "se": se}, "qualifies": qualifies, "intervals": intervals,
                         "coverage": coverage, "coverage_needed": needed}}


def _cands(**over):
    base = {"none": _cand(0.0, 0.0, qualifies=False, coverage=0.6), "ppi": _cand(-0.05, 0.01),
            "ppi_pp": _cand(-0.04, 0.01), "posterior": _cand(-0.06, 0.01, qualifies=False,
                                                             intervals="point estimates only", coverage=None, needed=None)}
    base.update(over)
    return base


NESTED_BETTER = {"diff_vs_raw": {"mean": -0.02, "se": 0.01}}


def _decide(winners, cands=None, nested=NESTED_BETTER, win_share=0.8, n_topics=20, min_topics=10):
    return decide(cands or _cands(), winners, nested, win_share, n_topics, min_topics)


# ------------------------------------------------------------------ too few topics
def test_below_min_topics_no_method_is_chosen_even_when_one_wins_every_repeat():
    sel = _decide(["ppi"] * 5, n_topics=9)
    assert (sel["method"], sel["verdict"]) == ("ppi_pp", TOO_FEW)
    assert sel["why"] == "9 human-labelled topics < min_topics 10"
    assert sel["wins"] == {"ppi": 5}
    assert sel["intervals_by"] == "ppi_pp" and sel["intervals_why"] == "ppi_pp's held-out coverage meets the nominal level"


def test_exactly_min_topics_is_enough_to_decide():
    sel = _decide(["ppi"] * 5, n_topics=10)
    assert (sel["method"], sel["verdict"]) == ("ppi", "stable")


# ------------------------------------------------------------------ stable
def test_stable_correction_beats_raw_by_more_than_one_se_with_nested_error_below_raws():
    sel = _decide(["ppi"] * 5)
    assert (sel["method"], sel["verdict"]) == ("ppi", "stable")
    assert sel["why"] == ("ppi won 5 of 5 repeats and beats raw by 0.0500 (> one SE 0.0100); the nested error is "
                          "below raw's")
    assert sel["intervals_by"] == "ppi" and sel["intervals_why"] == "ppi's held-out coverage meets the nominal level"


def test_raw_winning_is_stable_without_any_se_test():
    """Raw needs no margin over itself: its diff is 0 +- 0 and the nested error may be worse than raw's."""
    sel = _decide(["none"] * 4 + ["ppi"], nested={"diff_vs_raw": {"mean": 0.01, "se": 0.01}})
    assert (sel["method"], sel["verdict"], sel["why"]) == ("none", "stable", "none won 4 of 5 repeats")
    # raw gives no interval that qualifies here: PPI++'s are shown, with the reason
    assert sel["intervals_by"] == "ppi_pp"
    assert sel["intervals_why"] == "none's held-out coverage 0.60 is below 0.90"


def test_a_missing_se_counts_as_zero():
    sel = _decide(["ppi"] * 5, _cands(ppi=_cand(-0.001, None)))
    assert (sel["method"], sel["verdict"]) == ("ppi", "stable")
    assert "(> one SE 0.0000)" in sel["why"]


# ------------------------------------------------------------------ unstable
def test_winner_within_one_se_of_raw_is_unstable_and_ppi_pp_is_used():
    """diff -0.01 +- 0.02 with 5 of 5 wins: -0.01 + 0.02 > 0, so the winner does not beat raw by more than one SE."""
    sel = _decide(["ppi"] * 5, _cands(ppi=_cand(-0.01, 0.02)))
    assert (sel["method"], sel["verdict"]) == ("ppi_pp", FALLBACK_VERDICT)
    assert sel["why"] == ("ppi won 5 of 5 repeats but does not beat raw by more than one SE, or the nested error "
                          "does not")
    assert sel["intervals_by"] == "ppi_pp" and sel["intervals_why"] == "ppi_pp's held-out coverage meets the nominal level"
    weak = _decide(["ppi"] * 5, _cands(ppi=_cand(-0.01, 0.02), ppi_pp=_cand(-0.04, 0.01, qualifies=False, coverage=0.8)))
    assert weak["intervals_by"] == "ppi_pp"
    assert weak["intervals_why"] == ("PPI++ is the fallback; no method qualifies: PPI++ intervals shown (held-out "
                                     "coverage 0.80)")


def test_a_margin_of_exactly_one_se_is_not_enough():
    sel = _decide(["ppi"] * 5, _cands(ppi=_cand(-0.02, 0.02)))  # mean + se == 0: not < 0
    assert sel["verdict"] == FALLBACK_VERDICT


def test_nested_error_not_below_raws_is_unstable():
    for nested in ({"diff_vs_raw": {"mean": 0.0, "se": 0.01}}, {"diff_vs_raw": {"mean": 0.003, "se": 0.01}},
                   {"diff_vs_raw": {"mean": None, "se": None}}):
        sel = _decide(["ppi"] * 5, nested=nested)
        assert (sel["method"], sel["verdict"]) == ("ppi_pp", FALLBACK_VERDICT), nested


def test_a_winner_without_a_held_out_difference_is_unstable():
    sel = _decide(["ppi"] * 5, _cands(ppi=_cand(None, None)))
    assert sel["verdict"] == FALLBACK_VERDICT


def test_no_method_reaching_the_win_share_is_unstable_and_says_who_won_most():
    sel = _decide(["ppi", "ppi", "ppi", "none", "posterior"])
    assert (sel["method"], sel["verdict"]) == ("ppi_pp", FALLBACK_VERDICT)
    assert sel["why"] == "no method won at least 80% of the 5 repeats (most: ppi, 3)"
    assert sel["wins"] == {"ppi": 3, "none": 1, "posterior": 1}  # most wins first, then by name


def test_tied_wins_are_ordered_by_name_and_the_first_is_the_top():
    sel = _decide(["ppi", "none", "ppi", "none"], win_share=0.5)
    assert list(sel["wins"].items()) == [("none", 2), ("ppi", 2)]
    assert (sel["method"], sel["verdict"]) == ("none", "stable")


def test_win_share_one_needs_every_repeat():
    assert _decide(["ppi"] * 9 + ["none"], win_share=1.0)["verdict"] == FALLBACK_VERDICT
    assert _decide(["ppi"] * 10, win_share=1.0)["verdict"] == "stable"


# ------------------------------------------------------------------ where the intervals come from
def test_a_chosen_label_level_method_takes_its_intervals_from_ppi_pp():
    """method != intervals_by: posterior is chosen (point estimates only) and PPI++ gives the intervals."""
    sel = _decide(["posterior"] * 5)
    assert (sel["method"], sel["verdict"], sel["intervals_by"]) == ("posterior", "stable", "ppi_pp")
    assert sel["intervals_why"] == "posterior gives point estimates only (label-level intervals ignore topic clustering)"


def test_a_chosen_method_below_coverage_takes_ppi_pps_intervals_and_says_when_those_miss_too():
    cands = _cands(ppi=_cand(-0.05, 0.01, qualifies=False, coverage=0.85, needed=0.9),
                   ppi_pp=_cand(-0.04, 0.01, qualifies=False, coverage=0.8))
    sel = _decide(["ppi"] * 5, cands)
    assert (sel["method"], sel["intervals_by"]) == ("ppi", "ppi_pp")
    assert sel["intervals_why"] == ("ppi's held-out coverage 0.85 is below 0.90; no method qualifies: PPI++ intervals "
                                    "shown (held-out coverage 0.80)")


# ------------------------------------------------------------------ the parts: mean_se, tolerance, winners, nested
def test_mean_se_is_the_mean_over_all_folds_and_the_mean_of_the_per_repeat_fold_ses():
    a, b = np.array([0.1, 0.2, 0.3, np.nan]), np.array([0.2, 0.4])
    got = mean_se([a, b])
    assert got["mean"] == pytest.approx((0.1 + 0.2 + 0.3 + 0.2 + 0.4) / 5)
    se_a = np.std([0.1, 0.2, 0.3], ddof=1) / math.sqrt(3)
    se_b = np.std([0.2, 0.4], ddof=1) / math.sqrt(2)
    assert got["se"] == pytest.approx((se_a + se_b) / 2)
    assert mean_se([np.array([np.nan])]) == {"mean": None, "se": None}
    assert mean_se([np.array([0.3])]) == {"mean": pytest.approx(0.3), "se": None}


def test_coverage_tolerance_hand_values():
    assert coverage_tolerance(0.95, 100) == pytest.approx(2 * math.sqrt(0.95 * 0.05 / 100))
    assert coverage_tolerance(0.9, 0) == pytest.approx(2 * math.sqrt(0.09))  # no interval: one, not a division by 0


def test_repeat_winner_is_the_lowest_mean_fold_error_ties_to_raw_then_by_name():
    reps = [[errors_fold({"none": 0.1, "ppi": 0.05, "regression": 0.07}), errors_fold({"none": 0.1, "ppi": 0.09, "regression": 0.02})],
            [errors_fold({"none": 0.04, "ppi": 0.04, "regression": 0.05})],     # tie with raw: raw
            [errors_fold({"none": 0.09, "ppi": 0.03, "regression": 0.03})]]     # tie of two corrections: by name
    assert repeat_winners(reps, ["none", "ppi", "regression"], "v_strict") == ["regression", "none", "ppi"]


def test_nested_errors_take_each_folds_nested_choice():
    reps = [[errors_fold({"none": 0.1, "ppi": 0.05}, nested="ppi"), errors_fold({"none": 0.2, "ppi": 0.3}, nested="none")],
            [errors_fold({"none": 0.1, "ppi": 0.05})]]  # no nested choice recorded: raw
    errs, choices = nested_errors(reps, "v_strict")
    assert choices == [["ppi", "none"], ["none"]]
    assert [e.tolist() for e in errs] == [pytest.approx([0.05, 0.2]), pytest.approx([0.1])]


def test_recommendation_names_the_verdict_and_the_fallback():
    cands = {k: {"held_out": {"tau": {"run": t}, "coverage": 0.9, "coverage_worst_run": 0.7}}
             for k, t in (("none", 0.5), ("ppi_pp", 0.6), ("ppi", 0.7))}
    sel = {**_decide(["ppi"] * 5, _cands(ppi=_cand(-0.01, 0.02))), "repeats": 5, "folds": 4, "n_topics": 20,
           "nested_mae": {"mean": 0.05, "se": 0.01}, "raw_mae": {"mean": 0.06, "se": None}}
    line = recommendation("v_strict", sel, cands)
    assert line.startswith("V_strict: unstable: methods within noise - ppi won 5 of 5 repeats but does not beat raw")
    assert "nested error 0.0500 +- 0.0100 vs raw 0.0600 (5 x 4-fold over 20 human-labelled topics; wins per repeat: ppi 5)" in line
    assert "leaderboard by PPI++" in line and "held-out run tau raw 0.500 -> ppi_pp 0.600" in line


# ------------------------------------------------------------------ end to end, above min_topics
@pytest.fixture(scope="module")
def twelve(nist_labels):
    """12 human-labelled NIST topics x 12 runs (above min_topics 10), and 4 more topics the judge alone labels."""
    from metaeval.simulation import simulate_judge

    reference = nist_labels.subset(qids=nist_labels.qids[:12], run_ids=nist_labels.run_ids[:12], name="nist12")
    judged = nist_labels.subset(qids=nist_labels.qids[:16], run_ids=nist_labels.run_ids[:12], name="nist16")
    return reference, judged


SETTINGS = {"folds": 4, "inner_folds": 2, "repeats": 5, "metrics": ["v_strict"], "n_boot": 50,
            "methods": ["ppi", "regression", "posterior"], "workers": 1}


def _check_consistent(res):
    """The selection agrees with the candidates' own held-out figures (recomputed here from the rule)."""
    sel, cands = res["selection"], res["candidates"]
    assert sum(sel["wins"].values()) == sel["repeats"] == SETTINGS["repeats"]
    top, n_top = next(iter(sel["wins"].items()))
    if sel["verdict"] == "stable" and sel["method"] != "none":
        d = cands[sel["method"]]["held_out"]["diff_vs_raw"]
        assert sel["method"] == top and n_top / sel["repeats"] >= 0.8
        assert d["mean"] + d["se"] < 0 and sel["nested_diff_vs_raw"]["mean"] < 0
        assert sel["held_out_mae"]["mean"] < sel["raw_mae"]["mean"]
    qual = cands[sel["method"]]["held_out"]["qualifies"]
    assert sel["intervals_by"] == (sel["method"] if qual else "ppi_pp")


def test_end_to_end_stable_label_level_choice_with_ppi_pp_intervals(twelve):
    """The paper's Figure-6 judge (independent label flips: what the label-level methods assume) on 12 topics:
    posterior wins 4 of 5 repeats and beats raw, so it is chosen; it has point estimates only, so the leaderboard's
    intervals are PPI++'s, and posterior's own estimate is shown beside them on the 4 judge-only topics."""
    from metaeval.simulation import simulate_judge
    from metaeval.study.calibration import calibrate_study

    reference, judged = twelve
    res = calibrate_study(reference, simulate_judge(judged, seed=1, name="fig6"), SETTINGS, seed=0)
    sel = res["selection"]
    assert (sel["method"], sel["verdict"], sel["intervals_by"]) == ("posterior", "stable", "ppi_pp")
    assert sel["wins"]["posterior"] >= 4 and sel["n_topics"] == 12
    assert res["candidates"]["posterior"]["held_out"]["intervals"] == "point estimates only"
    _check_consistent(res)
    rows = res["leaderboard"]["rows"]
    assert all(r["n_judge_only"] > 0 and r["posterior_judge_only"] is not None for r in rows)
    assert "posterior_judge_only" in res["leaderboard"]["columns"]
    assert res["recommendation"].startswith("V_strict: use posterior")
    # the same data with win_share 1.0: 4 of 5 is not enough, PPI++ with the unstable verdict
    strict = calibrate_study(reference, simulate_judge(judged, seed=1, name="fig6"), {**SETTINGS, "win_share": 1.0}, seed=0)
    sel = strict["selection"]
    assert (sel["method"], sel["verdict"]) == ("ppi_pp", FALLBACK_VERDICT)
    assert sel["why"].startswith("no method won at least 100% of the 5 repeats (most: posterior, 4)")
    _check_consistent(strict)


def test_end_to_end_a_lenient_judge_gets_a_stable_score_level_correction(twelve):
    """A judge that raises most not-supports: raw is off by ~0.3 in V_strict; a score-level correction wins every
    repeat by far more than one SE, and its own intervals qualify."""
    from metaeval.simulation import simulate_judge
    from metaeval.study.calibration import calibrate_study

    reference, judged = twelve
    lenient = [[0.3, 0.2, 0.5], [0.0, 0.3, 0.7], [0.0, 0.0, 1.0]]
    res = calibrate_study(reference, simulate_judge(judged, confusion=lenient, seed=1, name="lenient"), SETTINGS, seed=0)
    sel = res["selection"]
    assert sel["verdict"] == "stable" and sel["method"] in ("ppi_pp", "ppi", "regression")
    assert sel["wins"] == {sel["method"]: 5}
    assert sel["intervals_by"] == sel["method"]
    assert res["candidates"]["none"]["held_out"]["mae"]["mean"] > 0.2
    _check_consistent(res)
