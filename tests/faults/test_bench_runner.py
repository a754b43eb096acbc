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


@pytest.mark.timeout(180)
def test_phase_times_accounts_for_a_sweep_process(tmp_path):
    """``benchmarks.phase_times`` on a one-cell offline demo sweep: every step is timed once, the study's parts fit
    inside the study, the top-level steps run in order without overlapping, and the JSON holds the same rows."""
    out = tmp_path / "phases.json"
    res = subprocess.run([sys.executable, "-m", "benchmarks.phase_times", "--json", str(out), "--", "sweep",
                          "grid=single", "judge=lexical", "strategy=human_auto", "analysis.bootstrap=100",
                          f"results_dir={tmp_path}", "name=p", "sweep.progress=false"],
                         capture_output=True, text=True, timeout=170)
    assert res.returncode == 0, res.stderr[-3000:]
    doc = json.loads(out.read_text())
    rows = {r["step"]: r for r in doc["rows"]}
    for step in ("configuration (Hydra compose, typed settings)", "sweep: dataset, jobs, judging, store",
                 "study: the cells' tasks (analysis, calibration, study.json figures)",
                 "study: analysis files and the cells' pairs", "study: calibration files",
                 "study, all of it", "report (HTML, Markdown, JSON, figures)", "exit (main() returned -> process ended)"):
        assert step in rows and rows[step]["wall_s"] >= 0, step
        assert step in res.stdout
    study = rows["study, all of it"]
    parts = [r for name, r in rows.items() if name.startswith("study: ")]
    assert sum(r["wall_s"] for r in parts) <= study["wall_s"] + 1e-6
    assert all(study["start_s"] <= r["start_s"] for r in parts)
    # the top-level steps do not overlap: what main() did outside them is not negative
    assert rows["main() outside the steps (imports, parsing, summary)"]["wall_s"] >= 0
    assert rows["sweep: dataset, jobs, judging, store"]["start_s"] < study["start_s"] < rows[
        "report (HTML, Markdown, JSON, figures)"]["start_s"]
    assert (tmp_path / "p" / "report.html").exists()
