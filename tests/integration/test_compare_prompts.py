"""Issue 32 "must show": a prompt comparison against a local server whose two prompts really differ.

The wire test server answers by ``metaeval.testing.rules.prompt_rule``: it reads the answer under the JSON prompt
(v2_json) and answers half of the labels at random under the plain-list prompt (v1).  ``metaeval sweep -m
prompt=v1,v2_json grid=single judge=testserver strategy=human_auto`` then ``metaeval compare`` must say that v2_json
agrees better with the assessors, the sweep's report must carry the comparison section, and ``--out`` must write
the comparison's files.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from metaeval.testing.rules import prompt_rule
from metaeval.testing.server import ChatTestServer

pytestmark = pytest.mark.slow

V1, V2 = "testserver__v1__human_auto", "testserver__v2_json__human_auto"


def test_sweep_then_compare_says_which_prompt_agrees_better(tmp_path):
    with ChatTestServer(rule=prompt_rule(0.5)) as srv:
        sweep = subprocess.run(
            [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "-m", "prompt=v1,v2_json", "grid=single",
             "judge=testserver", "strategy=human_auto", f"judge.deployment.base_url={srv.openai_base_url}",
             "runtime=serial", "calibration.enabled=false", "analysis.bootstrap=400", "name=prompts"],
            cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert sweep.returncode == 0, sweep.stderr[-2000:]
    # the terminal says it too: after the summary table, before the verdict and the report's path
    flat = " ".join(sweep.stdout.split())
    said = flat.index(f"- {V1} vs {V2} (prompt v1 vs v2_json): {V2} agrees better with the reference")
    assert flat.index("Compared the grid's natural neighbours") < said < flat.index("report: ")
    root = tmp_path / "results" / "prompts"
    doc = json.loads((root / "analysis" / "compare.json").read_text())
    assert doc["pairs"].startswith("the grid's natural neighbours")
    (line,) = doc["lines"]
    assert line.startswith(f"{V1} vs {V2} (prompt v1 vs v2_json): {V2} agrees better with the reference")
    run = next(r for r in doc["rows"] if r["statistic"] == "tau" and r["level"] == "pooled" and r["metric"] == "v_strict")
    assert run["diff"] < 0 and run["ci_high"] < 0 and run["better"] == V2
    html = (root / "report.html").read_text()
    assert '<section id="compare">' in html and "Which configuration agrees better" in html

    out = tmp_path / "cmp"
    cmp = subprocess.run([sys.executable, "-m", "metaeval", "compare", str(root / "cells" / V1), str(root / "cells" / V2),
                          "--bootstrap", "400", "--metric", "v_strict", "--out", str(out)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert cmp.returncode == 0, cmp.stderr[-2000:]
    text = " ".join(cmp.stdout.split())
    assert f"{V2} agrees better with the reference ({V2} minus {V1}): run-level tau on v_strict +" in text
    assert "per-topic tau" in text and "Holm p" in text
    assert sorted(p.name for p in out.iterdir()) == ["compare.csv", "compare.html", "compare.json", "compare.md",
                                                     "compare.tex"]
    assert "\\label{tab:metaeval-compare}" in (out / "compare.tex").read_text()
    # the sweep folder as the input: the same pair (its two cells), the reference from its dataset
    again = subprocess.run([sys.executable, "-m", "metaeval", "compare", str(root), "--bootstrap", "400",
                            "--metric", "v_strict"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and " ".join(again.stdout.split()) == text.split(" wrote ")[0]
