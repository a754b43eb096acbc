"""Assessor workflow: export judge nuggets, edit them, import, run human_auto on them; manual assignment sheets."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from metaeval.io.assignments import read_assignments
from metaeval.io.nuggets import read_nuggets


def metaeval(*args):
    res = subprocess.run([sys.executable, "-m", "metaeval", *map(str, args)], capture_output=True, text=True, timeout=300)
    return res


@pytest.fixture(scope="module")
def auto_results(tmp_path_factory):
    root = tmp_path_factory.mktemp("assess")
    res = metaeval("sweep", "--no-progress", f"results_dir={root}", "name=a", "runtime=serial", "grid=single",
                   "judge=lexical", "strategy=auto_auto", "calibration.enabled=false", "analysis.bootstrap=0")
    assert res.returncode == 0, res.stderr[-2000:]
    return root / "a"


def test_export_edit_import_nuggets_then_human_auto(auto_results, tmp_path):
    sheet = tmp_path / "nuggets.csv"
    res = metaeval("assess", "export-nuggets", auto_results, "--cell", "lexical__auto_auto", "--out", sheet)
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(open(sheet, encoding="utf-8")))
    jobs = [json.loads(x) for x in (auto_results / "jobs.jsonl").read_text(encoding="utf-8").splitlines()]
    created = {j["spec"]["qid"]: j["output"]["nuggets"] for j in jobs if j["spec"]["stage"] == "create"}
    assert len(rows) == sum(len(v) for v in created.values()) and all(r["importance"] == "" for r in rows)
    # the assessor deletes the first nugget of every topic, rewrites one, adds one, labels importance
    edited, seen = [], set()
    for r in rows:
        if r["qid"] not in seen:
            seen.add(r["qid"])
            r["nugget"] = ""
        r["importance"] = "vital" if int(r["nugget_id"]) % 2 else "okay"
        edited.append(r)
    edited[1]["nugget"] = "A rewritten nugget"
    edited.append({"qid": rows[0]["qid"], "query": "", "nugget_id": "", "nugget": "An added nugget", "importance": "maybe"})
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(edited)
    out = tmp_path / "edited.jsonl"
    res = metaeval("assess", "import-nuggets", sheet, "--out", out)
    assert res.returncode == 0, res.stderr
    assert "1 unknown importance values kept as FAILED" in res.stdout and f"{sheet}:{len(edited) + 1}" in res.stderr
    nug = read_nuggets(out)
    assert len(nug) == len(rows) - len(created) + 1
    assert "A rewritten nugget" in set(nug["nugget"]) and "An added nugget" in set(nug["nugget"])
    res = metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=edited", "runtime=serial", "grid=single",
                   "judge=lexical", "strategy=human_auto", f"dataset.nuggets={out}", "calibration.enabled=false", "analysis.bootstrap=0")
    assert res.returncode == 0, res.stderr[-2000:]
    labels = read_assignments(tmp_path / "edited" / "cells" / "lexical__human_auto" / "labels.jsonl")
    assert set(labels.labels["nugget"]) == set(nug["nugget"])


def test_manual_assignment_sheet_round_trip(tmp_path):
    sheet = tmp_path / "assign.csv"
    res = metaeval("assess", "export-assignments", "--dataset", "demo", "--out", sheet)
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(open(sheet, encoding="utf-8")))
    assert rows and all(r["label"] == "" for r in rows)
    for i, r in enumerate(rows):
        r["label"] = ("support", "partial_support", "not_support")[i % 3]
    rows[5]["label"] = "sort of"
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = tmp_path / "manual.jsonl"
    res = metaeval("assess", "import-assignments", sheet, "--out", out)
    assert res.returncode == 0 and "1 empty or unknown labels kept as FAILED" in res.stdout
    ls = read_assignments(out)
    assert len(ls.labels) == len(rows) and ls.failure_counts()["support_failed"] == 1
    assert [p.line for p in ls.problems] == [next(i for i, ln in enumerate(open(out, encoding="utf-8"), 1) if "sort of" in ln)]
