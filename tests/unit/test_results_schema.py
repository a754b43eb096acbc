"""The results schema (``metaeval.study.records``): every record round-trips through its JSON; a file of another
schema version, a field of the wrong type, an unknown or a missing field each give ONE error naming the file and
the field; the JSON Schema in docs/ is the one the records declare, and the study's real files validate against it."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from metaeval.errors import FormatError
from metaeval.study.records import (RESULTS_SCHEMA, CellStats, CellSummary, Provenance, ResultsSchemaError, StudyCell,
                                    StudyDoc, Summary, TauEstimate, ThisRun, decode, encode, record_provenance,
                                    results_json_schema)
from tests.helpers import results as R

ROOT = Path(__file__).resolve().parents[2]


def _full_cell() -> dict:
    """A cell with every part the study writes (values of each declared type)."""
    lvl = {"tau": 0.5, "ci": [0.25, 0.75], "boot_mean": 0.49}
    return {"cell": "j__human_auto", "judge": "j", "prompt": "v1", "strategy": "human_auto",
            "judge_config": {"judge": "lexical", "seed": 3}, "judge_id": "abc", "prompt_id": "def",
            "stats": encode(CellStats(judge_calls=3, calls=2, cost_usd=0.25, prompts=("assign@v1:ff",),
                                      est_stage_calls={"assign": 3}, est_bound=True)),
            "this_run": encode(ThisRun(executed=1, reused=2, cost_usd=0.0)), "samples": 1, "labels": 10, "failed_labels": 1,
            "failed_importance": 0, "failure_rate": 0.1, "relevance": {"documents": 4},
            "analysis": {"name": "j__human_auto", "metrics": {"v_strict": {
                "run": lvl, "topic_avg": {**lvl, "n_topics": 7, "n_topics_skipped": 1}, "pooled": lvl,
                "cells": {"n_runs": 4}, "flips": {}, "top_heavy": {}, "diagnostics": {
                    "metric": "v_strict", "n_topics": 7, "n_runs": 4, "n_cells": 28, "min_topics": 10,
                    "too_few_topics": True, "all_tied_reference": False, "all_tied_candidate": False,
                    "undefined_topic_taus": 1, "defaulted_reference": None, "defaulted_candidate": 0,
                    "warnings": ["only 7 common topics"]}}},
                "cells": {"n_runs": 4}, "warnings": ["w"], "suggested_run_map": {"a": "b"},
                "labels": {"cohen_kappa": 0.4}, "labels_note": "n", "descriptive": {"topics": 7}},
            "calibration": R.calibration_doc({"selection": {"method": "raw"}}), "consistency": {"line": "tau 0.9"}}


def _full_summary(cells: list[dict] | None = None, **top) -> dict:
    """A summary document with every top-level part."""
    cells = cells or [_full_cell(), {"cell": "sk", "skipped": "cannot run"}, {"cell": "w", "withheld": "FAILED"}]
    parts = dict(dataset={"name": "demo", "topics": 8, "runs": 8, "answers": 64,
                          "provenance": {"dataset": "demo", "source": "bundled", "license": "MIT",
                                         "files": [{"filename": "a.tsv", "path": "/x/a.tsv", "md5": "m", "sha256": "s",
                                                    "size": 3, "verified": None, "origin": ""}],
                                         "synthetic": True, "description": "made up"}},
                 config={"analysis": {"metrics": ["v_strict"], "seed": 0}}, judging_s=1.5, runtime_start_s=0.1,
                 runtime_start="imports", stopped=None, elapsed_s=2.0, grid_notes=["left out: x"])
    return R.summary_doc(cells, **{**parts, **top})


def test_every_record_round_trips_through_its_json():
    doc = _full_summary()
    s = Summary.from_json(json.loads(json.dumps(doc)), "x/summary.json")
    assert s.to_json() == doc  # nothing lost, nothing added (absent parts stay absent)
    assert Summary.from_json(s.to_json(), "again") == s
    c = s.cells[0]
    assert isinstance(c, CellSummary) and c.tau("v_strict", "topic_avg").n_topics == 7
    assert c.tau("v_strict", "run") == TauEstimate(0.5, (0.25, 0.75), 0.49) and c.usage.prompts == ("assign@v1:ff",)
    assert c.tau("a_strict", "run").tau is None and s.cells[1].tau("v_strict", "run").ci == (None, None)
    assert [x.active for x in s.cells] == [True, False, False] and s.dataset.synthetic
    assert "withheld" not in s.to_json()["cells"][0] and s.to_json()["cells"][2]["withheld"] == "FAILED"
    sd = R.study_doc({"c": {"per_topic_tau": {"v_strict": [{"qid": "1", "tau": None, "n_runs": 4}]},
                            "leaderboard": {"level": 0.95, "n_boot": 10, "seed": 0,
                                            "metrics": {"v_strict": [{"run_id": "r", "raw": 0.5}]}},
                            "disagreements": {"v_strict": {"metric": "v_strict", "k": 3, "topics": [], "n_topics_undefined": 0}},
                            "bias": {"level": 0.95, "n_boot": 10, "seed": 0, "n_topics": 2, "metrics": {"v_strict": {
                                "mean": {"bias": 0.1, "ci": [0.0, 0.2]},
                                "runs": [{"run_id": "r", "bias": 0.1, "ci": [None, None], "n_topics": 2,
                                          "reference": 0.4, "judge": 0.5}]}}},
                            "strictness_by_importance": {"alpha": 0.05, "strata": {"all": {
                                "index": 0.2, "ci": [0.1, 0.3], "ci_method": "CR1", "n_pairs": 9, "n_topics": 2,
                                "p_lower": 0.3, "p_higher": 0.1, "n_support": 4, "support_to_partial": 0.25,
                                "support_to_not": 0.0, "not_raised": None}, "okay": None}},
                            "transcript_view": "cells/c/v.json"}})
    study = StudyDoc.from_json(sd, "x/study/study.json")
    assert study.to_json() == sd and study.cell("c").per_topic_tau["v_strict"][0].n_runs == 4
    assert isinstance(study.cell("c"), StudyCell) and study.cell("c").leaderboard.metrics["v_strict"][0]["raw"] == 0.5
    assert study.cell("c").bias.metrics["v_strict"].runs[0].judge == 0.5
    assert study.cell("c").strictness_by_importance.strata["all"].n_pairs == 9
    prov = record_provenance()
    assert decode(Provenance, encode(prov), "p") == prov and prov.packages["hydra-core"]
    assert replace(s, provenance=prov).to_json()["provenance"]["recorded_at"].endswith("Z")


def test_a_file_of_another_schema_version_gets_one_line_naming_it():
    doc = R.summary_doc([{"cell": "c"}])
    for version, shown in ((None, 0), (0, 0), (RESULTS_SCHEMA + 1, RESULTS_SCHEMA + 1)):
        old = {k: v for k, v in doc.items() if k != "schema_version"}
        if version is not None:
            old["schema_version"] = version
        with pytest.raises(ResultsSchemaError) as e:
            Summary.from_json(old, "results/x/summary.json", "`metaeval sweep name=x`")
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith(f"results/x/summary.json: written with results schema {shown}")
        assert f"reads results schema {RESULTS_SCHEMA}" in msg and "rerun `metaeval sweep name=x`" in msg
    # the study document of before the schema (format metaeval-study, "version": 1, no schema_version)
    with pytest.raises(ResultsSchemaError, match="study.json: written with results schema 0"):
        StudyDoc.from_json({"format": "metaeval-study", "version": 1, "cells": {}}, "x/study/study.json")
    with pytest.raises(FormatError, match="field 'format': expected 'metaeval-summary', got 'metaeval-study'"):
        Summary.from_json({**doc, "format": "metaeval-study"}, "s.json")


@pytest.mark.parametrize("change, field, says", [
    (lambda d: d["cells"][0].update(failure_rate="high"), "cells[0].failure_rate", "expected a number or null, got 'high'"),
    (lambda d: d["cells"][0].update(labels=True), "cells[0].labels", "expected an integer or null, got True"),
    (lambda d: d["cells"][0]["stats"].update(prompts="assign@v1"), "cells[0].stats.prompts", "expected a list of a string"),
    (lambda d: d["cells"][0]["analysis"]["metrics"]["v_strict"]["run"].update(ci=[0.1]),
     "cells[0].analysis.metrics.v_strict.run.ci", "expected a list of 2 values"),
    (lambda d: d["cells"][0].update(verdict="pass"), "cells[0].verdict", "not a field of CellSummary"),
    (lambda d: d.pop("evaluation_key"), "evaluation_key", "missing (a required field of Summary)"),
    (lambda d: d.update(cells={}), "cells", "expected a list of an object (CellSummary), got an object"),
])
def test_a_field_that_does_not_fit_is_named(change, field, says):
    doc = R.summary_doc([_full_cell()])
    change(doc)
    with pytest.raises(FormatError) as e:
        Summary.from_json(doc, "r/summary.json")
    assert e.value.path == "r/summary.json" and e.value.field == field and says in e.value.message, str(e.value)


def test_numbers_are_kept_as_written():
    """An int stays an int and a float keeps every digit: a file read and written again is byte-identical."""
    doc = _full_summary([{**_full_cell(), "failure_rate": 0}], judging_s=0.1 + 0.2)
    back = Summary.from_json(json.loads(json.dumps(doc)), "s").to_json()
    assert json.dumps(back, sort_keys=True) == json.dumps(doc, sort_keys=True)
    assert back["cells"][0]["failure_rate"] == 0 and type(back["cells"][0]["failure_rate"]) is int
    assert math.isclose(back["judging_s"], 0.30000000000000004, rel_tol=0, abs_tol=0)


def test_the_json_schema_in_docs_is_the_records_and_validates_the_files():
    schema = results_json_schema()
    assert json.loads((ROOT / "docs" / "results-schema.json").read_text(encoding="utf-8")) == schema, (
        "docs/results-schema.json is stale: python -c 'import json; from metaeval.study.records import "
        "results_json_schema as s; print(json.dumps(s(), indent=1))' > docs/results-schema.json")
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    v.validate(R.summary_doc([_full_cell()]))
    v.validate(R.study_doc({"c": {}}))
    bad = R.summary_doc([{**_full_cell(), "verdict": "pass"}])
    assert not v.is_valid(bad)  # an unknown field is refused there too


@pytest.mark.parametrize("tp, value, out", [
    (float, 3, 3), (float, 2.5, 2.5), (int, 4, 4), (bool, False, False), (str, "x", "x"),
    (float | None, None, None), (int | str, "7", "7"), (tuple[int, ...], [1, 2], (1, 2)),
    (tuple[str, float], ["a", 1], ("a", 1)), (dict[str, float], {"a": 1.5}, {"a": 1.5}),
])
def test_codec_decodes_scalars_and_shapes_as_annotated(tp, value, out):
    from metaeval.study.records.codec import decode

    got = decode(tp, value, "f.json", "x")
    assert got == out and type(got) is type(out)  # an int read for a float stays an int: the file reads back identical


@pytest.mark.parametrize("tp, value, message", [
    (float, True, "expected a number, got True"), (int, 1.5, "expected an integer, got 1.5"),
    (int, True, "expected an integer, got True"), (bool, 0, "expected true or false, got 0"),
    (str, 3, "expected a string, got 3"), (float | None, "a", "expected a number or null, got 'a'"),
    (tuple[int, ...], {"a": 1}, "expected a list of an integer, got an object"),
    (tuple[str, float], ["a"], "expected a list of 2 values, got a list"),
])
def test_codec_names_the_field_and_what_it_expected(tp, value, message):
    from metaeval.study.records.codec import decode

    with pytest.raises(FormatError) as e:
        decode(tp, value, "f.json", "cells[0].x")
    assert e.value.field == "cells[0].x" and message in str(e.value)
