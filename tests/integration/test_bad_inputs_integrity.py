"""Issue 13's input cases through the real CLI (files in ``tests/data/bad``): a UTF-8 byte-order mark is accepted,
a 5,000-digit integer and a topic whose nugget list differs between runs (text, order, length) are one-line
errors naming file, line and field in ``score`` and ``sweep``, and ``metaeval score ... | head`` ends without a
BrokenPipeError traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
ROOT = Path(__file__).resolve().parents[2]
SWEEP = ["sweep", "--no-progress", "name=x", "runtime=serial", "grid=single", "judge=lexical", "strategy=human_auto",
         "analysis.bootstrap=0", "calibration.enabled=false", "dataset=trec-rag-2024"]

ERRORS = {
    "huge_int": ("huge_int.jsonl:4", "4300 digits"),
    "inconsistent_nuggets_text": ("inconsistent_nuggets_text.jsonl:5", "'nuggets[2]'", "topic q02", "line 2 has"),
    "inconsistent_nuggets_order": ("inconsistent_nuggets_order.jsonl:7", "'nuggets[0]'", "topic q01", "line 1 has"),
    "inconsistent_nuggets_length": ("inconsistent_nuggets_length.jsonl:9", "'nuggets'", "3 nuggets but line 3 has 4"),
}


def _metaeval(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metaeval", *argv], capture_output=True, text=True, timeout=240, cwd=ROOT)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad13")
    jobs = {("score", "bom"): ["score", str(BAD / "bom_good_small.jsonl"), "--out", str(tmp / "bom.csv")],
            ("score", "good"): ["score", str(BAD / "good_small.jsonl"), "--out", str(tmp / "good.csv")]}
    for name in ERRORS:
        jobs[("score", name)] = ["score", str(BAD / f"{name}.jsonl")]
        jobs[("sweep", name)] = [*SWEEP, f"results_dir={tmp / name}", f"dataset.source={BAD / f'{name}.jsonl'}"]
    with ThreadPoolExecutor(max_workers=3) as pool:
        futs = {k: pool.submit(_metaeval, *argv) for k, argv in jobs.items()}
        return {k: f.result() for k, f in futs.items()}, tmp


@pytest.mark.parametrize("command", ["score", "sweep"])
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_one_line_error_naming_file_line_and_field(runs, name, command):
    res = runs[0][(command, name)]
    out = res.stdout + res.stderr
    assert "Traceback" not in out, out[-3000:]
    assert res.returncode == 2, out[-3000:]
    errors = [ln for ln in res.stderr.splitlines() if ": error: " in ln]
    assert len(errors) == 1 and res.stderr.rstrip().endswith(errors[0]), res.stderr
    for s in ERRORS[name]:
        assert s in errors[0], (s, errors[0])


def test_a_utf8_byte_order_mark_is_accepted(runs):
    res, tmp = runs[0][("score", "bom")], runs[1]
    assert res.returncode == 0, res.stderr[-3000:]
    assert (tmp / "bom.csv").read_text(encoding="utf-8") == (tmp / "good.csv").read_text(encoding="utf-8")


def test_score_piped_into_head_ends_without_a_traceback(tmp_path):
    """Enough answers that the table outgrows the pipe buffer, so the write after ``head`` left fails."""
    recs = [json.loads(x) for x in (BAD / "good_small.jsonl").read_text(encoding="utf-8").splitlines()]
    with open(tmp_path / "many.jsonl", "w", encoding="utf-8") as fh:
        for k in range(700):
            for r in recs:
                fh.write(json.dumps({**r, "run_id": f"{r['run_id']}-{k}"}) + "\n")
    cmd = f"'{sys.executable}' -m metaeval score '{tmp_path / 'many.jsonl'}' | head -n 2; echo \"rc=${{PIPESTATUS[0]}}\""
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr, res.stderr[-3000:]
    assert res.stdout.count("\n") == 3 and res.stdout.rstrip().endswith(("rc=141", "rc=0")), res.stdout
