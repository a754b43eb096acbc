"""The cell blocks of the results schema that were open mappings: the calibration block (``CellCalibration``, its
candidates, selection, leaderboard, rank-sets), label agreement and self-consistency (open records).  Each reads
back and writes out the same JSON, key order included (``summary.json`` stays byte-identical); a value that does not
fit names the file and the field; the report reads them as records, with no ``.get(...) or {}`` chain left."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metaeval.errors import FormatError
from metaeval.study.records import (CalibrationFailure, CellCalibration, CellConsistency, ConsistencyFailure,
                                    LabelAgreement, RankSets, RankSetsUnavailable, Summary, decode, encode)
from tests.helpers import results as R

ROOT = Path(__file__).resolve().parents[2]

_HELD = {"mae": {"mean": 0.1, "se": 0.02}, "bias": -0.01, "rmse": 0.12, "diff_vs_raw": {"mean": -0.02, "se": 0.01},
         "tau": {"run": 0.8, "topic_avg": 0.5, "pooled": 0.6}, "tau_diff_vs_raw": {"mean": 0.0, "se": None}, "wins": 7,
         "splits": 10, "fit_topics": 5, "held_out_topics": 2, "n_estimates": 40, "point": "point estimate",
         "intervals": "PPI++", "coverage": 0.9, "coverage_worst_run": 0.7, "mean_ci_width": 0.3, "zero_width": 0,
         "qualifies": True, "coverage_needed": 0.87}
_ROW = {"run_id": "r1", "human_estimate": 0.5, "human_estimate_ci": [0.4, 0.6], "human_estimate_rank": 1,
        "human_labelled": 0.55, "human_labelled_rank": 1, "judge_score": 0.4, "judge_score_ci": [0.3, None],
        "judge_score_rank": 2, "n_human_labelled": 5, "n_judge_only": 3, "corrected_judge_only": None,
        "corrected_judge_only_ci": [None, None]}
_TAU = {"estimate": 0.8, "ci": [0.6, 1.0], "level": 0.95, "plug_in": 0.8}
_RANK_SETS = {"status": "ok", "metric": "v_strict", "method": "ppi_pp", "lambda": 0.9, "level": 0.95, "n_boot": 100,
              "seed": 0, "critical_value": 2.5, "human_labelled_topics": 5, "topics": 8, "runs": 2,
              "runs_left_out": ["r3"], "summary": {"pairs": 1, "decided_pairs": 1, "mean_rank_set_size": 1.0,
                                                   "mean_naive_interval_size": 1.0, "groups": 2},
              "note": "n", "columns": {"rank_set": "ranks"},
              "rows": [{"run_id": "r1", "estimate": 0.5, "rank": 1, "rank_set": [1, 1], "naive_rank_interval": [1, 1],
                        "group": "a", "beats": 1, "beaten_by": 0}],
              "pairs": [{"a": "r1", "b": "r2", "diff": 0.1, "ci": [0.05, 0.15], "decision": ">"}],
              "tau": {"ppi_pp": _TAU, "raw_judge": _TAU, "shown": {**_TAU, "by": "ppi", "treated_as": "fixed"}}}


def _full_calibration() -> dict:
    """A calibration block with every part the workflow writes (the optional ones included)."""
    doc = R.calibration_doc({
        "candidates": {"raw": {"held_out": _HELD}, "ppi": {"held_out": _HELD},
                       "matrix": {"level": "label", "status": "refused", "reason": "no pairs"}},
        "selection": {"method": "ppi", "verdict": "correction beats the baseline", "wins": {"raw": 3, "ppi": 7},
                      "nested_choices": {"ppi": 3}, "nested_splits": 3},
        "leaderboard": {"judge_only_topics": 3, "rows": [_ROW]}, "method_names": {"ppi": "PPI"},
        "rank_sets": _RANK_SETS, "strictness": {"any": ["open"]}})
    doc["by_metric"] = {"v_strict": {k: doc[k] for k in ("candidates", "selection", "leaderboard", "recommendation")}}
    doc = {**{k: v for k, v in doc.items() if k not in ("rank_sets", "strictness")}, "rank_sets": doc["rank_sets"],
           "strictness": doc["strictness"]}  # the workflow's order: by_metric, then rank_sets (then strictness)
    return json.loads(json.dumps(doc))  # no part shared between candidates (as in a file)


def _same_json(a, b) -> bool:
    """Equal as written: the same text, key order included."""
    return json.dumps(a) == json.dumps(b)


def test_the_calibration_block_round_trips_key_order_included():
    doc = _full_calibration()
    cal = decode(CellCalibration, json.loads(json.dumps(doc)), "x/summary.json", "cells[0].calibration")
    assert _same_json(encode(cal), doc)
    assert cal.candidates["ppi"].held_out.coverage_needed == 0.87 and cal.candidates["matrix"].held_out is None
    assert cal.selection.method == "ppi" and cal.selection.nested_choices == {"ppi": 3}
    assert cal.leaderboard.rows[0].judge_score_ci == (0.3, None) and cal.method_name("ppi") == "PPI"
    assert isinstance(cal.rank_sets, RankSets) and cal.rank_sets.lambda_ == 0.9 and cal.rank_sets.tau.shown.by == "ppi"
    assert cal.for_metric("v_strict").selection == cal.selection
    # a key that was not written stays out (the leaderboard row of a cell with every topic labelled; no
    # coverage_needed without intervals), also when the value it would hold is null
    bare = {k: v for k, v in _ROW.items() if not k.startswith("corrected")}
    lean = R.calibration_doc({"candidates": {"raw": {"held_out": {k: v for k, v in _HELD.items()
                                                                   if k != "coverage_needed"}}},
                              "leaderboard": {"rows": [bare]}})
    assert _same_json(encode(decode(CellCalibration, lean, "f")), lean)
    assert _same_json(encode(decode(CellCalibration, doc, "f").leaderboard.rows[0]), _ROW)  # null kept when written


def test_a_track_tau_with_its_bounds_round_trips_and_one_written_before_them_still_reads():
    """The bounds holding for any ranking (issue 30) sit after plug_in and before by / treated_as, as
    ``rank_sets_block`` writes them; a file without them reads with ``bounds`` None and writes out without them."""
    from metaeval.study.records import TrackTau

    new = {**_TAU, "bounds": [0.1, 1.0], "bounds_method": "95% bounds holding for any ranking", "by": "ppi",
           "treated_as": "fixed"}
    t = decode(TrackTau, new, "f")
    assert t.bounds == (0.1, 1.0) and t.bounds_method.startswith("95%") and _same_json(encode(t), new)
    old = decode(TrackTau, {**_TAU, "by": "ppi"}, "f")
    assert old.bounds is None and old.bounds_method is None and _same_json(encode(old), {**_TAU, "by": "ppi"})
    with pytest.raises(FormatError, match="bounds"):
        decode(TrackTau, {**_TAU, "bounds": [0.1]}, "f")


def test_rank_sets_not_computed_and_a_failed_calibration_are_their_own_records():
    na = {"status": "n/a", "reason": "fewer than 2 runs", "metric": "v_strict"}
    cal = decode(CellCalibration, R.calibration_doc({"rank_sets": na}), "f")
    assert isinstance(cal.rank_sets, RankSetsUnavailable) and not cal.rank_sets.ok
    assert _same_json(encode(cal.rank_sets), na)
    cells = [{"cell": "c", "calibration": {"error": "ConfigError: too few topics"},
              "consistency": {"error": "ValueError: x", "k": 3}}]
    s = Summary.from_json(R.summary_doc(cells), "x/summary.json")
    assert isinstance(s.cells[0].calibration, CalibrationFailure) and s.cells[0].calibrated is None
    assert isinstance(s.cells[0].consistency, ConsistencyFailure) and s.cells[0].consistency.k == 3
    assert _same_json(s.to_json()["cells"], R.summary_doc(cells)["cells"])


@pytest.mark.parametrize("where, bad, field", [
    (("selection", "beats_raw"), "yes", "cells[0].calibration.selection.beats_raw"),
    (("candidates", "ppi", "held_out", "mae", "mean"), "0.1", "cells[0].calibration.candidates.ppi.held_out.mae.mean"),
    (("leaderboard", "rows", 0, "human_estimate_rank"), 1.5, "cells[0].calibration.leaderboard.rows[0].human_estimate_rank"),
    (("rank_sets", "rows", 0, "rank_set"), [1], "cells[0].calibration.rank_sets.rows[0].rank_set"),
    (("rank_sets", "tau", "shown", "estimate"), "high", "cells[0].calibration.rank_sets.tau.shown.estimate"),
])
def test_a_bad_calibration_value_names_the_file_and_the_field(where, bad, field):
    doc = _full_calibration()
    node = doc
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = bad
    with pytest.raises(FormatError) as e:
        Summary.from_json(R.summary_doc([{"cell": "c", "calibration": doc}]), "res/demo/summary.json")
    msg = str(e.value)
    assert "res/demo/summary.json" in msg and field in msg and "\n" not in msg, msg


def test_an_unknown_or_missing_calibration_field_is_named():
    doc = _full_calibration()
    doc["selection"]["chosen_by"] = "vote"
    with pytest.raises(FormatError, match=r"cells\[0\]\.calibration\.selection\.chosen_by.*not a field of Selection"):
        Summary.from_json(R.summary_doc([{"cell": "c", "calibration": doc}]), "s.json")
    doc = _full_calibration()
    del doc["pairing"]["coverage"]
    with pytest.raises(FormatError, match=r"cells\[0\]\.calibration\.pairing\.coverage.*missing"):
        Summary.from_json(R.summary_doc([{"cell": "c", "calibration": doc}]), "s.json")


def test_the_study_hands_over_a_computed_block_and_the_summary_types_it():
    """``study.run`` puts the block it computed (a dict) into the cell; the cell holds the record, checked."""
    from metaeval.study.records import CellSummary

    c = CellSummary(cell="c", calibration=_full_calibration(), consistency={"line": "k=2", "k": 2})
    assert isinstance(c.calibration, CellCalibration) and isinstance(c.consistency, CellConsistency)
    with pytest.raises(FormatError, match=r"cells\[c\]\.calibration\.selection\.splits"):
        bad = _full_calibration()
        bad["selection"]["splits"] = None
        CellSummary(cell="c", calibration=bad)


def test_open_records_keep_what_they_do_not_declare_in_the_order_written():
    lab = {"order": ["not_support", "partial_support", "support"], "n": 10, "cohen_kappa": 0.4,
           "stuart_maxwell_clustered_p": 0.2, "zz_new": {"x": 1}, "strictness_index": 0.1, "strictness_ci": [0.0, 0.2],
           "shifts": [{"reference": "support", "candidate": "partial_support", "count": 2}],
           "failed": {"reference": 0, "candidate": 1}, "clustered": {"kappa_ci_topic": [0.1, 0.5],
                                                                    "strictness_ci_topic": [-0.1, 0.3]}}
    rec = decode(LabelAgreement, lab, "s.json", "labels")
    assert _same_json(encode(rec), lab)
    assert rec.strictness_interval == (-0.1, 0.3) and rec.clustered_stuart_maxwell() == {"stuart_maxwell_clustered_p": 0.2}
    assert rec.extra["zz_new"] == {"x": 1} and rec.failed_count("candidate") == 1 and rec.weighted_kappa is None
    with pytest.raises(FormatError, match=r"labels\.cohen_kappa.*expected a number or null, got 'high'"):
        decode(LabelAgreement, {**lab, "cohen_kappa": "high"}, "s.json", "labels")
    cons = {"schema": "metaeval.consistency/1", "k": 3, "metric": "v_strict", "metric_name": "V_strict", "flip": {},
            "tau": {}, "topics": 4, "runs": 3, "reference": None, "line": "k=3: ...",
            "calibration": {"folds": 2, "repeats": 3, "n_boot": 5, "variants": {"hard": {"none": {"mae": 0.1}}},
                            "line": "hard 0.1", "first_variant": "hard"}}
    rec = decode(CellConsistency, cons, "s.json", "consistency")
    assert _same_json(encode(rec), cons) and rec.calibration.line == "hard 0.1" and rec.line == "k=3: ..."


def test_to_jsonable_writes_a_record_as_its_json():
    """The study's reuse path passes the records read back through ``to_jsonable``: they stay their JSON."""
    from metaeval.io.jsonl import to_jsonable

    cal = decode(CellCalibration, _full_calibration(), "f")
    assert _same_json(to_jsonable(cal), _full_calibration())
    assert to_jsonable(CalibrationFailure("E: x")) == {"error": "E: x"}


def test_the_json_schema_declares_the_blocks():
    from metaeval.study.records import results_json_schema

    defs = results_json_schema()["$defs"]
    assert defs["CellSummary"]["properties"]["calibration"]["anyOf"][0] == {"$ref": "#/$defs/CellCalibration"}
    assert "lambda" in defs["RankSets"]["properties"] and "lambda_" not in defs["RankSets"]["properties"]
    assert defs["LabelAgreement"]["additionalProperties"] is True and defs["Selection"]["additionalProperties"] is False
    assert "coverage_needed" not in defs["HeldOut"]["required"] and "mae" in defs["HeldOut"]["required"]


def test_no_get_or_empty_chains_under_report():
    """The report reads the records' fields: no ``x.get(...) or {}`` fallback that hides a missing part."""
    chain = re.compile(r"\.get\(.*\) or \{\}")
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in sorted((ROOT / "metaeval" / "report").glob("*.py"))
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if chain.search(line)]
    assert hits == [], "\n".join(hits)


def test_disagreements_are_records_and_read_back_as_written():
    from metaeval.study.records import Disagreements, StudyDoc

    pair = {"run_id": "r1", "nugget": "n", "importance": "vital", "human": "support", "judge": "not_support",
            "answer_excerpt": "x", "judge_reply": "no", "judge_position": 2}
    dis = {"metric": "v_strict", "k": 3, "topics": [
        {"qid": "q1", "query": "why", "tau": -0.2, "n_runs": 4,
         "answers": [{"run_id": "r1", "reference": 0.5, "judge": None, "reference_rank": 1, "judge_rank": 4}],
         "pairs": []},
        {"qid": "q2", "query": "", "tau": 0.1, "n_runs": 4, "answers": [], "pairs": [pair]},
        {"qid": "q3", "query": "", "tau": 0.2, "n_runs": 4, "answers": [], "nugget_lists": [{"run_id": "r1"}]}],
           "n_topics_undefined": 1, "replies_note": "transcripts unreadable"}
    doc = R.study_doc({"c": {"disagreements": {"v_strict": dis}}})
    study = StudyDoc.from_json(json.loads(json.dumps(doc)), "x/study/study.json")
    d = study.cell("c").disagreements["v_strict"]
    assert isinstance(d, Disagreements) and _same_json(encode(d), dis)
    assert d.topics[0].pairs == () and d.topics[2].pairs is None and d.topics[1].pairs[0]["judge_position"] == 2
    bad = json.loads(json.dumps(doc))
    bad["cells"]["c"]["disagreements"]["v_strict"]["topics"][1]["n_runs"] = "4"
    with pytest.raises(FormatError, match=r"x/study/study\.json.*cells\.c\.disagreements\.v_strict\.topics\[1\]\.n_runs"):
        StudyDoc.from_json(bad, "x/study/study.json")


def test_a_bad_diagnostics_value_is_named():
    """The analysis' per-metric diagnostics are a record: a wrong flag names its field."""
    from metaeval.study.records import Diagnostics

    diag = {"metric": "v_strict", "n_topics": 7, "n_runs": 4, "n_cells": 28, "min_topics": 10, "too_few_topics": True,
            "all_tied_reference": False, "all_tied_candidate": False, "undefined_topic_taus": 0,
            "defaulted_reference": None, "defaulted_candidate": 2, "warnings": ["only 7 common topics (< 10)"]}
    cell = {"cell": "c", "analysis": {"metrics": {"v_strict": {"diagnostics": diag}}}}
    s = Summary.from_json(R.summary_doc([cell]), "s.json")
    d = s.cells[0].analysis.metrics["v_strict"].diagnostics
    assert isinstance(d, Diagnostics) and d.too_few_topics and _same_json(encode(d), diag)
    cell["analysis"]["metrics"]["v_strict"]["diagnostics"] = {**diag, "too_few_topics": "no"}
    with pytest.raises(FormatError, match=r"s\.json.*cells\[0\]\.analysis\.metrics\.v_strict\.diagnostics\.too_few_topics"):
        Summary.from_json(R.summary_doc([cell]), "s.json")


def test_the_api_reads_a_calibration_document_as_the_record():
    """``metaeval.calibrate``'s CalibrationResult reads the document through the same record."""
    import math

    from metaeval.api_results import CalibrationResult

    res = CalibrationResult.from_json({**_full_calibration(), "model": {"fitted": 1}})
    assert res.model == {"fitted": 1} and "model" not in res.json and res.metric == "v_strict"
    assert res.selection.to_dict("records") == [{"metric": "v_strict", "method": "ppi",
                                                 "verdict": "correction beats the baseline", "raw_mae": None,
                                                 "held_out_mae": None, "beats_raw": False, "n_topics": 0}]
    assert list(res.candidates["held_out_mae"])[:2] == [0.1, 0.1] and res.candidates["status"].iloc[2] == "refused"
    row = res.leaderboard.iloc[0]
    assert row["judge_score_lo"] == 0.3 and math.isnan(row["judge_score_hi"]) and math.isnan(row["corrected_judge_only_lo"])
    bad = _full_calibration()
    bad["selection"]["beats_raw"] = "yes"
    with pytest.raises(FormatError, match=r"calibration\.json.*selection\.beats_raw"):
        CalibrationResult.from_json(bad)
