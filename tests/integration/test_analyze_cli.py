"""``metaeval analyze`` end to end on the NIST file: label files, score tables and trec_eval folders."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from metaeval.analysis.levels import tau_levels
from metaeval.cli import main
from metaeval.io.assignments import write_assignments
from metaeval.io.scores import write_table
from metaeval.scoring import score_answers
from metaeval.types import SUPPORT_ORDER

from tests.unit.test_analysis_levels import relabel


@pytest.fixture(scope="module")
def files(nist_labels, tmp_path_factory):
    d = tmp_path_factory.mktemp("analyze")
    cand = relabel(nist_labels)
    write_assignments(cand, d / "judge.jsonl")
    write_table(score_answers(nist_labels), d / "ref_scores.csv")
    # candidate scores as a folder of trec_eval -q files, one per run
    te = d / "trec_eval"
    te.mkdir()
    sc = score_answers(cand)
    for k, (run, g) in enumerate(sc.groupby("run_id")):
        lines = [f"runid\tall\t{run}"] + [f"{m}\t{r.qid}\t{getattr(r, m):.17g}" for r in g.itertuples() for m in ("v_strict", "a_strict")]
        (te / f"run{k:02d}.txt").write_text("\n".join(lines) + "\n")
    return d, cand


def test_label_files_write_schema_and_match_api(files, nist_file, nist_labels, capsys):
    d, cand = files
    out = d / "out1"
    rc = main(["analyze", "--reference", str(nist_file), "--candidate", str(d / "judge.jsonl"),
               "--bootstrap", "200", "--seed", "3", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "candidate: judge" in text and "v_strict" in text and "confusion" in text
    doc = json.loads((out / "analysis.json").read_text())
    assert set(doc["metrics"]) == {"v_strict", "a_strict", "v", "a", "w_strict", "w"}
    ref = nist_labels
    for metric in ("v_strict", "w"):
        want = tau_levels(ref, cand, metric, n_boot=200, seed=3)
        m = doc["metrics"][metric]
        for lvl in ("run", "topic_avg", "pooled"):
            assert m[lvl]["tau"] == pytest.approx(getattr(want, lvl), abs=1e-12)
            assert m[lvl]["ci"] == pytest.approx(list(want.ci[lvl]), abs=1e-12)
        assert m["topic_avg"]["n_topics"] == want.n_topics_used
    assert doc["cells"] == {"n_runs": 45, "n_topics": 21, "n_cells": 927, "dropped": {"reference": 0, "candidate": 0}}
    lab = doc["labels"]
    assert lab["order"] == list(SUPPORT_ORDER)
    r = ref.labels["support"].astype(str).to_numpy()
    c = cand.labels["support"].astype(str).to_numpy()
    assert lab["confusion"] == [[int(((r == a) & (c == b)).sum()) for b in SUPPORT_ORDER] for a in SUPPORT_ORDER]
    # the agreement figures, recomputed here from the label arrays (hand formulas, krippendorff, statsmodels)
    import krippendorff
    import numpy as np
    from scipy.stats import chi2
    from statsmodels.stats.contingency_tables import SquareTable

    m = np.array(lab["confusion"], dtype=float)
    p = m / m.sum()
    k = len(SUPPORT_ORDER)
    w = 1 - np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]) / (k - 1)  # linear agreement weights
    exp = np.outer(p.sum(1), p.sum(0))
    assert lab["cohen_kappa"] == pytest.approx((np.trace(p) - np.trace(exp)) / (1 - np.trace(exp)), abs=1e-12)
    assert lab["weighted_kappa"] == pytest.approx(((w * p).sum() - (w * exp).sum()) / (1 - (w * exp).sum()), abs=1e-12)
    codes = {s: i for i, s in enumerate(SUPPORT_ORDER)}
    units = np.array([[codes.get(x, np.nan) for x in r], [codes.get(x, np.nan) for x in c]], dtype=float)
    assert lab["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=units, level_of_measurement="ordinal"), abs=1e-9)
    # strictness: P(candidate below reference) - P(candidate above), SUPPORT_ORDER ascending
    assert lab["strictness_index"] == pytest.approx(np.tril(p, -1).sum() - np.triu(p, 1).sum(), abs=1e-12)
    sm = SquareTable(m, shift_zeros=False).homogeneity("stuart_maxwell")
    assert lab["stuart_maxwell_stat"] == pytest.approx(sm.statistic, rel=1e-9)
    assert lab["stuart_maxwell_p"] == pytest.approx(chi2.sf(sm.statistic, k - 1), rel=1e-6, abs=1e-300)
    assert doc["descriptive"]["reference"]["topics"] == 21 and doc["descriptive"]["candidate"]["n_labels"] == 13158
    tau = pd.read_csv(out / "tau.csv")
    assert len(tau) == 6 * 3 and {"candidate", "metric", "level", "tau", "ci_low", "ci_high"} <= set(tau.columns)
    assert (out / "confusion.csv").exists() and (out / "flips.csv").exists()


def test_score_table_vs_trec_eval_folder_equals_label_route(files, nist_labels):
    d, cand = files
    out = d / "out2"
    rc = main(["analyze", "--reference", str(d / "ref_scores.csv"), "--candidate", str(d / "trec_eval"),
               "--metrics", "V_strict", "A_strict", "--tau", "ap", "--bootstrap", "0", "--out", str(out)])
    assert rc == 0
    doc = json.loads((out / "analysis.json").read_text())
    assert doc["labels"] is None and set(doc["metrics"]) == {"v_strict", "a_strict"}
    for metric in ("v_strict", "a_strict"):
        want = tau_levels(nist_labels, cand, metric, variant="ap")
        for lvl in ("run", "topic_avg", "pooled"):
            assert doc["metrics"][metric][lvl]["tau"] == pytest.approx(getattr(want, lvl), abs=1e-9)
        assert doc["metrics"][metric]["run"]["ci"] == [None, None]


def test_two_candidates_get_blocks_and_paired_test(files, nist_file):
    d, _ = files
    out = d / "out3"
    rc = main(["analyze", "--reference", str(nist_file), "--candidate", str(d / "judge.jsonl"), str(nist_file),
               "--metrics", "v_strict", "--bootstrap", "100", "--out", str(out)])
    assert rc == 0
    doc = json.loads((out / "analysis.json").read_text())
    assert set(doc["candidates"]) == {"judge", "nugget_assignment"}
    same = doc["candidates"]["nugget_assignment"]
    assert same["metrics"]["v_strict"]["run"]["tau"] == pytest.approx(1.0)
    assert same["labels"]["exact_agreement"] == 1.0 and same["labels"]["strictness_index"] == 0.0
    paired = pd.DataFrame(doc["paired"])
    tau = paired[paired["statistic"] == "tau"]
    assert set(tau["level"]) == {"run", "topic_avg", "pooled"}
    labels = paired[paired["level"] == "labels"]  # label agreement too: both sides are label sets
    assert set(labels["statistic"]) == {"cohen_kappa", "weighted_kappa", "exact_agreement"}
    assert (paired["diff"] < 0).all()  # the perturbed judge agrees less than the reference with itself
    assert (paired["p_value"] < 0.05).all() and (paired["better"] == "nugget_assignment").all()


def test_bad_inputs_exit_2(files, capsys, tmp_path):
    d, _ = files
    assert main(["analyze", "--reference", str(tmp_path / "missing.jsonl"), "--candidate", str(d / "judge.jsonl"),
                 "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["analyze", "--reference", str(d / "ref_scores.csv"), "--candidate", str(d / "judge.jsonl"),
                 "--metrics", "ndcg", "--out", str(tmp_path / "o")]) == 2
    assert "ndcg" in capsys.readouterr().err


def test_scoring_policy_reaches_label_inputs(nist_labels):
    from metaeval.analysis.meta_evaluation import analyze
    from metaeval.scoring import ScoringPolicy

    sup = nist_labels.labels["support"].astype(str).to_numpy().copy()
    sup[::4] = "FAILED"
    judge = nist_labels.with_labels(sup, name="flaky")
    default = analyze(nist_labels, judge, metrics=["a_strict"], n_boot=0)
    excl = analyze(nist_labels, judge, metrics=["a_strict"], n_boot=0, policy=ScoringPolicy(failed_support="exclude"))
    t0 = default.tau.set_index("level")["tau"]
    t1 = excl.tau.set_index("level")["tau"]
    pol = ScoringPolicy(failed_support="exclude")
    want = tau_levels(score_answers(nist_labels, pol), score_answers(judge, pol), "a_strict")
    assert t1.to_dict() == pytest.approx({"run": want.run, "topic_avg": want.topic_avg, "pooled": want.pooled}, abs=1e-12)
    assert (t1 - t0).abs().max() > 1e-3
    assert excl.json["scoring_policy"]["failed_support"] == "exclude"
    assert default.json["labels"]["failed"]["candidate"] == len(sup[::4])
