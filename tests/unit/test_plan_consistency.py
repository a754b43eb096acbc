"""Judge self-consistency, soft vs hard calibration, budget and the plan report section."""

import numpy as np
import pytest

from metaeval.errors import ConfigError
from metaeval.planning import budget, consistency
from metaeval.simulation import resolve_confusion


def test_flip_stats_hand_example():
    codes = np.array([[0, 0, 1], [0, 1, 1], [0, 1, 2]])   # k = 3 draws of 3 labels
    st = consistency.flip_stats(codes)
    # label 0: unanimous; labels 1 and 2: counts (1, 2) -> agree 2*1/(3*2) = 1/3 -> flip 2/3
    assert st["flip_rate"] == pytest.approx((0 + 2 / 3 + 2 / 3) / 3)
    assert st["non_unanimous"] == pytest.approx(2 / 3)
    assert st["by_modal_label"]["not_support"]["labels"] == 1
    # FAILED is its own class
    assert consistency.flip_stats(np.array([[-1], [0]]))["flip_rate"] == pytest.approx(1.0)


def test_sampling_judge_keeps_the_marginal_confusion_and_alpha_sets_consistency(nist_labels):
    C = resolve_confusion("paper-fig6-edits")
    lab = nist_labels
    from metaeval.simulation import labels_to_codes

    h = labels_to_codes(lab.labels["support"].astype(object).to_numpy())
    for alpha, lo, hi in ((0.05, 0.0, 0.08), (1e4, None, None)):
        sets = consistency.simulate_sampling_judge(lab, 4, alpha=alpha, seed=1)
        _, codes = consistency.sample_codes(sets)
        counts = np.zeros((3, 3))
        for c in codes:
            np.add.at(counts, (h[h >= 0], c[h >= 0]), 1)
        emp = counts / counts.sum(1, keepdims=True)
        # marginal = Figure 6 whatever alpha; 4 SE with draws of a label fully correlated (n = labels per row)
        n_h = np.bincount(h[h >= 0], minlength=3)[:, None]
        assert (np.abs(emp - C) < 4 * np.sqrt(C * (1 - C) / n_h) + 1e-3).all()
        flip = consistency.flip_stats(codes)["flip_rate"]
        if lo is not None:
            assert lo <= flip <= hi                  # near one-hot propensities: self-consistent
        else:                                        # independent draws: 1 - sum_c C[h, c]^2, label-weighted
            share = np.bincount(h[h >= 0], minlength=3) / (h >= 0).sum()
            assert flip == pytest.approx(float(share @ (1 - (C ** 2).sum(1))), abs=0.02)


def test_sample_codes_needs_matching_samples(nist_labels):
    lab = nist_labels.subset(qids=nist_labels.qids[:2])
    sets = consistency.simulate_sampling_judge(lab, 2, seed=0)
    with pytest.raises(ConfigError):
        consistency.sample_codes(sets[:1])
    short = sets[1].subset(qids=lab.qids[:1])
    with pytest.raises(ConfigError, match="lacks"):
        consistency.sample_codes([sets[0], short])


def test_tau_spread_against_hand_values():
    ref = np.array([0.9, 0.5, 0.4, 0.1])
    draws = np.array([[0.8, 0.6, 0.3, 0.2],    # same order: tau 1
                      [0.6, 0.8, 0.3, 0.2]])   # one swap of 6 pairs: tau 4/6
    out = consistency.tau_spread(draws, ref)
    assert out["vs_reference"]["per_draw"] == pytest.approx([1.0, 4 / 6])
    assert out["vs_reference"]["sd"] == pytest.approx(np.std([1.0, 4 / 6], ddof=1))
    assert out["between_draws"]["mean"] == pytest.approx(4 / 6)


def test_crossfit_calibration_recovers_a_constant_shift():
    rng = np.random.default_rng(0)
    H = rng.uniform(0.3, 0.7, size=(20, 5))
    out = consistency.crossfit_calibration(H, {"exact": H, "shifted": H - 0.1}, methods=("ppi",), folds=4, repeats=3)
    ex, sh = out["variants"]["exact"], out["variants"]["shifted"]
    assert ex["none"]["mae"] == pytest.approx(0.0, abs=1e-12)
    assert sh["none"]["mae"] == pytest.approx(0.1)
    assert sh["ppi"]["mae"] == pytest.approx(0.0, abs=1e-9)     # PPI removes a constant bias exactly
    with pytest.raises(ConfigError):
        consistency.crossfit_calibration(H[:3], {"x": H[:3]}, folds=5)


def test_budget_hours_hand_values():
    assert budget.hours(10, 630, 15.0) == pytest.approx(10 * 630 * 15 / 3600)
    assert budget.hours(4, 100, 36.0, 1.0) == pytest.approx(4 * (1.0 + 1.0))
    s = budget.budget_settings({"nugget_hours_per_topic": "manual"})
    assert s["nugget_hours_per_topic"] == 2.5 and "assumption" in s["seconds_source"]
    with pytest.raises(ConfigError):
        budget.budget_settings({"nugget_hours_per_topic": "lots"})
    with pytest.raises(ConfigError):
        budget.hours(1, 10, -1.0)


def _plan_dict():
    row = lambda n, h: {"n": n, "hours": n * 2.0, "analytic_half": {"median": h}, "empirical_half": {"median": h * 0.98},
                        "plugin_half": {"median": h * 1.1}, "plugin_coverage": {"median": 0.94}, "tau_mean": 0.9,
                        "tau_lo": 0.8, "tau_hi": 0.97, "swap": {"0.02": {"empirical": 0.05, "analytic": 0.06}}}
    return {"schema": "metaeval.plan/1", "metric": "v_strict", "metric_name": "V_strict", "level": 0.95,
            "target_half_width": 0.02, "reference": "nist <b>", "judge": "j", "seed": 0,
            "pilot": {"topics": 21, "runs": 43, "judge_topics": 21, "total_topics": 301, "labels_per_topic": 626.6},
            "budget": {"seconds_per_label": 15.0, "seconds_source": "assumption", "nugget_hours_per_topic": 0.0},
            "curves": {"v_strict": {"reps": 100, "gaps": [0.02], "rows": [row(2, 0.2), row(10, 0.05)]}},
            "agreement": {"line": "ok"}, "next_topics": {"strategy": "confusion", "note": "n", "list": [
                {"rank": 1, "qid": "q<1>", "size": 1.2, "pi_at_rank": 0.1, "hours_cumulative": 2.6}]},
            "replay": None, "consistency": None, "recommendation": "for +/-0.02 ... about 120 topics"}


def test_plan_section_renders_from_the_dict_only(tmp_path):
    from metaeval.report import plan_section as ps

    plan = _plan_dict()
    md = ps.render_markdown(plan)
    assert md.startswith("**for") and "about 120 topics" in md and "| 10 | 20 | 0.050 | 0.049 |" in md and "q<1>" in md
    html = ps.render_html(plan)
    assert "q&lt;1&gt;" in html and "nist &lt;b&gt;" in html and "<b>" not in html
    out = ps.write_plot(plan, tmp_path / "c.svg")
    assert out.read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_plan_section_heading_and_plot_link_are_options():
    from metaeval.report import plan_section as ps

    plan = _plan_dict()
    assert ps.render_markdown(plan, heading=True).startswith("## Assessor plan")
    assert "](study/plan_curves.svg)" in ps.render_markdown(plan)
    assert "<img" not in ps.render_html(plan, plot=None) and "<h2>" not in ps.render_html(plan)


def test_crossfit_se_is_a_topic_bootstrap_se_close_to_the_spread_over_new_topic_sets():
    """The MAE's SE must describe new topics: compare with the sd of the MAE over independent topic sets drawn
    from the same world (topic effects shared by the runs, a per-run judge bias); the SE over repeats on the
    same topics (the former "+-") is far below it."""
    def world(rng, t=16, r=6):
        topic = rng.normal(0.5, 0.15, (t, 1))
        H = np.clip(topic + rng.normal(0, 0.05, (t, r)), 0, 1)
        J = np.clip(H - 0.05 + rng.normal(0, 0.08, (t, 1)) + rng.normal(0, 0.05, (t, r)), 0, 1)
        return H, J

    truth = [consistency.crossfit_calibration(*(lambda h, j: (h, {"j": j}))(*world(np.random.default_rng(100 + i))),
                                              methods=("ppi",), folds=4, repeats=2, n_boot=0)["variants"]["j"]["ppi"]["mae"]
             for i in range(40)]
    sd_true = float(np.std(truth, ddof=1))
    H, J = world(np.random.default_rng(7))
    out = consistency.crossfit_calibration(H, {"j": J}, methods=("ppi",), folds=4, repeats=10, seed=3, n_boot=150)
    got = out["variants"]["j"]["ppi"]
    assert out["n_boot"] >= 140 and "topic bootstrap" in out["se_method"]
    assert 0.5 * sd_true < got["se"] < 2.0 * sd_true
    assert got["se_repeats"] < 0.5 * got["se"]
    again = consistency.crossfit_calibration(H, {"j": J}, methods=("ppi",), folds=4, repeats=10, seed=3, n_boot=150)
    assert again["variants"]["j"]["ppi"]["se"] == got["se"]  # the seed fixes the resamples


def test_crossfit_paired_difference_has_its_own_se():
    rng = np.random.default_rng(2)
    H = rng.uniform(0.3, 0.7, size=(16, 5))
    J = H - 0.1 + rng.normal(0, 0.05, H.shape)
    out = consistency.crossfit_calibration(H, {"a": J, "b": J + 0.02}, methods=("ppi",), folds=4, repeats=3, n_boot=60)
    b, a = out["variants"]["b"]["ppi"], out["variants"]["a"]["ppi"]
    assert out["first_variant"] == "a" and "diff_vs_first" not in a
    assert b["diff_vs_first"] == pytest.approx(b["mae"] - a["mae"])
    assert b["diff_vs_first"] == pytest.approx(0.0, abs=1e-12) and b["diff_se"] == pytest.approx(0.0, abs=1e-12)  # PPI absorbs a shift
    raw = out["variants"]["b"]["none"]
    assert raw["diff_se"] < raw["se"]  # pairing removes the topics' shared variation
