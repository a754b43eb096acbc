"""``metaeval report --latex`` compiled by a real LaTeX engine in a two-column article.

Two real studies: the NIST TREC 2024 RAG labels judged by the offline lexical judge (one cell, 45 runs: the long
leaderboard) and the demo grid (five cells, long judge names).  Each export's ``standalone.tex`` (a
``\\documentclass[twocolumn]{article}`` that inputs every table) must compile with ``pdflatex -halt-on-error`` with
no overfull box wider than 1 pt and no float taller than a page; the tables must carry no raw ``>=``/``<=``/``->``
(OT1 prints them as inverted punctuation), no internal cell id, a caption each, and the study's own numbers.

Needs TeX Live (``bash scripts/ci_docs.sh`` installs it: texlive-latex-base, -recommended, -extra).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("pdflatex") is None,
                                reason="pdflatex not installed (bash scripts/ci_docs.sh installs TeX Live)")

OVERFULL = re.compile(r"Overfull \\[hv]box \(([\d.]+)pt too (?:wide|high)\)")


def _sweep(root: Path, *overrides: str) -> Path:
    cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "analysis.bootstrap=200",
           f"results_dir={root}", *overrides]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode in (0, 4), res.stderr[-3000:]
    name = next(o.split("=", 1)[1] for o in overrides if o.startswith("name="))
    out = subprocess.run([sys.executable, "-m", "metaeval", "report", str(root / name), "--latex"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "report_latex" in out.stdout
    return root / name


@pytest.fixture(scope="module")
def nist(tmp_path_factory, nist_file) -> Path:
    return _sweep(tmp_path_factory.mktemp("latex"), "grid=single", "judge=lexical", "strategy=human_auto",
                  "dataset=trec-rag-2024", f"dataset.source={nist_file}", "name=nist_lexical")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return _sweep(tmp_path_factory.mktemp("latex"), "grid.optional_judges=[]", "name=demo")


def compile_standalone(results: Path, tmp_path: Path) -> tuple[str, Path]:
    """pdflatex twice (labels settle) on a copy of report_latex/; returns the log and the PDF."""
    work = tmp_path / "tex"
    shutil.copytree(results / "report_latex", work)
    for _ in range(2):
        res = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "standalone.tex"], cwd=work,
                             capture_output=True, text=True, timeout=300)
        log = (work / "standalone.log").read_text(encoding="latin-1")
        assert res.returncode == 0, "\n".join(ln for ln in log.splitlines() if ln.startswith("!"))[:3000] or log[-3000:]
    return log, work / "standalone.pdf"


def check_log(log: str) -> None:
    too_wide = [float(x) for x in OVERFULL.findall(log)]
    assert not [w for w in too_wide if w > 1.0], f"overfull boxes (pt): {too_wide}"
    assert "Float too large" not in log
    assert "undefined" not in "\n".join(ln for ln in log.splitlines() if "Warning" in ln), "undefined reference"


def check_tables(folder: Path, cells: list[str]) -> dict[str, str]:
    tables = {p.stem: p.read_text(encoding="utf-8") for p in folder.glob("*.tex")
              if p.stem not in ("tables", "preamble", "standalone")}
    for name, tex in tables.items():
        body = "\n".join(ln for ln in tex.splitlines() if not ln.startswith("%"))
        assert "\\caption{" in body and "\\toprule" in body and "\\bottomrule" in body, name
        for raw in (">=", "<=", "->", "+-"):
            assert raw not in body, (name, raw)
        for cell in cells:  # readable names: judge / prompt / nuggets columns, never the cell id
            assert cell.replace("_", "\\_") not in body, (name, cell)
    inputs = re.findall(r"\\input\{([^}]+)\}", (folder / "tables.tex").read_text(encoding="utf-8"))
    assert sorted(inputs) == sorted(tables)
    return tables


def test_nist_lexical_tables_compile_in_two_columns(nist, tmp_path):
    summary = json.loads((nist / "summary.json").read_text(encoding="utf-8"))
    cell = summary["cells"][0]
    tables = check_tables(nist / "report_latex", [cell["cell"]])
    assert {"verdict", "tau", "calibration", f"calibration_{cell['cell']}", f"leaderboard_{cell['cell']}",
            "strictness", "bias", "descriptive"} <= set(tables)
    log, pdf = compile_standalone(nist, tmp_path)
    check_log(log)
    assert pdf.stat().st_size > 10_000

    # the study's numbers, as the study wrote them
    run = cell["analysis"]["metrics"]["v_strict"]["run"]
    assert f"{run['tau']:.3f}" in tables["tau"] and f"[{run['ci'][0]:.2f}, {run['ci'][1]:.2f}]" in tables["tau"]
    cal = cell["calibration"]
    lb = tables[f"leaderboard_{cell['cell']}"]
    top = max(cal["leaderboard"]["rows"], key=lambda r: r["human_labelled"])
    line = next(ln for ln in lb.splitlines() if ln.startswith(top["run_id"].replace("_", "\\_\\allowbreak{}")))
    ci = top["judge_score_ci"]
    assert f"{top['human_labelled']:.3f}" in line and f"{top['judge_score']:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]" in line
    # all 21 topics are human-labelled: the estimated human leaderboard is the reference, said so, no such column
    assert cal["leaderboard"]["judge_only_topics"] == 0 and "no calibrated column" in lb
    assert "table*" in lb  # 45 runs: across both columns so that no run id wraps the table off the page
    assert "\\footnotesize" in lb  # 45 rows: still one page
    # the paper's symbols as math, the metric typeset
    assert "$\\geq$" in tables["verdict"] and "$V_{\\mathrm{strict}}$" in tables["tau"]
    assert "\\begin{table}" in tables["tau"]  # one cell's tau fits one column


def test_demo_grid_tables_compile_in_two_columns(demo, tmp_path):
    summary = json.loads((demo / "summary.json").read_text(encoding="utf-8"))
    cells = [c["cell"] for c in summary["cells"] if not c.get("skipped")]
    tables = check_tables(demo / "report_latex", cells)
    assert "synthetic data" in tables["tau"]  # the demo's labels are made up: every caption says so
    for c in cells:
        assert f"leaderboard_{c}" in tables
    log, _ = compile_standalone(demo, tmp_path)
    check_log(log)
