"""Hostile output paths and the round-two bad inputs (issue 25 items 11, 16, 17, 19; issue 23 item 5) through the
real ``metaeval`` commands, in subprocesses started together by one module fixture.

Every command that writes is given each hostile ``--out``: an empty path, a folder where a file is meant (or a
file where a folder is meant), a path under a file, a path in ``/proc``, a 300-byte name, a 5,000-byte path.
Each must end with exit status 2 and ONE error line naming the option, with no traceback and nothing created.
(A read-only folder and a full disk are tested in-process in ``tests/faults/test_faults_reliability.py``: this
suite runs as root in CI, where permissions do not stop a write.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.cli_cases import assert_no_traceback_and_exit, assert_one_error_line, run_all

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
DEMO = ROOT / "metaeval" / "data" / "demo"

#: command -> (argv before the output path, what the output is)
WRITERS: dict[str, tuple[list[str], str]] = {
    "score": (["score", f"{BAD}/good_small.jsonl", "--out"], "file"),
    "score-nuggetizer": (["score", f"{BAD}/good_small.jsonl", "--format", "nuggetizer", "--out"], "dir"),
    "analyze": (["analyze", "--reference", f"{BAD}/good_small.jsonl", "--candidate", f"{BAD}/unknown_labels.jsonl",
                 "--bootstrap", "0", "--out"], "dir"),
    "simulate": (["simulate", "--human", f"{DEMO}/assignments.jsonl", "--reps", "2", "--kind", "fig6", "--out"], "dir"),
    "assess": (["assess", "export-assignments", "--dataset", "demo", "--out"], "file"),
    "assign": (["assign", "--nuggets", f"{DEMO}/nuggets.jsonl", "--answers", f"{DEMO}/runs.jsonl", "--judge", "lexical",
                "--no-cache", "--out"], "file"),
    "bench": (["bench", "--quick", "--only", "scoring", "--out"], "file"),
}

#: hostile value -> (expected substring of the error, whether it applies to files / folders)
HOSTILE = {
    "empty": ("''", "an empty path"),
    "kind": (None, None),  # a folder where a file is meant, a file where a folder is meant
    "under-file": ("{tmp}/afile/x.out", "is a file, so nothing can be written under it"),
    "proc": ("/proc/metaeval-x.out", "kernel file system"),
    "long-name": ("{tmp}/" + "n" * 300, "over the file system's limit of 255"),
    "long-path": ("{tmp}/" + "p/" * 2500 + "x.out", "over the system's limit"),
}


@dataclass
class Case:
    id: str
    argv: list[str]
    rc: int
    must: tuple[str, ...]


def _cases() -> list[Case]:
    out = []
    for cmd, (argv, kind) in WRITERS.items():
        for h, (value, must) in HOSTILE.items():
            if h == "empty":
                value = ""
            if h == "kind":
                value, must = ("{tmp}", "is a folder; name a file") if kind == "file" else ("{tmp}/afile", "is a file; name a folder")
            if cmd == "score-nuggetizer" and h == "empty":
                must = "--format nuggetizer needs --out"
            out.append(Case(f"{cmd}-{h}", [*argv, value], 2, (must,)))
    sweep = ["sweep", "--no-progress", "runtime=serial", "grid=single", "judge=lexical", "strategy=human_auto",
             "analysis.bootstrap=0", "calibration.enabled=false"]
    out += [
        Case("sweep-results-under-a-file", [*sweep, "results_dir={tmp}/afile", "name=x"], 2, ("is a file, so nothing",)),
        Case("sweep-results-in-proc", [*sweep, "results_dir=/proc/metaeval", "name=x"], 2, ("kernel file system",)),
        Case("sweep-cache-path-a-folder", [*sweep, "results_dir={tmp}/r", "name=x", "judge=testserver", "cache.path={tmp}"],
             2, ("cache.path", "is a folder")),
        Case("report-a-file", ["report", "{tmp}/afile"], 2, ("afile",)),
        # issue 23 item 5: several runs and a --out named like a file: refused, no folder of that name made
        Case("score-nuggetizer-multi-run-file-name", ["score", f"{BAD}/good_small.jsonl", "--format", "nuggetizer",
                                                      "--out", "{tmp}/metrics_single.jsonl"], 2, ("names a file", "3 runs")),
        # item 11: TREC run ids with '+' are file names; one that cannot be is refused before any file
        Case("score-nuggetizer-plus-run-id", ["score", "{tmp}/plus.jsonl", "--format", "nuggetizer", "--out", "{tmp}/m"], 0, ()),
        Case("score-nuggetizer-bad-run-id", ["score", "{tmp}/slash.jsonl", "--format", "nuggetizer", "--out", "{tmp}/m"],
             2, ("run_id", "nothing was written")),
        # item 16: a lone surrogate in a text field
        Case("score-lone-surrogate", ["score", f"{BAD}/lone_surrogate.jsonl", "--out", "{tmp}/s.csv"], 0, ("surrogate", "U+FFFD")),
        Case("analyze-lone-surrogate", ["analyze", "--reference", f"{BAD}/good_small.jsonl", "--candidate",
                                        f"{BAD}/lone_surrogate.jsonl", "--bootstrap", "0", "--out", "{tmp}/a"], 0, ("surrogate",)),
        Case("calibrate-lone-surrogate", ["calibrate", "--human", f"{BAD}/good_small.jsonl", "--judge",
                                          f"{BAD}/lone_surrogate.jsonl", "--bootstrap", "0", "--out", "{tmp}/c"], 0, ("surrogate",)),
        Case("sweep-lone-surrogate", [*sweep, "results_dir={tmp}/r", "name=x", "dataset=trec-rag-2024",
                                      f"dataset.source={BAD}/lone_surrogate.jsonl"], 0, ("surrogate",)),
    ]
    # calibrate, plan and probe vet --out before any work: one error line, nothing created
    for cmd, argv in (("calibrate", ["calibrate", "--human", f"{DEMO}/assignments.jsonl", "--judge", f"{DEMO}/assignments.jsonl",
                                     "--bootstrap", "0", "--out"]),
                      ("plan", ["plan", "--reference", f"{DEMO}/assignments.jsonl", "--judge", f"{DEMO}/assignments.jsonl",
                                "--pilot", "4", "--out"]),
                      ("probe", ["probe", "--judge", "lexical", "--answers", "3", "--out"])):
        out.append(Case(f"{cmd}-under-file", [*argv, "{tmp}/afile/x.out"], 2, ("afile",)))
        out.append(Case(f"{cmd}-proc", [*argv, "/proc/metaeval-x.out"], 2, ("/proc/metaeval-x.out",)))
    return out


CASES = _cases()


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    tmp: Path


def _prepare(tmp: Path) -> None:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "afile").write_text("x\n", encoding="utf-8")
    lines = (BAD / "good_small.jsonl").read_text(encoding="utf-8").splitlines()
    for name, rid in (("plus.jsonl", "cohere+post_processing"), ("slash.jsonl", "team/run")):
        recs = [json.loads(x) for x in lines]
        for r in recs:
            if r["run_id"] == "demo-a":
                r["run_id"] = rid
        (tmp / name).write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")


def _run(case: Case, tmp: Path) -> Result:
    _prepare(tmp)
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    res = subprocess.run([sys.executable, "-m", "metaeval", *argv], capture_output=True, text=True, timeout=300, cwd=tmp)
    return Result(res.returncode, res.stdout, res.stderr, tmp)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Result]:
    return run_all(CASES, tmp_path_factory.mktemp("outs"), _run)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_output_or_bad_input(case: Case, results: dict[str, Result]) -> None:
    res = results[case.id]
    output = assert_no_traceback_and_exit(res, case.rc)
    if case.rc == 2:
        assert_one_error_line(res, case.must)
        made = sorted(p.name for p in res.tmp.iterdir() if p.name not in ("afile", "plus.jsonl", "slash.jsonl"))
        if not case.id.startswith(("probe", "report")):
            assert made == [], made  # nothing created (no folder named like a file, no half-written output)
    else:
        for s in case.must:
            assert s in output, f"{s!r} not in output:\n{output[-3000:]}"


def test_nuggetizer_files_for_plus_run_ids(results: dict[str, Result]) -> None:
    res = results["score-nuggetizer-plus-run-id"]
    names = sorted(p.name for p in (res.tmp / "m").iterdir())
    assert names == ["cohere+post_processing.jsonl", "demo-b.jsonl", "demo-c.jsonl"]


def test_no_cwd_output_for_an_empty_out(results: dict[str, Result]) -> None:
    """``analyze --out ''`` wrote into the working directory before (issue 25 item 19)."""
    assert not (results["analyze-empty"].tmp / "analysis.json").exists()
