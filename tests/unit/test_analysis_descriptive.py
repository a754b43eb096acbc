"""Descriptive statistics; the paper's Figure 6 counts reproduce Table 4's label mixes (rows 1a/3a, 1b/3b)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metaeval.analysis.confusion import confusion_agreement
from metaeval.analysis.descriptive import describe_labels, describe_many, label_mix, mix_columns
from metaeval.paper import FIG6_COUNTS, TABLE4, TABLE4_COLUMNS


@pytest.fixture(scope="module")
def paper(shared_data):
    return json.loads((shared_data / "paper" / "great-nugget-recall.json").read_text())


def test_fig6_counts_in_package_equal_shared_file(paper):
    fig = paper["figure6_confusion_counts"]
    assert FIG6_COUNTS["paper-fig6-edits"] == fig["autonuggets_edits_36_topics"]
    assert FIG6_COUNTS["paper-fig6-manual"] == fig["manual_nuggets_20_topics"]
    assert list(fig["order"]) == ["not_support", "partial_support", "support"]


@pytest.mark.parametrize("fig, human_row, llm_row", [
    ("paper-fig6-edits", "1a_autonuggets_edits__manualassign", "3a_autonuggets_edits__autoassign"),
    ("paper-fig6-manual", "1b_manualnuggets__manualassign", "3b_manualnuggets__autoassign"),
])
def test_fig6_margins_reproduce_table4_label_mix(paper, fig, human_row, llm_row):
    res = confusion_agreement(FIG6_COUNTS[fig])
    table = paper["table4_descriptive"]
    cols = table["columns"]
    for mix, row in ((res["reference_mix"], human_row), (res["candidate_mix"], llm_row)):
        got = mix_columns(mix)
        for col in ("pct_not_support", "pct_partial_support", "pct_support"):
            assert round(got[col], 1) == pytest.approx(table[row][cols.index(col)], abs=1e-9), (row, col, got[col])
            assert table[row] == TABLE4[row]


def test_label_mix_excludes_failed():
    assert label_mix({"a": 1, "b": 3, "FAILED": 4}) == {"a": 25.0, "b": 75.0}
    assert np.isnan(label_mix({"a": 0})["a"])


def test_describe_nist(nist_labels):
    d = describe_labels(nist_labels)
    lab = nist_labels.labels
    nug = lab.drop_duplicates(["qid", "nugget_id"])
    assert d["topics"] == 21 and d["n_nuggets"] == 298 and d["n_labels"] == 13158
    assert d["nuggets_per_topic"] == pytest.approx(298 / 21)
    assert d["nugget_len_tokens"] == pytest.approx(np.mean([len(t.split()) for t in nug["nugget"]]))
    assert d["pct_vital"] + d["pct_okay"] == pytest.approx(100.0)
    assert d["pct_vital"] == pytest.approx(100 * (nug["importance"] == "vital").sum() / 298)
    assert d["pct_support"] == pytest.approx(100 * (lab["support"] == "support").mean())
    assert d["pct_not_support"] + d["pct_partial_support"] + d["pct_support"] == pytest.approx(100.0)
    assert d["pct_failed"] == 0.0 and d["n_runs"] == 45 and d["n_answers"] == 927
    df = describe_many([nist_labels])
    assert list(df.columns[: len(TABLE4_COLUMNS) + 1]) == ["name", *TABLE4_COLUMNS]


def test_describe_counts_failed(nist_labels):
    sup = nist_labels.labels["support"].astype(str).to_numpy().copy()
    sup[:100] = "FAILED"
    d = describe_labels(nist_labels.with_labels(sup, name="x"))
    assert d["n_failed"] == 100 and d["pct_failed"] == pytest.approx(100 * 100 / 13158)
    assert d["pct_not_support"] + d["pct_partial_support"] + d["pct_support"] == pytest.approx(100.0)
