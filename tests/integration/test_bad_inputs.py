"""The bad-input corpus (``tests/data/bad/``, see its README) through the real ``metaeval`` commands.

Every case runs the command a user would run, in a subprocess, and checks: no traceback anywhere in the output;
where nothing is usable, exit status 2 and ONE error line naming the file (and line and field where they exist);
where the rest is usable, exit status 0, a result for the rest and a warning naming what was skipped or FAILED.

The subprocesses of all cases are started together (a few at a time) by one module fixture, so the corpus costs
about as much wall time as its slowest few commands.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from tests.helpers.cli_cases import assert_no_traceback_and_exit, assert_one_error_line, run_all

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Case:
    id: str
    argv: list[str]  # arguments after "metaeval"; "{tmp}" is replaced by the case's own temporary folder
    rc: int
    must: tuple[str, ...] = ()  # substrings of the error line (rc 2) or of stderr+stdout (rc 0)
    check: Callable[["Result"], None] | None = None
    names_files: bool = False  # the error must name both input files (disjoint reference and candidate)


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    tmp: Path
    extra: dict = field(default_factory=dict)


def _scores(res: Result, name: str = "s.csv") -> list[dict]:
    with open(res.tmp / name, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _check_unknown(res: Result) -> None:
    rows = _scores(res)
    assert len(rows) == 9  # every answer scored
    assert sum(int(r["n_failed"]) for r in rows) == 2  # the two unknown assignment labels are FAILED, not defaulted


def _check_empty_answers(res: Result) -> None:
    rows = {(r["qid"], r["run_id"]): r for r in _scores(res)}
    assert len(rows) == 9
    empty = rows[("q02", "demo-a")]  # line 2: answer_text "" with every nugget not_support
    assert float(empty["v_strict"]) == 0.0 and int(empty["n_nuggets"]) == 4


def _check_no_nuggets(res: Result) -> None:
    rows = {(r["qid"], r["run_id"]): r for r in _scores(res)}
    assert len(rows) == 9
    assert all(int(r["n_nuggets"]) == 0 and float(r["a"]) == 0.0 for (q, _), r in rows.items() if q == "q02")
    assert all(int(r["n_vital"]) == 0 and float(r["v"]) == 0.0 for (q, _), r in rows.items() if q == "q03")
    assert any(float(r["a"]) > 0 for (q, _), r in rows.items() if q == "q03")  # A still credits okay nuggets


def _check_big(res: Result) -> None:
    rows = _scores(res)
    assert len(rows) == 9


def _check_partial_overlap(res: Result) -> None:
    doc = json.loads((res.tmp / "a" / "analysis.json").read_text(encoding="utf-8"))
    cells = next(iter(doc["candidates"].values()))["cells"]
    assert cells["n_topics"] == 2 and cells["n_cells"] == 6  # the 2 shared topics x 3 runs
    assert "topics 2" in res.stdout


def _check_sweep_rest(res: Result) -> None:
    s = json.loads((res.tmp / "r" / "x" / "summary.json").read_text(encoding="utf-8"))
    (cell,) = [c for c in s["cells"] if "skipped" not in c]
    assert cell["stats"]["judge_calls"] == 56  # 64 demo answers less q02's 8, which have no nuggets to assign


def _check_run_empty_answer(res: Result) -> None:
    assert "answers: 3" in res.stdout


B = str(BAD)
SWEEP = ["sweep", "--no-progress", "results_dir={tmp}/r", "name=x", "runtime=serial", "grid=single", "judge=lexical",
         "strategy=human_auto", "analysis.bootstrap=0", "calibration.enabled=false"]
NIST_SWEEP = SWEEP + ["dataset=trec-rag-2024"]

CASES = [
    Case("score-truncated", ["score", f"{B}/truncated.jsonl"], 2, ("truncated.jsonl:9", "malformed JSON")),
    Case("score-wrong-type-nuggets", ["score", f"{B}/wrong_type_nuggets.jsonl"], 2, ("wrong_type_nuggets.jsonl:5", "'nuggets'", "expected a list")),
    Case("score-wrong-type-run-id", ["score", f"{B}/wrong_type_run_id.jsonl"], 2, ("wrong_type_run_id.jsonl:3", "'run_id'", "expected a string")),
    Case("score-duplicate-answer", ["score", f"{B}/duplicate_answer.jsonl"], 2, ("duplicate_answer.jsonl:10", "'qid/run_id'", "line 2")),
    Case("score-duplicate-json-key", ["score", f"{B}/duplicate_json_key.jsonl"], 2, ("duplicate_json_key.jsonl:2", "'assignment'", "twice")),
    Case("score-unknown-labels", ["score", f"{B}/unknown_labels.jsonl", "--out", "{tmp}/s.csv"], 0,
         ("unknown_labels.jsonl", "3 unknown label value(s) kept as FAILED", "line 1", "'established'", "line 4", "line 6"), _check_unknown),
    Case("score-empty-answers", ["score", f"{B}/empty_answers.jsonl", "--out", "{tmp}/s.csv"], 0, ("9 answers",), _check_empty_answers),
    Case("score-topic-no-nuggets-no-vital", ["score", f"{B}/topic_no_nuggets_no_vital.jsonl", "--out", "{tmp}/s.csv"], 0,
         ("topic_no_nuggets_no_vital.jsonl", "3 answer(s) have no nuggets", "line 2 (q02, demo-a)", "no vital nugget: q03"), _check_no_nuggets),
    Case("score-non-utf8", ["score", f"{B}/non_utf8.jsonl"], 2, ("non_utf8.jsonl:2", "not UTF-8", "column 41")),
    Case("score-empty-file", ["score", f"{B}/empty.jsonl"], 2, ("empty.jsonl", "empty file")),
    Case("score-blank-lines-only", ["score", f"{B}/blank_lines_only.jsonl"], 2, ("blank_lines_only.jsonl", "empty file")),
    Case("score-missing-file", ["score", f"{B}/no_such_file.jsonl"], 2, ("no_such_file.jsonl", "no such file")),
    Case("score-50mb-answer", ["score", "{tmp}/big.jsonl", "--out", "{tmp}/s.csv"], 0, ("9 answers",), _check_big),
    Case("analyze-disjoint-topics", ["analyze", "--reference", f"{B}/ref_q01_q02.jsonl", "--candidate", f"{B}/cand_q03_q04.jsonl",
                                     "--bootstrap", "0", "--out", "{tmp}/a"], 2, ("share no",), names_files=True),
    Case("analyze-disjoint-runs", ["analyze", "--reference", f"{B}/ref_runs_ab.jsonl", "--candidate", f"{B}/cand_runs_cd.jsonl",
                                   "--bootstrap", "0", "--out", "{tmp}/a"], 2, ("share no",), names_files=True),
    Case("analyze-partial-overlap", ["analyze", "--reference", f"{B}/ref_q01_q02.jsonl", "--candidate", f"{B}/unknown_labels.jsonl",
                                     "--bootstrap", "20", "--out", "{tmp}/a"], 0, ("kept as FAILED", "dropped"), _check_partial_overlap),
    Case("analyze-score-table-non-numeric", ["analyze", "--reference", f"{B}/scores_non_numeric.csv", "--candidate", f"{B}/good_small.jsonl",
                                             "--bootstrap", "0", "--out", "{tmp}/a"], 2, ("scores_non_numeric.csv:3", "'value'", "'high'")),
    Case("analyze-truncated-candidate", ["analyze", "--reference", f"{B}/good_small.jsonl", "--candidate", f"{B}/truncated.jsonl",
                                         "--bootstrap", "0", "--out", "{tmp}/a"], 2, ("truncated.jsonl:9", "malformed JSON")),
    Case("calibrate-disjoint-topics", ["calibrate", "--human", f"{B}/ref_q01_q02.jsonl", "--judge", f"{B}/cand_q03_q04.jsonl", "--out", "{tmp}/c"],
         2, ("0 topic(s)",), names_files=True),
    Case("calibrate-disjoint-runs", ["calibrate", "--human", f"{B}/ref_runs_ab.jsonl", "--judge", f"{B}/cand_runs_cd.jsonl", "--out", "{tmp}/c"],
         2, ("0 topic(s)",), names_files=True),
    Case("calibrate-non-utf8-judge", ["calibrate", "--human", f"{B}/good_small.jsonl", "--judge", f"{B}/non_utf8.jsonl", "--out", "{tmp}/c"],
         2, ("non_utf8.jsonl:2", "not UTF-8")),
    Case("data-info-qrels-bad-grade", ["data", "info", f"{B}/qrels_bad_grade.txt"], 2, ("qrels_bad_grade.txt:3", "'grade'", "'relevant'")),
    Case("data-info-non-utf8", ["data", "info", f"{B}/non_utf8.jsonl"], 2, ("non_utf8.jsonl:2", "not UTF-8")),
    Case("data-info-duplicate-key", ["data", "info", f"{B}/duplicate_json_key.jsonl"], 2, ("duplicate_json_key.jsonl:2", "'assignment'")),
    Case("data-info-bad-citation", ["data", "info", f"{B}/run_bad_citation.jsonl"], 2, ("run_bad_citation.jsonl:2", "'answer[0].citations'", "99")),
    Case("data-info-run-empty-answer", ["data", "info", f"{B}/run_empty_answer.jsonl"], 0, ("answers: 3",), _check_run_empty_answer),
    Case("data-info-empty", ["data", "info", f"{B}/empty.jsonl"], 2, ("empty.jsonl", "empty file")),
    Case("assess-import-nuggets-missing-column", ["assess", "import-nuggets", f"{B}/nugget_sheet_missing_column.csv", "--out", "{tmp}/n.jsonl"],
         2, ("nugget_sheet_missing_column.csv", "'nugget'", "missing column")),
    Case("report-empty-folder", ["report", "{tmp}"], 2, ("no summary.json",)),
    Case("sweep-source-truncated", NIST_SWEEP + [f"dataset.source={B}/truncated.jsonl"], 2, ("truncated.jsonl:9", "malformed JSON")),
    Case("sweep-source-non-utf8", NIST_SWEEP + [f"dataset.source={B}/non_utf8.jsonl"], 2, ("non_utf8.jsonl:2", "not UTF-8")),
    Case("sweep-source-empty", NIST_SWEEP + [f"dataset.source={B}/empty.jsonl"], 2, ("empty.jsonl", "empty file")),
    Case("sweep-source-duplicate-answer", NIST_SWEEP + [f"dataset.source={B}/duplicate_answer.jsonl"], 2, ("duplicate_answer.jsonl:10",)),
    Case("sweep-source-qrels-bad-grade", NIST_SWEEP + [f"dataset.source={B}/qrels_bad_grade.txt"], 2, ("qrels_bad_grade.txt:3", "'grade'")),
    Case("sweep-source-missing", NIST_SWEEP + [f"dataset.source={B}/no_such_file.jsonl"], 2, ("no_such_file.jsonl", "neither a registered dataset")),
    Case("sweep-nuggets-empty-topic", SWEEP + [f"dataset.nuggets={B}/nuggets_empty_and_no_vital_topic.jsonl"], 0,
         ("nuggets_empty_and_no_vital_topic.jsonl", "have no nuggets: q02", "no vital nugget: q03"), _check_sweep_rest),
]


def _make_big(tmp: Path) -> None:
    """good_small.jsonl with one answer text of 50 MB."""
    recs = [json.loads(x) for x in (BAD / "good_small.jsonl").read_text(encoding="utf-8").splitlines()]
    sentence = "The cat purrs when it is content and relaxed. "
    recs[1]["answer_text"] = sentence * (50 * 1024 * 1024 // len(sentence))
    with open(tmp / "big.jsonl", "w", encoding="utf-8") as fh:
        for r in recs:
            fh.write(json.dumps(r) + "\n")


def _run(case: Case, tmp: Path) -> Result:
    tmp.mkdir(parents=True, exist_ok=True)
    if case.id == "score-50mb-answer":
        _make_big(tmp)
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    res = subprocess.run([sys.executable, "-m", "metaeval", *argv], capture_output=True, text=True, timeout=180, cwd=ROOT)
    return Result(res.returncode, res.stdout, res.stderr, tmp)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Result]:
    return run_all(CASES, tmp_path_factory.mktemp("bad"), _run)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, results: dict[str, Result]) -> None:
    res = results[case.id]
    output = assert_no_traceback_and_exit(res, case.rc)
    if case.rc == 2:
        assert_one_error_line(res, case.must)
    else:
        for s in case.must:
            assert s in output, f"{s!r} not in output:\n{output[-3000:]}"
        assert case.check is not None
        case.check(res)


NAMED = [c for c in CASES if c.names_files]


@pytest.mark.parametrize("case", NAMED, ids=[c.id for c in NAMED])
def test_disjoint_inputs_message_names_the_files(case: Case, results: dict[str, Result]) -> None:
    """The disjoint-input errors name the two files."""
    error = next(ln for ln in results[case.id].stderr.splitlines() if ": error: " in ln)
    a, b = (Path(x).name for x in case.argv if x.startswith(B))
    assert a in error and b in error, error


def test_loads_strict_rejects_duplicate_keys_anywhere():
    from metaeval.io.jsonl import DuplicateKeyError, loads_strict

    assert loads_strict('{"a": 1, "b": {"c": 2}}') == {"a": 1, "b": {"c": 2}}
    with pytest.raises(DuplicateKeyError) as exc:
        loads_strict('{"a": 1, "b": [{"c": 2, "c": 3}]}')
    assert exc.value.key == "c"
