"""Tau at run / topic / pooled level, checked against independent scipy computations on the NIST file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metaeval.analysis.bootstrap import topic_weights
from metaeval.analysis.cells import align, to_long
from metaeval.analysis.levels import LevelEngine, tau_levels
from metaeval.analysis.pooled import PooledKernel
from metaeval.scoring import METRICS, score_answers


def relabel(labels):
    """The deterministic judge-like perturbation (``metaeval.testing.relabel.judge_like``)."""
    from metaeval.testing.relabel import judge_like

    return judge_like(labels, name="perturbed")


@pytest.fixture(scope="module")
def pair(nist_labels):
    return nist_labels, relabel(nist_labels)


def scipy_levels(ref: pd.DataFrame, cand: pd.DataFrame, metric: str):
    m = ref[["run_id", "qid", metric]].merge(cand[["run_id", "qid", metric]], on=["run_id", "qid"], suffixes=("_r", "_c"))
    runs = m.groupby("run_id")[[f"{metric}_r", f"{metric}_c"]].mean()
    run = stats.kendalltau(runs.iloc[:, 0], runs.iloc[:, 1]).statistic
    per = [stats.kendalltau(g[f"{metric}_r"], g[f"{metric}_c"]).statistic for _, g in m.groupby("qid")]
    per = [t for t in per if not np.isnan(t)]
    pooled = stats.kendalltau(m[f"{metric}_r"], m[f"{metric}_c"]).statistic
    return run, float(np.mean(per)), pooled, len(per)


@pytest.mark.parametrize("metric", METRICS)
def test_three_levels_equal_scipy_on_nist(pair, metric):
    ref, cand = pair
    r, c = score_answers(ref), score_answers(cand)
    res = tau_levels(r, c, metric=metric, n_boot=1000, seed=1)  # default CI: centered
    run, topic, pooled, used = scipy_levels(r, c, metric)
    assert res.ci_method == "centered"
    assert res.run == pytest.approx(run, abs=1e-9)
    assert res.topic_avg == pytest.approx(topic, abs=1e-9)
    assert res.pooled == pytest.approx(pooled, abs=1e-9)
    assert (res.n_runs, res.n_topics, res.n_cells) == (45, 21, 927)
    assert res.n_topics_used == used and res.n_topics_skipped == 21 - used
    for lvl in ("run", "topic_avg", "pooled"):
        lo, hi = res.ci[lvl]
        assert lo < getattr(res, lvl) < hi, (lvl, lo, hi)
    # the plain percentile interval: fine at the per-topic and pooled levels; at run level the resampled tau is
    # biased down (fewer distinct topics -> noisier run means), so that interval sits below the estimate while it
    # still brackets the bootstrap mean - the reason the default is the recentred interval.
    pct = tau_levels(r, c, metric=metric, n_boot=1000, seed=1, ci_method="percentile")
    for lvl in ("topic_avg", "pooled"):
        assert pct.ci[lvl][0] < getattr(pct, lvl) < pct.ci[lvl][1]
    lo, hi = pct.ci["run"]
    assert lo < pct.boot_mean["run"] < hi and pct.boot_mean["run"] < pct.run
    assert res.ci["run"][1] - res.ci["run"][0] == pytest.approx(hi - lo, abs=0.02)


def test_labelset_long_and_wide_inputs_agree(pair):
    ref, cand = pair
    a = tau_levels(ref, cand, "a_strict")
    b = tau_levels(to_long(score_answers(ref)), score_answers(cand), "A_strict")
    assert a.as_dict() == b.as_dict()


def test_bootstrap_replicates_equal_explicit_resampling(pair):
    ref, cand = pair
    al = align(to_long(ref), [to_long(cand)], "v_strict")
    w = topic_weights(len(al.topics), 3, seed=5)
    rng = np.random.default_rng(5)
    idx = rng.integers(0, len(al.topics), size=(3, len(al.topics)))  # the same draws topic_weights made
    assert np.array_equal(w, np.stack([np.bincount(r, minlength=len(al.topics)) for r in idx]))
    eng = LevelEngine(al.x, al.y, "b")
    reps = eng.levels(w)
    for b, draw in enumerate(idx):
        xs, ys = al.x[draw], al.y[draw]
        ok = ~np.isnan(xs)
        assert reps["pooled"][b] == pytest.approx(stats.kendalltau(xs[ok], ys[ok]).statistic, abs=1e-9)
        with np.errstate(invalid="ignore"):
            mx, my = np.nanmean(xs, axis=0), np.nanmean(ys, axis=0)
        assert reps["run"][b] == pytest.approx(stats.kendalltau(mx, my).statistic, abs=1e-9)
        per = np.array([stats.kendalltau(xs[t][ok[t]], ys[t][ok[t]]).statistic for t in range(len(draw))])
        assert reps["topic_avg"][b] == pytest.approx(np.nanmean(per), abs=1e-9)
    ap = PooledKernel(al.x, al.y, "ap").tau(w[:1], "ap")[0]
    from metaeval.analysis.kendall import tau_ap

    xs, ys = al.x[idx[0]], al.y[idx[0]]
    ok = ~np.isnan(xs)
    assert ap == pytest.approx(tau_ap(xs[ok], ys[ok]), abs=1e-9)


def test_dropped_cells_and_skipped_topics(pair):
    ref, cand = pair
    r, c = score_answers(ref), score_answers(cand)
    first_topic = sorted(r["qid"].unique())[0]
    c = c[~((c["qid"] == first_topic) & (c["run_id"].isin(sorted(c["run_id"].unique())[:5])))].copy()
    last_topic = sorted(r["qid"].unique())[-1]
    c.loc[c["qid"] == last_topic, "v_strict"] = 0.25  # constant on one topic -> tau-b undefined there
    extra = pd.DataFrame({"run_id": ["ghost"], "qid": [first_topic], "v_strict": [0.5]})
    res = tau_levels(r, pd.concat([c, extra], ignore_index=True), "v_strict")
    n_first = int(((r["qid"] == first_topic) & r["run_id"].isin(sorted(r["run_id"].unique())[:5])).sum())
    assert res.dropped == {"reference": n_first, "candidate": 1}
    assert res.n_cells == 927 - n_first
    assert res.n_topics_skipped == 1 and res.n_topics_used == 20
    assert res.as_dict()["dropped"]["candidate"] == 1


@pytest.mark.parametrize("variant", ["a", "ap", "ap_sym"])
def test_other_variants_equal_direct_computation(pair, variant):
    from metaeval.analysis.kendall import kendall

    ref, cand = pair
    r, c = score_answers(ref), score_answers(cand)
    res = tau_levels(r, c, "v", variant=variant)
    m = r[["run_id", "qid", "v"]].merge(c[["run_id", "qid", "v"]], on=["run_id", "qid"])
    runs = m.groupby("run_id")[["v_x", "v_y"]].mean()
    assert res.run == pytest.approx(kendall(runs["v_x"], runs["v_y"], variant), abs=1e-9)
    assert res.pooled == pytest.approx(kendall(m["v_x"], m["v_y"], variant), abs=1e-9)
    per = [kendall(g["v_x"], g["v_y"], variant) for _, g in m.groupby("qid")]
    assert res.topic_avg == pytest.approx(np.nanmean(per), abs=1e-9)


def test_pooled_ap_in_chunks_equals_one_pass(pair, monkeypatch):
    import metaeval.analysis.pooled as pooled

    ref, cand = pair
    al = align(to_long(ref), [to_long(cand)], "v")
    w = topic_weights(len(al.topics), 10, seed=2)
    k = PooledKernel(al.x, al.y, "ap")
    full = k.tau(w, "ap_sym")
    monkeypatch.setattr(pooled, "_CHUNK_ELEMENTS", al.n_cells * 3)
    np.testing.assert_allclose(k.tau(w, "ap_sym"), full, atol=1e-12)
