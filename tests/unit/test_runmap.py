"""--run-map: parsing OLD=NEW / mapping files, renaming label sets and score tables, clear errors."""

import json

import pandas as pd
import pytest

from metaeval.errors import ConfigError, FormatError
from metaeval.io.runmap import parse_run_map, rename_runs, unused_keys
from metaeval.types import build_label_set


def _labels():
    rows = [("q1", "a", 0, "n1", "vital", "support", "vital", "support", 1),
            ("q1", "b", 0, "n1", "vital", "not_support", "vital", "not_support", 2)]
    answers = [("q1", "a", "text a", 2, 1), ("q1", "b", "text b", 2, 2)]
    return build_label_set("x", rows, answers, topics={"q1": "query"})


def test_parse_pairs_and_files(tmp_path):
    assert parse_run_map(["a=A", " b = B "]) == {"a": "A", "b": "B"}
    js = tmp_path / "m.json"
    js.write_text(json.dumps({"c": "C"}))
    ya = tmp_path / "m.yaml"
    ya.write_text("d: D\n")
    tx = tmp_path / "m.txt"
    tx.write_text("# old new\ne\tE\nf F\n\ng=G  # comment\n")
    assert parse_run_map([str(js), str(ya), str(tx), "a=A"]) == {"c": "C", "d": "D", "e": "E", "f": "F", "g": "G", "a": "A"}
    assert parse_run_map(None) == {} and parse_run_map("a=A") == {"a": "A"}


def test_parse_errors_name_the_place(tmp_path):
    with pytest.raises(ConfigError, match="expected OLD=NEW or a mapping file"):
        parse_run_map(["no-equals-sign"])
    with pytest.raises(ConfigError, match="mapped to 'B'.*maps it to 'A'"):
        parse_run_map(["a=A", "a=B"])
    with pytest.raises(ConfigError, match="empty run name"):
        parse_run_map(["a="])
    bad = tmp_path / "bad.txt"
    bad.write_text("a A extra\n")
    with pytest.raises(FormatError, match="bad.txt:1"):
        parse_run_map([str(bad)])
    lst = tmp_path / "list.yaml"
    lst.write_text("- a\n- b\n")
    with pytest.raises(FormatError, match="one mapping"):
        parse_run_map([str(lst)])


def test_rename_label_set_and_table_without_touching_the_input():
    ls = _labels()
    out = rename_runs(ls, {"a": "A", "zzz": "Z"})
    assert out.run_ids == ["A", "b"] and sorted(out.labels["run_id"]) == ["A", "b"]
    assert ls.run_ids == ["a", "b"]  # the input is unchanged
    assert out.provenance["run_map"] == {"a": "A"}
    df = pd.DataFrame({"run_id": ["a", "b"], "qid": ["q1", "q1"], "metric": ["v", "v"], "value": [1.0, 0.0]})
    assert rename_runs(df, {"b": "B"})["run_id"].tolist() == ["a", "B"] and df["run_id"].tolist() == ["a", "b"]
    assert unused_keys({"a": "A", "zzz": "Z"}, ls, df) == ["zzz"]


def test_rename_collision_is_an_error():
    with pytest.raises(ConfigError, match="runs 'a' and 'b' would both be named 'b'"):
        rename_runs(_labels(), {"a": "b"})
