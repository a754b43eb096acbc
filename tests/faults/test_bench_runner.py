"""The benchmark runner end to end in smoke mode on its smallest benchmark (scoring), through ``metaeval bench``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_metaeval_bench_quick_scoring_prints_table_and_writes_json(shared_data, tmp_path):
    out = tmp_path / "bench.json"
    res = subprocess.run([sys.executable, "-m", "metaeval", "bench", "--quick", "--only", "scoring", "--out", str(out)],
                         capture_output=True, text=True, timeout=110)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "read+score 927 lines" in res.stdout and ("PASS" in res.stdout or "FAIL" in res.stdout)
    doc = json.loads(out.read_text())
    b = doc["benchmarks"]["scoring"]
    assert doc["meta"]["reps"] == 1 and b["starts"] == 1
    assert b["figures"]["score_927_s"] > 0 and b["figures"]["score_2500_s"] > 0  # timed (which is faster: no assert)
    assert 50 < b["peak_rss_mb"] <= b["tree_peak_rss_mb"] + 1  # a Python process with pandas, read by the runner
    assert [r["figure"] for r in doc["table"]] == ["read+score 927 lines", "read+score 2,500 lines"]
