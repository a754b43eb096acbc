"""Scoring against independent computations from the paper's definitions and nuggetizer's own metrics file."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from metaeval.errors import ConfigError
from metaeval.io.assignments import read_assignments
from metaeval.scoring import METRICS, ScoringPolicy, normalize_metric, run_scores, score_answers, to_long
from metaeval.types import build_label_set


def reference_scores(nuggets: list[dict]) -> dict[str, float]:
    """Plain-Python scores from the paper's definitions (section 4.4), nuggetizer's conventions for empty cases."""
    credit = {"support": 1.0, "partial_support": 0.5}
    vital = [n for n in nuggets if n["importance"] == "vital"]
    weights = [{"vital": 1.0, "okay": 0.5}.get(n["importance"], 0.0) for n in nuggets]

    def ratio(num, den):
        return num / den if den else 0.0

    return {
        "a_strict": ratio(sum(n["assignment"] == "support" for n in nuggets), len(nuggets)),
        "a": ratio(sum(credit.get(n["assignment"], 0.0) for n in nuggets), len(nuggets)),
        "v_strict": ratio(sum(n["assignment"] == "support" for n in vital), len(vital)),
        "v": ratio(sum(credit.get(n["assignment"], 0.0) for n in vital), len(vital)),
        "w_strict": ratio(sum(w * (n["assignment"] == "support") for w, n in zip(weights, nuggets)), sum(weights)),
        "w": ratio(sum(w * credit.get(n["assignment"], 0.0) for w, n in zip(weights, nuggets)), sum(weights)),
    }


def test_nist_every_answer_matches_independent_computation(nist_file, nist_labels):
    scores = score_answers(nist_labels).set_index(["run_id", "qid"])
    assert len(scores) == 927
    with open(nist_file, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            ref = reference_scores(rec["nuggets"])
            row = scores.loc[(rec["run_id"], rec["qid"])]
            for metric, value in ref.items():
                assert row[metric] == pytest.approx(value, abs=1e-12), (rec["run_id"], rec["qid"], metric)
            assert row["n_nuggets"] == len(rec["nuggets"])
            assert row["n_vital"] == sum(n["importance"] == "vital" for n in rec["nuggets"])


def test_nist_check_value_top_run(nist_labels):
    runs = run_scores(score_answers(nist_labels)).set_index("run_id")
    assert round(runs.loc["ldilab_gpt_4o", "v_strict"], 4) == 0.6666
    assert runs.loc["ldilab_gpt_4o", "n_topics"] == 21
    assert runs.index[0] == "ldilab_gpt_4o"  # the top run by V_strict


def test_nuggetizer_parity_all_six_metrics(nuggetizer_dir):
    labels = read_assignments(nuggetizer_dir / "assignments_baseline_rag24.test_gpt4o_top20.jsonl")
    ours = score_answers(labels).set_index("qid")
    fields = {"strict_vital_score": "v_strict", "vital_score": "v", "strict_all_score": "a_strict",
              "all_score": "a", "strict_weighted_score": "w_strict", "weighted_score": "w"}
    with open(nuggetizer_dir / "metrics_baseline_rag24.test_gpt_4o_top20.jsonl", encoding="utf-8") as fh:
        theirs = [json.loads(line) for line in fh]
    per_topic = [t for t in theirs if t["qid"] != "all"]
    assert len(per_topic) == len(ours) == 301
    for t in per_topic:
        for field, col in fields.items():
            assert ours.loc[t["qid"], col] == pytest.approx(t[field], abs=1e-15), (t["qid"], field)
    overall = theirs[-1]
    assert overall["qid"] == "all"
    for field, col in fields.items():
        assert ours[col].mean() == pytest.approx(overall[field], abs=1e-12)


def _tiny(rows):
    """rows: (qid, run, importance, support) -> LabelSet."""
    lab, answers, seen = [], [], set()
    for i, (qid, run, imp, sup) in enumerate(rows):
        lab.append((qid, run, i, f"n{i}", imp, sup, imp, sup, i + 1))
        if (qid, run) not in seen:
            seen.add((qid, run))
            answers.append((qid, run, "", None, i + 1))
    return build_label_set("tiny", lab, answers)


def test_hand_computed_small_case_and_policies():
    ls = _tiny([
        ("q1", "r1", "vital", "support"), ("q1", "r1", "vital", "partial_support"),
        ("q1", "r1", "okay", "support"), ("q1", "r1", "vital", "FAILED"),
    ])
    s = score_answers(ls).iloc[0]
    # A_strict = 2/4; A = 2.5/4; V_strict = 1/3; V = 1.5/3; W_strict = (1 + 0.5)/3.5; W = (1 + .5 + .5)/3.5
    assert s.a_strict == pytest.approx(0.5)
    assert s.a == pytest.approx(0.625)
    assert s.v_strict == pytest.approx(1 / 3)
    assert s.v == pytest.approx(0.5)
    assert s.w_strict == pytest.approx(1.5 / 3.5)
    assert s.w == pytest.approx(2.0 / 3.5)
    assert s.n_failed == 1
    excl = score_answers(ls, ScoringPolicy(failed_support="exclude")).iloc[0]
    assert excl.v_strict == pytest.approx(1 / 2) and excl.a_strict == pytest.approx(2 / 3)
    upper = score_answers(ls, ScoringPolicy(failed_support="support")).iloc[0]
    assert upper.v_strict == pytest.approx(2 / 3) and upper.a_strict == pytest.approx(3 / 4)


def test_no_vital_policy_zero_or_excluded():
    ls = _tiny([("q1", "r1", "okay", "support"), ("q2", "r1", "vital", "support")])
    zero = score_answers(ls)
    assert zero.set_index("qid").loc["q1", "v_strict"] == 0.0
    assert run_scores(zero).iloc[0]["v_strict"] == pytest.approx(0.5)
    excl = score_answers(ls, ScoringPolicy(no_vital="exclude"))
    assert math.isnan(excl.set_index("qid").loc["q1", "v_strict"])
    assert run_scores(excl).iloc[0]["v_strict"] == pytest.approx(1.0)
    assert excl.set_index("qid").loc["q1", "a_strict"] == 1.0  # A is defined: the answer has a nugget


def test_failed_importance_policies():
    ls = _tiny([("q1", "r1", "vital", "not_support"), ("q1", "r1", "FAILED", "support")])
    d = score_answers(ls).iloc[0]
    assert (d.a_strict, d.v_strict, d.w_strict) == (0.5, 0.0, 0.0)
    assert score_answers(ls, ScoringPolicy(failed_importance="exclude")).iloc[0].a_strict == 0.0
    assert score_answers(ls, ScoringPolicy(failed_importance="as_vital")).iloc[0].v_strict == 0.5
    assert score_answers(ls, ScoringPolicy(failed_importance="as_okay")).iloc[0].w_strict == pytest.approx(0.5 / 1.5)


def test_common_topics_and_long_form(caplog):
    ls = _tiny([("q1", "r1", "vital", "support"), ("q2", "r1", "vital", "not_support"), ("q1", "r2", "vital", "not_support")])
    per = score_answers(ls)
    assert run_scores(per).set_index("run_id").loc["r1", "n_topics"] == 2
    with caplog.at_level("WARNING", logger="metaeval.scoring"):
        common = run_scores(per, common_topics=True).set_index("run_id")
    assert common.loc["r1", "n_topics"] == 1 and common.loc["r1", "v_strict"] == 1.0
    assert "kept 1 of 2 topics" in caplog.text and "q2 (1 runs)" in caplog.text  # dropping topics is not silent
    caplog.clear()
    with caplog.at_level("WARNING", logger="metaeval.scoring"):
        run_scores(per[per["qid"] == "q1"], common_topics=True)
    assert caplog.text == ""  # nothing dropped, nothing said
    upper = run_scores(per, metrics=["V_strict", "A"]).set_index("run_id")
    assert list(upper.columns) == ["n_topics", "v_strict", "a"]
    with pytest.raises(ConfigError, match="not in the score table"):
        run_scores(per, metrics=["ndcg"])
    long = to_long(per)
    assert list(long.columns) == ["run_id", "qid", "metric", "value"]
    assert len(long) == len(per) * len(METRICS)


def test_policy_validation_and_metric_names():
    with pytest.raises(ConfigError, match="no_vital"):
        ScoringPolicy(no_vital="drop")
    assert normalize_metric("V_strict") == "v_strict"
    assert normalize_metric("strict_vital_score") == "v_strict"


def test_answer_without_labels_is_scored_explicitly():
    ls = _tiny([("q1", "r1", "vital", "support")])
    ls.answers = pd.concat([ls.answers, pd.DataFrame([{"qid": "q2", "run_id": "r1", "answer_text": "", "response_length": None, "line": 9}])], ignore_index=True)
    s = score_answers(ls).set_index("qid")
    assert s.loc["q2", "n_nuggets"] == 0 and s.loc["q2", "v_strict"] == 0.0
    assert np.isnan(score_answers(ls, ScoringPolicy(no_vital="exclude")).set_index("qid").loc["q2", "a"])
