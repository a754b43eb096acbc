"""Diagnostics per comparison (rankings, flags) and their place in ``analyze``; metric names in any case;
the no-shared-cell error names ids of both sides."""

import numpy as np
import pandas as pd
import pytest

from metaeval.analysis.cells import Aligned, align, to_long
from metaeval.analysis.diagnostics import comparison_diagnostics, defaulted_cells, run_rankings
from metaeval.errors import ConfigError


def _al(x, y, topics=None):
    topics = topics or [str(i) for i in range(len(x))]
    return Aligned("v_strict", topics, [f"r{j}" for j in range(x.shape[1])], np.asarray(x, float), (np.asarray(y, float),))


def test_rankings_by_hand():
    x = np.array([[0.9, 0.5, 0.1], [0.7, 0.5, 0.3]])
    y = np.array([[0.2, 0.5, 0.8], [0.2, 0.5, 0.8]])
    df = run_rankings(_al(x, y))
    assert list(df["run_id"]) == ["r0", "r1", "r2"]
    assert list(df["reference_mean"]) == pytest.approx([0.8, 0.5, 0.2])
    assert list(df["candidate_rank"]) == [3, 2, 1] and list(df["rank_change"]) == [2, 0, -2]


def test_ranks_equal_scipy_min_method():
    from scipy.stats import rankdata

    from metaeval.analysis.ranks import rank_array  # what run_rankings uses

    v = np.array([0.3, np.nan, 0.5, 0.3, 0.1, 0.5])
    got = rank_array(v)
    ok = ~np.isnan(v)
    assert got[ok] == pytest.approx(rankdata(-v[ok], method="min")) and np.isnan(got[1])


def test_flags_too_few_topics_all_tied_and_defaulted():
    x = np.array([[0.9, 0.5, 0.1], [0.7, 0.5, 0.3]])
    y = np.full((2, 3), 0.4)
    flags, _ = comparison_diagnostics(_al(x, y), min_topics=10,
                                      defaulted={"reference": {("0", "r1"), ("9", "r1")}, "candidate": None},
                                      n_topics_skipped=2)
    assert flags["too_few_topics"] and flags["n_topics"] == 2
    assert flags["all_tied_candidate"] and not flags["all_tied_reference"]
    assert flags["defaulted_reference"] == 1 and flags["defaulted_candidate"] is None  # only cells compared count
    assert len(flags["warnings"]) == 4 and flags["undefined_topic_taus"] == 2
    ok, _ = comparison_diagnostics(_al(np.tile(x, (6, 1)), np.tile(x, (6, 1)) + 0.01), min_topics=10)
    assert not ok["too_few_topics"] and ok["warnings"] == []


def test_defaulted_cells_from_scores(nist_labels):
    from metaeval.scoring import score_answers

    per = score_answers(nist_labels)
    got = defaulted_cells(per, "v_strict")
    want = set(zip(per.loc[per["n_vital"] == 0, "qid"], per.loc[per["n_vital"] == 0, "run_id"]))
    assert got == want
    assert defaulted_cells(per, "ndcg") is None and defaulted_cells(per[["run_id", "qid", "v"]], "v") is None


def test_analyze_reports_top_heavy_diagnostics_and_case_insensitive_metrics(nist_labels):
    from metaeval.analysis.meta_evaluation import analyze
    from metaeval.simulation import simulate_judge

    judge = simulate_judge(nist_labels, seed=1).subset(qids=nist_labels.qids[:5])
    res = analyze(nist_labels, judge, metrics=["V_STRICT"], n_boot=50, seed=0)
    m = res.json["metrics"]["v_strict"]
    assert set(m["top_heavy"]) == {"kendall@k", "tau_ap_b"} and m["top_heavy"]["kendall@k"]["k"] == 10
    assert m["diagnostics"]["too_few_topics"] and m["diagnostics"]["n_topics"] == 5
    assert set(res.top_heavy["statistic"]) == {"kendall@k", "tau_ap_b"}
    assert len(res.rankings) == 45 and {"reference_rank", "candidate_rank"} <= set(res.rankings.columns)
    # the candidate's descriptive statistics cover the 5 shared topics, not more
    assert res.json["descriptive"]["candidate"]["topics"] == 5
    assert res.json["descriptive"]["reference"]["topics"] == 5  # the reference on the same shared topics
    assert "5 topics and 45 runs shared" in res.json["descriptive"]["reference"]["shared_note"]
    lower = analyze(nist_labels, judge, metrics=["v_strict"], n_boot=0)
    assert lower.tau["tau"].tolist() == pytest.approx(res.tau["tau"].tolist())


def test_trec_eval_metric_names_match_in_any_case():
    from metaeval.analysis.meta_evaluation import analyze

    rows = [(r, str(q), "NDCG_cut_10", v) for q in range(4) for r, v in (("a", 0.5 + q / 10), ("b", 0.3), ("c", 0.1 * q))]
    ref = pd.DataFrame(rows, columns=["run_id", "qid", "metric", "value"])
    cand = ref.assign(value=ref["value"] + 0.01)
    res = analyze(ref, cand, metrics=["ndcg_CUT_10"], n_boot=0)
    assert res.tau["metric"].unique().tolist() == ["NDCG_cut_10"]
    lower = cand.assign(metric="ndcg_cut_10")  # the two sides spell it differently
    al = align(to_long(ref), [to_long(lower)], "Ndcg_Cut_10")
    assert al.n_cells == 12
    assert analyze(ref, lower, n_boot=0).tau["metric"].unique().tolist() == ["NDCG_cut_10"]


def test_no_shared_cell_error_lists_ids_of_both_sides():
    ref = pd.DataFrame({"run_id": ["baseline_rag24", "x"], "qid": ["2024-1", "2024-2"], "v_strict": [0.1, 0.2]})
    cand = pd.DataFrame({"run_id": ["baseline_frag_rag24"], "qid": ["2024-1"], "v_strict": [0.3]})
    with pytest.raises(ConfigError) as err:
        align(to_long(ref), [to_long(cand)], "v_strict")
    msg = str(err.value)
    assert "baseline_rag24" in msg and "baseline_frag_rag24" in msg and "'2024-1'" in msg
