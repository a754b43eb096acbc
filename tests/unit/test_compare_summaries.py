"""scripts/compare_summaries.py: two summary.json files compared field by field (numbers numerically)."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compare_summaries.py"
_spec = importlib.util.spec_from_file_location("compare_summaries", SCRIPT)
cs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cs)

# the shape of a sweep's summary.json (keys as the demo sweep writes them), cut down
SUMMARY = {
    "format": "metaeval-summary",
    "evaluation_key": "7c0cb9dffe38b1cdfb8ddc29e47b9612",
    "evaluation_reused": False,
    "dataset": {"name": "demo", "topics": 8, "provenance": {"files": [
        {"filename": "topics.tsv", "path": "/work/main/metaeval/data/demo/topics.tsv", "size": 376}]}},
    "judging_s": 0.2034,
    "cells": [
        {"cell": "lexical__auto_auto", "stats": {"judge_calls": 152, "cost_usd": 0.0},
         "agreement": {"cohen_kappa": 0.41, "cohen_kappa_ci": [0.3, 0.52], "tau": float("nan")}},
        {"cell": "simulated_fig6__human_auto", "stats": {"judge_calls": 128, "cost_usd": 0.0},
         "agreement": {"cohen_kappa": 0.77, "cohen_kappa_ci": [0.7, 0.84], "tau": 0.9}},
    ],
    "elapsed_s": 12.5,
}


def diffs(old, new, **kw):
    return list(cs.differences(old, new, **kw))


def test_identical_summaries_have_no_difference():
    assert diffs(SUMMARY, copy.deepcopy(SUMMARY)) == []


def test_every_changed_field_is_reported_with_its_path_and_values():
    new = copy.deepcopy(SUMMARY)
    new["cells"][1]["agreement"]["cohen_kappa_ci"][0] = 0.71
    new["cells"][0]["stats"]["judge_calls"] = 151
    new["dataset"]["name"] = "demo2"
    got = diffs(SUMMARY, new)
    assert got == [
        "cells[lexical__auto_auto].stats.judge_calls: 152 -> 151 (difference -1)",
        "cells[simulated_fig6__human_auto].agreement.cohen_kappa_ci[0]: 0.7 -> 0.71 (difference +0.01)",
        "dataset.name: \"demo\" -> \"demo2\"",
    ]


def test_timing_paths_version_and_cache_key_are_ignored():
    new = copy.deepcopy(SUMMARY)
    new.update(judging_s=9.9, elapsed_s=99.0, evaluation_key="0" * 32, evaluation_reused=True, metaeval_version="9")
    new["dataset"]["provenance"]["files"][0]["path"] = "/elsewhere/topics.tsv"
    assert diffs(SUMMARY, new) == []
    new["dataset"]["provenance"]["files"][0]["size"] = 377  # ... but not the fields next to them
    assert diffs(SUMMARY, new) == ["dataset.provenance.files[topics.tsv].size: 376 -> 377 (difference +1)"]


def test_numbers_compare_numerically_nan_equal_bool_not_a_number():
    assert diffs({"a": 1, "b": float("nan")}, {"a": 1.0, "b": math.nan}) == []
    assert diffs({"a": 1}, {"a": True}) == ["a: 1 -> true"]
    assert diffs({"a": float("nan")}, {"a": 0.0}) == ["a: nan -> 0.0 (difference +nan)"]
    assert diffs({"a": 1.0}, {"a": 1.0 + 1e-12}) != []  # exact by default
    assert diffs({"a": 1.0}, {"a": 1.0 + 1e-12}, rtol=1e-9) == []
    assert diffs({"a": 0.0}, {"a": 1e-7}, atol=1e-6) == []


def test_records_are_matched_by_their_identity_not_their_position():
    new = copy.deepcopy(SUMMARY)
    new["cells"].reverse()
    assert diffs(SUMMARY, new) == []
    del new["cells"][0]
    new["cells"].append({"cell": "embedding__auto_auto"})
    assert diffs(SUMMARY, new) == ["cells[simulated_fig6__human_auto]: only in OLD",
                                   "cells[embedding__auto_auto]: only in NEW"]


def test_missing_keys_and_list_lengths_are_reported():
    assert diffs({"a": 1, "b": [1, 2]}, {"b": [1], "c": None}) == [
        "a: only in OLD (1)", "b[1]: only in OLD (2)", "c: only in NEW (null)"]


def _run(tmp_path: Path, old, new, *args) -> subprocess.CompletedProcess:
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    return subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "old.json"), str(tmp_path / "new.json"), *args],
                          capture_output=True, text=True, timeout=60)


def test_cli_exit_status_and_output(tmp_path):
    same = _run(tmp_path, SUMMARY, SUMMARY)
    assert same.returncode == 0 and same.stdout.startswith("0 differing field(s)"), same
    new = copy.deepcopy(SUMMARY)
    new["cells"][0]["agreement"]["cohen_kappa"] = 0.42
    new["elapsed_s"] = 1.0
    out = _run(tmp_path, SUMMARY, new)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "cells[lexical__auto_auto].agreement.cohen_kappa: 0.41 -> 0.42 (difference +0.01)",
        f"1 differing field(s) between {tmp_path / 'old.json'} and {tmp_path / 'new.json'} (numbers exactly)"]
    assert _run(tmp_path, SUMMARY, new, "--atol", "0.02").returncode == 0
    assert _run(tmp_path, SUMMARY, new, "--ignore", "cohen_kappa").returncode == 0


@pytest.mark.parametrize("text", ["{not json", None])
def test_cli_unreadable_file_exits_2(tmp_path, text):
    old = tmp_path / "old.json"
    old.write_text(json.dumps(SUMMARY))
    new = tmp_path / "missing.json"
    if text is not None:
        new.write_text(text)
    out = subprocess.run([sys.executable, str(SCRIPT), str(old), str(new)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "cannot read" in out.stderr and str(new) in out.stderr
