"""``metaeval report --latex`` compiled by real LaTeX engines, as a paper takes it.

Two real studies: the NIST TREC 2024 RAG labels judged by the offline lexical judge (one cell, 45 runs: the long
leaderboard; with the assessor plan in its results folder) and the demo grid (five cells, long judge names).  Each
export compiles, with BibTeX for its ``\\citep`` keys from the shipped ``metaeval.bib``, in two layouts:

* ``standalone.tex`` as written: an 11pt ``\\documentclass[11pt,twocolumn]{article}`` (229.5 pt columns);
* the ACM ``sigconf`` layout of TeX Live's ``acmart`` class (241 pt columns, 9pt type); acmart's fonts (Libertine,
  newtxmath, Inconsolata) come with texlive-fonts-extra, which CI does not install, so stub packages of those names
  leave Computer Modern in their place (wider than Libertine: a table that fits here fits with the real fonts).

Both must compile with ``pdflatex -halt-on-error`` with no overfull box wider than 1 pt, no float too large and no
undefined reference or citation.  Measured in the 11pt article: every caption at most three lines (TeX's own line
count, ``\\prevgraf``, of the caption set at the float's width) and the 45-run leaderboard in two halves side by
side under three quarters of the text height (0.70 measured; a one-column float of 45 runs would not fit a
page).  The tables carry no raw ``>=``/``<=``/``->``/``+-`` (OT1 prints them as inverted punctuation), no
internal cell id, no pass/fail table, one calibration table per judge configuration, a caption each, and the
study's own numbers.

Needs TeX Live (``bash scripts/ci_docs.sh`` installs it: texlive-latex-base, -recommended, -extra, -publishers).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.io.latex import latex_text

pytestmark = pytest.mark.skipif(shutil.which("pdflatex") is None or shutil.which("bibtex") is None,
                                reason="pdflatex not installed (bash scripts/ci_docs.sh installs TeX Live)")

OVERFULL = re.compile(r"Overfull \\[hv]box \(([\d.]+)pt too (?:wide|high)\)")
#: acmart's font packages, stubbed (options accepted, nothing loaded) when texlive-fonts-extra is missing
FONT_STUBS = {"libertine": "\\providecommand\\libertineLF{}", "zi4": "", "newtxmath": ""}


def _sweep(root: Path, *overrides: str) -> Path:
    cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "analysis.bootstrap=200",
           f"results_dir={root}", *overrides]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert res.returncode in (0, 4), res.stderr[-3000:]
    return root / next(o.split("=", 1)[1] for o in overrides if o.startswith("name="))


def _latex(results: Path) -> Path:
    out = subprocess.run([sys.executable, "-m", "metaeval", "report", str(results), "--latex"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "report_latex" in out.stdout
    return results


@pytest.fixture(scope="module")
def nist(tmp_path_factory, nist_file) -> Path:
    res = _sweep(tmp_path_factory.mktemp("latex"), "grid=single", "judge=lexical", "strategy=human_auto",
                 "dataset=trec-rag-2024", f"dataset.source={nist_file}", "name=nist_lexical")
    plan = subprocess.run([sys.executable, "-m", "metaeval", "plan", "--reference", str(nist_file), "--pilot", "8",
                           "--judge", str(res / "cells" / "lexical__human_auto"), "--total-topics", "301",
                           "--reps", "40", "--replay-reps", "0", "--results", str(res)],
                          capture_output=True, text=True, timeout=600)
    assert plan.returncode == 0, plan.stderr[-3000:]
    return _latex(res)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return _latex(_sweep(tmp_path_factory.mktemp("latex"), "grid.optional_judges=[]", "name=demo"))


def _run_tex(work: Path, job: str) -> str:
    """pdflatex, bibtex, pdflatex twice (citations and labels settle); returns the log."""
    for cmd in (["pdflatex", "-interaction=nonstopmode", "-halt-on-error", job], ["bibtex", job],
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", job],
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", job]):
        res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=300)
        log = (work / f"{job}.log").read_text(encoding="latin-1")
        assert res.returncode == 0, (cmd[0], "\n".join(ln for ln in log.splitlines() if ln.startswith("!"))[:3000]
                                     or res.stdout[-3000:])
    return (work / f"{job}.log").read_text(encoding="latin-1")


def _copy(results: Path, tmp_path: Path, name: str) -> Path:
    work = tmp_path / name
    shutil.copytree(results / "report_latex", work)
    return work


def compile_article(results: Path, tmp_path: Path) -> tuple[str, Path]:
    work = _copy(results, tmp_path, "article")
    assert "\\documentclass[11pt,twocolumn]{article}" in (work / "standalone.tex").read_text(encoding="utf-8")
    return _run_tex(work, "standalone"), work / "standalone.pdf"


def compile_acm(results: Path, tmp_path: Path) -> str:
    """The tables in acmart's sigconf layout (fonts stubbed where texlive-fonts-extra is missing)."""
    work = _copy(results, tmp_path, "acm")
    for pkg, body in FONT_STUBS.items():
        if subprocess.run(["kpsewhich", f"{pkg}.sty"], capture_output=True, text=True).stdout.strip() == "":
            (work / f"{pkg}.sty").write_text(f"\\ProvidesPackage{{{pkg}}}\n\\DeclareOption*{{}}\\ProcessOptions\\relax\n"
                                             f"{body}\n", encoding="utf-8")
    # bitmap Computer Modern cannot be font-expanded (microtype's default under pdfTeX)
    (work / "acm.tex").write_text(
        "\\PassOptionsToPackage{expansion=false}{microtype}\n\\documentclass[sigconf,nonacm]{acmart}\n"
        "\\input{preamble}\n\\begin{document}\n\\title{metaeval tables}\n\\maketitle\n\\input{tables}\n\\clearpage\n"
        "\\bibliographystyle{ACM-Reference-Format}\n\\bibliography{metaeval}\n\\end{document}\n", encoding="utf-8")
    return _run_tex(work, "acm")


def check_log(log: str) -> None:
    too_wide = [float(x) for x in OVERFULL.findall(log)]
    assert not [w for w in too_wide if w > 1.0], f"overfull boxes (pt): {too_wide}"
    assert "Float too large" not in log
    warnings = "\n".join(ln for ln in log.splitlines() if "Warning" in ln)
    assert "undefined" not in warnings, warnings[:2000]


def _caption(tex: str) -> str:
    i = tex.index("\\caption{") + len("\\caption{")
    depth, k = 1, i
    while depth:
        depth += {"{": 1, "}": -1}.get(tex[k], 0)
        k += 1
    return tex[i:k - 1]


def measure(results: Path, tmp_path: Path, tables: dict[str, str]) -> dict[str, dict[str, float]]:
    """Per table, in the 11pt two-column article: the caption's lines (``\\prevgraf`` of "Table 10: caption" set
    at the float's width) and the float's height as a share of ``\\textheight``."""
    work = _copy(results, tmp_path, "measure")
    body = []
    for name, tex in tables.items():
        width = "textwidth" if "\\begin{table*}" in tex else "columnwidth"
        body.append(f"\\setbox0\\vbox{{\\hsize=\\{width}\\noindent Table 10: {_caption(tex)}\\par"
                    f"\\global\\caplines=\\prevgraf}}\\typeout{{CAPLINES {name} \\the\\caplines}}\n")
        # the float itself, boxed at its width instead of floating
        body.append(f"\\setbox0\\vbox{{\\hsize=\\{width}\\linewidth=\\{width}\\def\\@captype{{table}}"
                    f"\\renewenvironment{{table}}{{}}{{}}\\renewenvironment{{table*}}{{}}{{}}\\input{{{name}}}}}"
                    f"\\typeout{{HEIGHT {name} \\the\\dimexpr\\ht0+\\dp0\\relax\\space\\the\\textheight}}\n")
    (work / "measure.tex").write_text(
        "\\documentclass[11pt,twocolumn]{article}\n\\input{preamble}\n\\makeatletter\n\\newcount\\caplines\n"
        "\\begin{document}\n" + "".join(body) + "\\bibliographystyle{plainnat}\n\\bibliography{metaeval}\n"
        "\\end{document}\n", encoding="utf-8")
    log = _run_tex(work, "measure")
    out: dict[str, dict[str, float]] = {n: {} for n in tables}
    for m in re.finditer(r"CAPLINES (\S+) (\d+)", log):
        out[m.group(1)]["lines"] = int(m.group(2))
    for m in re.finditer(r"HEIGHT (\S+) ([\d.]+)pt ([\d.]+)pt", log):
        out[m.group(1)]["height"] = float(m.group(2)) / float(m.group(3))  # the float's height / \textheight
    return out


def check_tables(folder: Path, cells: list[str]) -> dict[str, str]:
    tables = {p.stem: p.read_text(encoding="utf-8") for p in folder.glob("*.tex")
              if p.stem not in ("tables", "preamble", "standalone")}
    for name, tex in tables.items():
        body = "\n".join(ln for ln in tex.splitlines() if not ln.startswith("%"))
        assert "\\caption{" in body and "\\toprule" in body and "\\bottomrule" in body, name
        for raw in (">=", "<=", "->", "+-", "Pradeep et al."):  # signs as math, citations as \citep / \citet
            assert raw not in body, (name, raw)
        for cell in cells:  # readable names: judge / prompt / nuggets columns, never the cell id
            assert cell.replace("_", "\\_") not in body, (name, cell)
        assert "FAIL" not in body and "PASS" not in body, name  # no verdict table in a paper
    assert "verdict" not in tables and "calibration" not in tables  # one calibration table per configuration
    inputs = re.findall(r"\\input\{([^}]+)\}", (folder / "tables.tex").read_text(encoding="utf-8"))
    assert sorted(inputs) == sorted(tables)
    bib = (folder / "metaeval.bib").read_text(encoding="utf-8")
    for key in set(re.findall(r"\\cite[pt]\{([^}]+)\}", "".join(tables.values()))):
        assert f"{{{key}," in bib, key
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for name in tables:
        assert f"`{name}.tex`" in readme
    assert "## Verdict (not a paper table)" in readme
    return tables


def check_fit(results: Path, tmp_path: Path, tables: dict[str, str]) -> dict[str, dict[str, float]]:
    got = measure(results, tmp_path, tables)
    assert all(g.get("lines") for g in got.values()), got
    long = {n: g["lines"] for n, g in got.items() if g["lines"] > 3}
    assert not long, f"captions over three lines: {long}"
    return got


def test_nist_lexical_tables_compile_in_an_article_and_in_acm_sigconf(nist, tmp_path):
    summary = json.loads((nist / "summary.json").read_text(encoding="utf-8"))
    cell = summary["cells"][0]
    tables = check_tables(nist / "report_latex", [cell["cell"]])
    assert set(tables) - {f"ranksets_{cell['cell']}"} == {"tau", f"calibration_{cell['cell']}",
                                                          f"leaderboard_{cell['cell']}", "strictness", "bias",
                                                          "descriptive", "plan"}
    log, pdf = compile_article(nist, tmp_path)
    check_log(log)
    assert pdf.stat().st_size > 10_000
    check_log(compile_acm(nist, tmp_path))
    fit = check_fit(nist, tmp_path, tables)

    # the study's numbers, as the study wrote them
    run = cell["analysis"]["metrics"]["v_strict"]["run"]
    assert f"{run['tau']:.3f}" in tables["tau"] and f"[{run['ci'][0]:.2f}, {run['ci'][1]:.2f}]" in tables["tau"]
    cal = cell["calibration"]
    lb = tables[f"leaderboard_{cell['cell']}"]
    rows = sorted(cal["leaderboard"]["rows"], key=lambda r: -r["human_labelled"])
    top = rows[0]
    line = next(ln for ln in lb.splitlines() if ln.startswith(latex_text(top["run_id"], breakable=True)))
    ci = top["judge_score_ci"]
    assert f"{top['human_labelled']:.3f}" in line and f"{top['judge_score']:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]" in line
    # 45 runs: two halves side by side (ranks 1-23 | 24-45), one line each, across both columns, not a full page
    half = latex_text(rows[23]["run_id"], breakable=True)
    assert f"& {half} &" in line and lb.count("\\\\\n") == 1 + 23 + 0  # header + 23 lines
    assert "\\begin{table*}" in lb and fit[f"leaderboard_{cell['cell']}"]["height"] < 0.75
    for name in ("tau", "bias", "strictness", f"calibration_{cell['cell']}", "plan"):
        assert "\\begin{table}" in tables[name], name  # one column each
    # the shown point method (the study's one decision) in bold; PPI++, whose intervals are shown, marked if another
    sel = cal["selection"]
    cand = tables[f"calibration_{cell['cell']}"]
    shown = latex_text(str((cal.get("method_names") or {}).get(sel["method"], sel["method"])))  # as tables name it
    assert f"\\textbf{{{shown}}}" in cand and cand.count("\\textbf{") == 1
    if sel["method"] != sel["intervals_by"]:
        assert "PPI++$^\\dagger$" in cand and "\\textbf{PPI++}" not in cand
    assert f"over {sel['splits']} splits" in cand
    assert "$\\pm$ s.e." in cand
    # the metric typeset, the paper cited
    assert "$V_{\\mathrm{strict}}$" in tables["tau"] and "\\citep{pradeep2025greatnuggetrecall}" in tables["tau"]
    plan = json.loads((nist / "study" / "plan.json").read_text(encoding="utf-8"))
    first = plan["curves"][plan["metric"]]["rows"][0]
    assert f"{first['n']} & {first['hours']:.0f} & {first['analytic_half']['median']:.3f}" in tables["plan"]


def test_demo_grid_tables_compile_in_an_article_and_in_acm_sigconf(demo, tmp_path):
    summary = json.loads((demo / "summary.json").read_text(encoding="utf-8"))
    cells = [c["cell"] for c in summary["cells"] if not c.get("skipped")]
    tables = check_tables(demo / "report_latex", cells)
    assert "synthetic data" in tables["tau"]  # the demo's labels are made up: every caption says so
    for c in cells:
        assert f"leaderboard_{c}" in tables and f"calibration_{c}" in tables
        assert "\\begin{table}" in tables[f"leaderboard_{c}"]  # 8 runs: one column
    log, _ = compile_article(demo, tmp_path)
    check_log(log)
    check_log(compile_acm(demo, tmp_path))
    check_fit(demo, tmp_path, tables)
