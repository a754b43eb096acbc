"""Probe results saved beside a sweep appear in its report."""

from __future__ import annotations

import json
import subprocess
import sys


def metaeval(*args):
    res = subprocess.run([sys.executable, "-m", "metaeval", *map(str, args)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return res


def test_probe_results_are_in_the_report(tmp_path):
    metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", "name=p", "runtime=serial", "grid=single", "judge=lexical",
             "strategy=human_auto", "calibration.enabled=false", "analysis.bootstrap=0", "+report.enabled=false")
    out = tmp_path / "p"
    metaeval("report", out)
    # no probe results yet: no (empty) probe section at all (issue 14.5)
    assert '<section id="injection">' not in (out / "report.html").read_text(encoding="utf-8")
    assert "Prompt-injection probe" not in (out / "report.md").read_text(encoding="utf-8")
    metaeval("probe", "--judge", "lexical", "--answers", "4", "--out", out / "probe" / "lexical.json")
    metaeval("report", out)
    probe = json.loads((out / "probe" / "lexical.json").read_text(encoding="utf-8"))
    (row,) = json.loads((out / "report.json").read_text(encoding="utf-8"))["injection"]
    assert row[0] == "lexical" and row[3] == "4"
    assert row[5] == f"{100 * probe['overall']['flip_rate']:.1f}%"
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="injection"' in html and "metaeval probe results" in html
