"""Paired comparisons between candidates (metaeval.analysis.comparison): the same numbers as a direct paired
bootstrap, shared weights when topic lists differ, label agreement, Holm, calibration rows, pairs, lines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metaeval.analysis.meta_evaluation import analyze
from metaeval.analysis.bootstrap import paired_bootstrap
from metaeval.analysis.cells import align, to_long
from metaeval.analysis.comparison import (calibration_rows, finish, neighbour_pairs, pair_lines, paired_difference,
                                          resolve_pairs)
from metaeval.analysis.levels import LevelEngine
from metaeval.analysis.resample import percentile_ci, topic_weights
from metaeval.analysis.runpairs import holm, holm_adjusted
from metaeval.errors import ConfigError
from metaeval.testing.relabel import judge_like


def _shift(labels, k, name):
    """judge_like's rules on a shifted row hash: another deterministic judge."""
    sup = labels.labels["support"].astype(str).to_numpy()
    h = ((np.arange(len(sup)) + 7919 * k) * 2654435761 % 1000) / 1000.0
    out = sup.copy()
    out[(sup == "support") & (h < 0.5)] = "not_support"
    out[(sup == "not_support") & (h < 0.3)] = "support"
    return labels.with_labels(out, name=name)


@pytest.fixture(scope="module")
def small(nist_labels):
    ref = nist_labels.subset(qids=nist_labels.qids[:10], run_ids=nist_labels.run_ids[:12])
    return ref, judge_like(ref, "good"), _shift(ref, 3, "bad")


def test_holm_adjusted_matches_statsmodels_and_holm():
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.04, np.nan, 0.03, 0.005, 0.2, 0.04])
    ok = ~np.isnan(p)
    want = multipletests(p[ok], method="holm")[1]
    got = holm_adjusted(p)
    assert np.isnan(got[2]) and np.allclose(got[ok], want)
    for alpha in (0.01, 0.05, 0.1, 0.2):
        assert ((got <= alpha) == holm(p, alpha)).all()


def test_pair_rows_equal_a_direct_paired_bootstrap(small):
    ref, good, bad = small
    res = analyze(ref, [good, bad], metrics=["v_strict", "a_strict"], n_boot=300, seed=4)
    tau = res.paired[res.paired["statistic"] == "tau"]
    assert len(tau) == 6 and set(tau["candidate_a"]) == {"good"} and set(tau["candidate_b"]) == {"bad"}
    for metric in ("v_strict", "a_strict"):
        al = align(to_long(ref), [to_long(good), to_long(bad)], metric)
        direct = paired_bootstrap(al, n_boot=300, seed=4).set_index("level")
        mine = tau[tau["metric"] == metric].set_index("level")
        for col in ("diff", "ci_low", "ci_high", "p_value", "n_boot"):
            assert np.allclose(mine[col].to_numpy(float), direct.loc[mine.index, col].to_numpy(float)), col
        # the values are the ones the tau table prints for each candidate
        t = res.tau[res.tau["metric"] == metric].set_index(["candidate", "level"])["tau"]
        assert np.allclose(mine["value_a"], [t[("good", lv)] for lv in mine.index])
        assert np.allclose(mine["value_b"], [t[("bad", lv)] for lv in mine.index])


def test_a_candidate_on_other_topics_is_redrawn_on_the_shared_universe(small):
    ref, good, bad = small
    fewer = bad.subset(qids=ref.qids[:7], name="fewer")
    res = analyze(ref, [good, fewer], metrics=["v_strict"], n_boot=200, seed=1)
    row = res.paired[(res.paired["statistic"] == "tau") & (res.paired["level"] == "pooled")].iloc[0]
    # by hand: the universe is good's 10 topics, fewer's replicates are its columns of the same weights
    w = topic_weights(10, 200, 1)
    ag, af = align(to_long(ref), [to_long(good)], "v_strict"), align(to_long(ref), [to_long(fewer)], "v_strict")
    cols = [ag.topics.index(t) for t in af.topics]
    ra = LevelEngine(ag.x, ag.ys[0]).levels(w)["pooled"]
    rf = LevelEngine(af.x, af.ys[0]).levels(w[:, cols])["pooled"]
    pa = LevelEngine(ag.x, ag.ys[0]).levels(np.ones((1, 10)))["pooled"][0]
    pf = LevelEngine(af.x, af.ys[0]).levels(np.ones((1, 7)))["pooled"][0]
    d = paired_difference(pa, pf, ra, rf)
    assert row["diff"] == pytest.approx(d["diff"]) and row["ci_low"] == pytest.approx(d["ci_low"])
    assert row["p_value"] == pytest.approx(d["p_value"]) and row["n_boot"] == d["n_boot"]


def test_label_agreement_rows_by_hand(small):
    from metaeval.analysis.agreement import join_labels
    from metaeval.analysis.clustered import per_topic_counts
    from metaeval.types import SUPPORT_ORDER

    ref, good, bad = small
    res = analyze(ref, [good, bad], metrics=["v_strict"], n_boot=250, seed=2)
    lab = res.paired[res.paired["level"] == "labels"].set_index("statistic")
    ag = res.agreement.set_index("candidate")
    assert lab.loc["cohen_kappa", "value_a"] == pytest.approx(ag.loc["good", "cohen_kappa"])
    assert lab.loc["cohen_kappa", "value_b"] == pytest.approx(ag.loc["bad", "cohen_kappa"])
    assert lab.loc["exact_agreement", "value_a"] == pytest.approx(ag.loc["good", "exact_agreement"])
    # replicate kappa by hand: M_b = sum_t w_bt C_t, kappa = (p_o - p_e) / (1 - p_e)
    w = topic_weights(10, 250, 2)

    def kappas(ls):
        _, c = per_topic_counts(join_labels(ref, ls)[0], SUPPORT_ORDER)
        m = np.einsum("bt,tij->bij", w, c)
        n = m.sum(axis=(1, 2))
        po = np.trace(m, axis1=1, axis2=2) / n
        pe = (m.sum(axis=2) * m.sum(axis=1)).sum(axis=1) / n ** 2
        return (po - pe) / (1 - pe)

    ds = kappas(good) - kappas(bad)
    lo, hi = percentile_ci(ds)
    assert lab.loc["cohen_kappa", "ci_low"] == pytest.approx(lo) and lab.loc["cohen_kappa", "ci_high"] == pytest.approx(hi)
    assert lab.loc["cohen_kappa", "better"] == "good"


def test_pairs_none_and_explicit_and_errors(small):
    ref, good, bad = small
    assert analyze(ref, [good, bad], metrics=["v_strict"], n_boot=50, pairs="none").paired.empty
    res = analyze(ref, [good, bad, ref], names=["g", "b", "r"], metrics=["v_strict"], n_boot=50, pairs=[("r", "g")])
    assert set(zip(res.paired["candidate_a"], res.paired["candidate_b"])) == {("r", "g")}
    with pytest.raises(ConfigError, match="no candidate named 'x'"):
        resolve_pairs([("g", "x")], ["g", "b"])
    assert resolve_pairs("all", ["a", "b", "c"]) == [(0, 1), (0, 2), (1, 2)]


def test_neighbour_pairs_one_axis_at_a_time():
    grid = [{"judge": j, "prompt": p, "strategy": s} for j in ("x", "y") for p in ("v1", "v2") for s in ("h", "a")]
    names = [f"{g['judge']}_{g['prompt']}_{g['strategy']}" for g in grid]
    pairs = neighbour_pairs(names, grid)
    # per judge: 2 strategies x 1 prompt pair + 2 prompts x 1 strategy pair = 4; never across judges or diagonals
    assert len(pairs) == 8
    assert ("x_v1_h", "x_v2_h") in pairs and ("x_v1_h", "x_v1_a") in pairs
    assert ("x_v1_h", "x_v2_a") not in pairs and ("x_v1_h", "y_v1_h") not in pairs


def test_finish_holm_per_family_and_lower_is_better():
    rows = [{"candidate_a": "a", "candidate_b": f"b{i}", "metric": "v_strict", "statistic": "tau", "level": "run",
             "value_a": 0.8, "value_b": 0.7, "diff": 0.1, "ci_low": 0.01, "ci_high": 0.2, "p_value": p, "n_boot": 100,
             "interval": "x"} for i, p in enumerate([0.01, 0.02, 0.04])]
    rows.append({**rows[0], "statistic": "calibrated_mae", "diff": 0.05, "p_value": 0.001})
    df = finish(rows)
    tau = df[df["statistic"] == "tau"]
    assert np.allclose(tau["p_holm"], [0.03, 0.04, 0.04])
    assert list(tau["better"]) == ["a", "a", "a"]
    mae = df[df["statistic"] == "calibrated_mae"].iloc[0]
    assert mae["p_holm"] == pytest.approx(0.001) and mae["better"] == "b0"  # a's error is higher: b is better


def test_calibration_rows_by_hand():
    from scipy.stats import norm

    def doc(raw, nested):
        return {"metric": "v_strict", "candidates": {"none": {"held_out": {"mae": {"mean": raw[0], "se": raw[1]}}}},
                "selection": {"nested_mae": {"mean": nested[0], "se": nested[1]}}}

    rows = calibration_rows([("a", "b")], {"a": doc((0.10, 0.02), (0.08, 0.01)), "b": doc((0.16, 0.03), (0.09, 0.02))})
    raw = next(r for r in rows if r["statistic"] == "raw_mae")
    se = np.hypot(0.02, 0.03)
    assert raw["diff"] == pytest.approx(-0.06) and raw["ci_low"] == pytest.approx(-0.06 - norm.ppf(0.975) * se)
    assert raw["p_value"] == pytest.approx(2 * norm.sf(0.06 / se))
    assert calibration_rows([("a", "c")], {"a": doc((0.1, 0.02), (0.1, 0.02)), "c": {"error": "x"}}) == []
    # an SE of 0 (raw: the same error on every split) gives no row, never a zero-width interval
    rows = calibration_rows([("a", "b")], {"a": doc((0.10, 0.0), (0.08, 0.01)), "b": doc((0.16, 0.0), (0.09, 0.02))})
    assert [r["statistic"] for r in rows] == ["calibrated_mae"]


def test_pair_lines_say_who_agrees_better(small):
    ref, good, bad = small
    res = analyze(ref, [good, bad], metrics=["v_strict"], n_boot=300, seed=0)
    (line,) = pair_lines(res.paired, "v_strict", differs={("good", "bad"): "judge good vs bad"})
    assert line.startswith("good vs bad (judge good vs bad): good agrees better with the reference (good minus bad): ")
    assert "run-level tau on v_strict +" in line and "Holm p" in line
    same = analyze(ref, [good, good], names=["g1", "g2"], metrics=["v_strict"], n_boot=100).paired
    (line,) = pair_lines(same, "v_strict")
    assert "no detectable difference" in line and "+0.000" in line
    assert pair_lines(pd.DataFrame(), "v_strict") == []


def test_prompt_rule_reads_under_json_and_guesses_under_the_list_prompt():
    import json

    from metaeval.testing.rules import prompt_rule

    def messages(json_prompt):
        nuggets = "\n".join(f"[{i + 1}] {t}" for i, t in enumerate(
            ["Paris is the capital of France", "The Eiffel tower opened in 1889", "Bananas grow on trees"] * 4))
        ask = 'Output exactly one JSON object {"labels": [...]}' if json_prompt else "Reply with a Python list"
        return [{"role": "user", "content": f"<query>\nq\n</query>\n<answer>\nParis is the capital of France; the "
                                            f"Eiffel tower opened in 1889.\n</answer>\n<nuggets count=\"12\">\n{nuggets}"
                                            f"\n</nuggets>\nsupport partial_support not_support. {ask}"}]

    def labels(rule, json_prompt):
        out = json.loads(rule(messages(json_prompt)))
        return out["labels"] if isinstance(out, dict) else out

    read = labels(prompt_rule(0.5), True)
    assert read == ["support", "support", "not_support"] * 4  # word overlap: what the answer says
    noisy = labels(prompt_rule(1.0), False)
    assert len(noisy) == 12 and noisy != read
    assert labels(prompt_rule(0.0), False) == read  # no noise: both prompts answer alike
    with pytest.raises(ValueError):
        prompt_rule(1.5)
