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


def test_suggest_run_map_pairs_near_matches_once_and_leaves_shared_runs():
    from metaeval.io.runmap import suggest_run_map

    ref = ["baseline_frag_rag24.test_gpt-4o_top20", "baseline_frag_rag24.test_command-r-plus_top20", "shared", "zzz"]
    cand = ["baseline_rag24.test_gpt-4o_top20", "baseline_rag24.test_command-r-plus_top20", "shared", "unrelated"]
    got = suggest_run_map(ref, cand)
    assert got == {"baseline_rag24.test_gpt-4o_top20": "baseline_frag_rag24.test_gpt-4o_top20",
                   "baseline_rag24.test_command-r-plus_top20": "baseline_frag_rag24.test_command-r-plus_top20"}
    # each reference run is used once: two candidate names close to one reference name -> only the closer one
    assert suggest_run_map(["run-a1"], ["run-a1x", "run-a1xy"]) == {"run-a1x": "run-a1"}
    assert suggest_run_map(["a", "b"], ["a", "b"]) == {} and suggest_run_map(["abc"], ["xyz"]) == {}


def _table(runs, qids=("q1", "q2", "q3", "q4", "q5")):
    rows = [{"run_id": r, "qid": q, "v_strict": (i + 1) / (len(runs) + 1) + 0.01 * j}
            for i, r in enumerate(runs) for j, q in enumerate(qids)]
    return pd.DataFrame(rows)


def test_analyze_warns_below_four_shared_runs_and_suggests_the_run_map():
    from metaeval.analysis.meta_evaluation import MIN_SHARED_RUNS, analyze
    from metaeval.commands.analyze import format_summary

    ref = _table(["team_run1", "team_run2", "team_run3", "base"])
    cand = _table(["team-run1", "team-run2", "team_run3", "base"])  # only 2 shared: team_run3, base
    res = analyze(ref, cand, n_boot=50, seed=1)
    block = res.json["candidates"]["candidate_1"]
    assert block["cells"]["n_runs"] == 2 < MIN_SHARED_RUNS
    assert block["suggested_run_map"] == {"team-run1": "team_run1", "team-run2": "team_run2"}
    assert len(res.json["warnings"]) == 1 and "only 2 run(s) shared" in res.json["warnings"][0]
    assert "meaningless" in res.json["warnings"][0]
    text = format_summary(res)
    assert "warning: only 2 run(s) shared with the reference" in text
    assert "--run-map team-run1=team_run1 --run-map team-run2=team_run2" in text
    # with 4 shared runs: no warning, nothing to suggest
    ok = analyze(ref, ref.assign(v_strict=ref["v_strict"] * 0.9), n_boot=50, seed=1)
    assert ok.json["warnings"] == [] and ok.json["candidates"]["candidate_1"]["suggested_run_map"] == {}
    assert "warning:" not in format_summary(ok) and "hint:" not in format_summary(ok)


def test_analyze_with_no_shared_run_names_the_run_map_in_its_error():
    from metaeval.analysis.meta_evaluation import analyze

    ref = _table(["baseline_frag_rag24.test_gpt-4o_top20", "other_team"])
    cand = _table(["baseline_rag24.test_gpt-4o_top20"])
    with pytest.raises(ConfigError, match=r"share no \(topic, run\) cell.*nearly match: --run-map "
                                          r"baseline_rag24\.test_gpt-4o_top20=baseline_frag_rag24\.test_gpt-4o_top20"):
        analyze(ref, cand, n_boot=0)
