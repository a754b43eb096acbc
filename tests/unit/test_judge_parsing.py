"""Reply parsing: lists in prose, code fences, JSON objects; validation never invents a label."""

from __future__ import annotations

import pytest

from metaeval.judges.parsing import check_labels, check_nuggets, extract_list

S3 = ("support", "partial_support", "not_support")


@pytest.mark.parametrize("reply,expected", [
    ('["support", "not_support"]', ["support", "not_support"]),
    ("['support', 'partial_support']", ["support", "partial_support"]),
    ('Sure! Here are the labels:\n["support", "not_support"]\nHope it helps.', ["support", "not_support"]),
    ('```json\n{"labels": ["vital", "okay"]}\n```', ["vital", "okay"]),
    ("```python\n['a', 'b']\n```\n", ["a", "b"]),
    ('{"nuggets": ["x", "y"]}', ["x", "y"]),
    ("Nugget [1] is covered, [2] is not. Final: ['support', 'not_support']", ["support", "not_support"]),
    ("I don't know. ['support']", ["support"]),
    ('Reasoning [a list ["x"] inside] ... answer: ["support", "support"]', ["support", "support"]),
])
def test_extract_list(reply, expected):
    assert extract_list(reply) == expected


@pytest.mark.parametrize("reply", ["", "no list here", "[unclosed", "{'labels': 3}"])
def test_no_list(reply):
    assert extract_list(reply) is None


def test_check_labels_accepts_spelling_variants():
    res = check_labels('["Support", "partial support", "NOT-SUPPORT"]', 3, S3)
    assert res.ok and res.labels == ("support", "partial_support", "not_support")


def test_check_labels_wrong_length_and_unknown():
    res = check_labels('["support"]', 2, S3)
    assert not res.ok and res.labels is None and "expected exactly 2 labels, got 1" in res.problem
    res = check_labels('["support", "maybe"]', 2, S3)
    assert not res.ok and res.labels == ("support", None) and "'maybe'" in res.problem
    # a two-grade vocabulary does not accept partial_support
    res = check_labels('["partial_support"]', 1, ("support", "not_support"))
    assert not res.ok and res.labels == (None,)
    res = check_labels("[1, 2]", 2, S3)
    assert not res.ok


def test_check_nuggets():
    assert check_nuggets('["a  fact", " ", "b"]', 30) == (["a fact", "b"], None)
    assert check_nuggets("[]", 30)[1] == "the list of nuggets is empty"
    assert "at most 2" in check_nuggets('["a", "b", "c"]', 2)[1]
    assert check_nuggets("[1, 2]", 30)[1] == "every nugget must be a string"
