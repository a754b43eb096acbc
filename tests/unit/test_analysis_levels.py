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
    from metaeval.random_streams import stream

    rng = stream(5, "analysis.topic_bootstrap")  # an int seed's stream
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


def test_topic_avg_skips_undefined_topics_instead_of_counting_zero():
    """Hand case: topic 1 tau-b = 1, topic 2 tau-b = -1/3... and topic 3 constant on the candidate (undefined).
    The mean is over the two defined topics; counting the undefined topic as 0 would give a different value."""
    from metaeval.analysis.cells import Aligned
    from metaeval.analysis.levels import levels_from_aligned, levels_matrix

    x = np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.1, 0.2], [0.1, 0.5, 0.2, 0.9]])
    y = np.array([[0.0, 0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.5, 0.5]])
    t1 = stats.kendalltau(x[0], y[0]).statistic
    t2 = stats.kendalltau(x[1], y[1]).statistic
    assert t1 == pytest.approx(1.0) and t2 == pytest.approx(-2 / 3)
    res = levels_from_aligned(Aligned("m", ["1", "2", "3"], list("abcd"), x, (y,)))
    assert res.topic_avg == pytest.approx((t1 + t2) / 2)
    assert res.topic_avg != pytest.approx((t1 + t2) / 3)
    assert (res.n_topics_used, res.n_topics_skipped) == (2, 1)
    fast = levels_matrix(x, y)
    assert fast["topic_avg"] == pytest.approx((t1 + t2) / 2) and fast["n_topics_used"] == 2
    # and under topic resampling: a replicate drawing only the undefined topic has no topic_avg (NaN, not 0)
    eng = LevelEngine(x, y)
    assert np.isnan(eng.topic_avg(np.array([[0.0, 0.0, 3.0]]))[0])


@pytest.mark.parametrize("metric", ["v_strict", "a"])
def test_levels_matrix_equals_tau_levels_and_scipy(pair, metric):
    """The fast dense-array entry (for calibration loops) gives the same three levels as ``tau_levels``."""
    from metaeval.analysis.levels import levels_matrix

    ref, cand = pair
    r, c = score_answers(ref), score_answers(cand)
    al = align(to_long(r), [to_long(c)], metric)
    x, y = al.x.copy(), al.y.copy()
    x[0, :3] = np.nan  # a few missing cells on one side
    full = tau_levels(r, c, metric=metric)
    fast = levels_matrix(al.x, al.y)
    for lvl in ("run", "topic_avg", "pooled"):
        assert fast[lvl] == pytest.approx(getattr(full, lvl), abs=1e-12)
    holes = levels_matrix(x, y)
    ok = ~np.isnan(x)
    assert holes["pooled"] == pytest.approx(stats.kendalltau(x[ok], y[ok]).statistic, abs=1e-12)
    rx = np.array([np.nanmean(x[:, j]) for j in range(x.shape[1])])
    ry = np.array([np.mean(y[ok[:, j], j]) for j in range(y.shape[1])])
    assert holes["run"] == pytest.approx(stats.kendalltau(rx, ry).statistic, abs=1e-12)
    cand_run = np.nanmean(al.y, axis=0)[::-1]
    override = levels_matrix(al.x, al.y, y_run=cand_run)
    assert override["run"] == pytest.approx(stats.kendalltau(np.nanmean(al.x, axis=0), cand_run).statistic)


def test_top_heavy_statistics_with_bootstrap(pair):
    from metaeval.analysis.kendall import kendall_at_k, tau_ap_b

    ref, cand = pair
    r, c = score_answers(ref), score_answers(cand)
    res = tau_levels(r, c, "v_strict", n_boot=200, seed=3)
    al = align(to_long(r), [to_long(c)], "v_strict")
    mx, my = np.nanmean(al.x, axis=0), np.nanmean(al.y, axis=0)
    top = np.argsort(-mx, kind="stable")[:10]
    assert res.top_heavy["kendall@k"] == pytest.approx(stats.kendalltau(mx[top], my[top]).statistic)
    assert res.top_heavy["kendall@k"] == pytest.approx(kendall_at_k(mx, my, 10))
    assert res.top_heavy["tau_ap_b"] == pytest.approx(tau_ap_b(mx, my))
    for name, (lo, hi) in res.top_heavy_ci.items():
        assert -1 <= lo <= res.top_heavy[name] <= hi <= 1, name
    assert res.as_dict()["top_heavy_ci"]["tau_ap_b"] == list(res.top_heavy_ci["tau_ap_b"])


def test_pooled_kernel_fast_blocks_equal_brute_force():
    """The grid-based block construction equals the O(N^2) definition (ties, missing cells, tau_AP credit)."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, (6, 7)) / 3.0
    y = np.clip(x + rng.integers(-1, 2, (6, 7)) / 3.0, 0, 1)
    x[1, 2] = np.nan
    y[4, :] = np.nan  # an empty topic
    from metaeval.analysis.kendall import settle

    x, y = settle(x), settle(y)  # the definition on the values every tau ranks (1/3 + 1/3 == 2/3 after settling)
    k = PooledKernel(x, y, "pairs")
    ok = ~(np.isnan(x) | np.isnan(y))
    t, xs, ys = np.nonzero(ok)[0], x[ok], y[ok]
    sx, sy = np.sign(xs[:, None] - xs[None, :]), np.sign(ys[:, None] - ys[None, :])
    onehot = (t[:, None] == np.arange(6)[None, :]).astype(float)
    assert k.M == pytest.approx(onehot.T @ (sx * sy) @ onehot)
    assert k.X == pytest.approx(onehot.T @ (sx == 0) @ onehot)
    assert k.Y == pytest.approx(onehot.T @ (sy == 0) @ onehot)
    ka = PooledKernel(x, y, "ap")
    for credit in (0.5, 0.0):
        g, h = ka.ap_blocks(False, credit)
        above = ys[None, :] > ys[:, None]
        cred = (xs[None, :] > xs[:, None]) + credit * (xs[None, :] == xs[:, None])
        assert g[ka.combo] == pytest.approx(above @ onehot)
        assert h[ka.combo] == pytest.approx((above * cred) @ onehot)
    w = topic_weights(6, 50, 0)
    for variant in ("ap", "ap_sym", "ap_b"):
        from metaeval.analysis.kendall import kendall

        got = ka.tau(w[:3], variant)
        for b in range(3):
            rep = np.repeat(np.arange(6), w[b].astype(int))
            xx = np.concatenate([x[i][ok[i]] for i in rep])
            yy = np.concatenate([y[i][ok[i]] for i in rep])
            assert got[b] == pytest.approx(kendall(xx, yy, variant), abs=1e-12), variant


def test_pooled_blocks_global_grid_equals_per_topic_grids(monkeypatch):
    import metaeval.analysis.pooled as pooled

    rng = np.random.default_rng(6)
    x = rng.integers(0, 6, (9, 8)) / 5.0
    y = np.clip(x + rng.integers(-2, 3, (9, 8)) / 5.0, 0, 1)
    x[2, 3] = np.nan
    fast = PooledKernel(x, y, "pairs")
    monkeypatch.setattr(pooled, "_GLOBAL_GRID", 0)
    slow = PooledKernel(x, y, "pairs")
    assert fast.M == pytest.approx(slow.M) and fast.X == pytest.approx(slow.X) and fast.Y == pytest.approx(slow.Y)


def test_levels_from_aligned_passes_its_seed_to_the_bootstrap():
    """A different seed must move every interval (the seed reaches the topic resamples) and the same seed must
    reproduce it; the replicates are those of ``topic_weights`` under the seed's analysis stream."""
    from metaeval.analysis.cells import Aligned
    from metaeval.analysis.levels import levels_from_aligned

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (12, 7)) + np.linspace(0, 0.5, 7)
    al = Aligned("m", [f"q{i}" for i in range(12)], [f"r{j}" for j in range(7)], x,
                 (x + rng.normal(0, 0.3, x.shape),), {})
    a = levels_from_aligned(al, n_boot=200, seed=1, ci_method="percentile")
    b = levels_from_aligned(al, n_boot=200, seed=2, ci_method="percentile")
    again = levels_from_aligned(al, n_boot=200, seed=1, ci_method="percentile")
    assert a.ci == again.ci and a.seed == 1
    assert all(a.ci[lvl] != b.ci[lvl] for lvl in ("run", "topic_avg", "pooled"))
    given = levels_from_aligned(al, n_boot=200, weights=topic_weights(12, 200, seed=1), ci_method="percentile")
    assert given.ci == a.ci


def test_levels_and_top_heavy_is_levels_and_top_heavy_exactly(pair):
    """The combined call (run means computed once) gives bit for bit what the two separate calls give."""
    ref, cand = pair
    al = align(to_long(ref), [to_long(cand)], "v_strict")
    eng = LevelEngine(al.x, al.y, "b")
    w = topic_weights(len(al.topics), 50, seed=3)
    lv, heavy = eng.levels_and_top_heavy(w, k=5)
    want_lv, want_heavy = eng.levels(w), eng.top_heavy(w, k=5)
    assert lv.keys() == want_lv.keys() and heavy.keys() == want_heavy.keys()
    for got, want in ((lv, want_lv), (heavy, want_heavy)):
        for key in want:
            assert np.array_equal(got[key], want[key], equal_nan=True), key
