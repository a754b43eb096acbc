"""``pd.DataFrame(labelset)`` is the label set's ``labels`` table (issue 32 item 9), and iterating a label set
changes nothing the package does with one."""

from __future__ import annotations

import pandas as pd
import pytest

import metaeval
from metaeval.types import LABEL_COLUMNS, build_label_set


def _labels():
    rows = [("q1", "a", 0, "n one", "vital", "support", "vital", "support", 1),
            ("q1", "b", 0, "n one", "vital", "FAILED", "vital", "supprt", 2),
            ("q2", "a", 3, "n two", "okay", "partial_support", "okay", "partial_support", 5)]
    answers = [("q1", "a", "text a", 2, 1), ("q1", "b", "text b", 2, 2), ("q2", "a", "text c", 2, 5)]
    return build_label_set("x", rows, answers, topics={"q1": "query", "q2": "other"})


def test_dataframe_of_a_label_set_is_its_labels_table():
    ls = _labels()
    df = pd.DataFrame(ls)
    assert list(df.columns) == list(LABEL_COLUMNS) == list(ls.labels.columns)
    assert len(df) == len(ls) == 3
    # same rows and values; the categoricals come back as strings (the constructor infers dtypes)
    pd.testing.assert_frame_equal(df, ls.labels.astype({"importance": str, "support": str}))
    assert df.loc[1, "support"] == "FAILED" and df.loc[1, "support_raw"] == "supprt"


def test_dataframe_of_a_subset_and_of_the_demo_labels():
    nist = metaeval.load_dataset("demo").labels
    sub = nist.subset(qids=nist.qids[:2])
    for ls in (nist, sub):
        pd.testing.assert_frame_equal(pd.DataFrame(ls), ls.labels.astype({"importance": str, "support": str}))


def test_rows_are_named_and_a_label_set_stays_one_input():
    ls = _labels()
    first = next(iter(ls))
    assert first.qid == "q1" and first.run_id == "a" and first.support == "support"
    # one label set, not a list of candidates: the API still treats it as one input
    assert metaeval.load(ls) is ls
    scores = metaeval.score(ls)
    assert set(scores["run_id"]) == {"a", "b"}


def test_an_empty_label_set_gives_an_empty_frame():
    ls = _labels().subset(qids=[])
    assert len(ls) == 0 and bool(ls)
    assert pd.DataFrame(ls).empty
    with pytest.raises(StopIteration):
        next(iter(ls))
