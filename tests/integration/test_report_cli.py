"""``metaeval report`` on a real demo sweep: sections, embedded plots, self-containment, verdict and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SECTIONS = ("summary", "verdict", "bias", "provenance", "usage", "leaderboards", "tau", "scatter", "agreement", "descriptive", "calibration",
            "disagreements")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """One offline demo sweep per module (the sweep writes the report at its end)."""
    root = tmp_path_factory.mktemp("report")
    cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "grid.optional_judges=[]",
           "analysis.bootstrap=200", f"results_dir={root}", "name=demo"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "100"})
    assert res.returncode == 0, res.stderr[-3000:]
    (root / "sweep.stdout").write_text(res.stdout, encoding="utf-8")
    return root / "demo"


def test_the_sweep_ends_with_the_verdict_and_the_report_path(results):
    """The terminal: the demo said to be synthetic, then the verdict with its reasons, then where report.html is."""
    out = (results.parent / "sweep.stdout").read_text(encoding="utf-8").strip().splitlines()
    verdict = json.loads((results / "report.json").read_text(encoding="utf-8"))["summary"]["verdict"]
    assert out[-1] == f"report: {results / 'report.html'}" and out[-2] == verdict and verdict.startswith("Verdict: ")
    assert out[-3].startswith("note: synthetic data")
    assert any(line.startswith("**Synthetic data:** ILLUSTRATIVE DEMO DATA") for line in out)  # summary.md, on top
    md = (results / "summary.md").read_text(encoding="utf-8")
    assert md.index("**Synthetic data:**") < md.index("| cell |")
    # the terminal gets the same table aligned to its 100 columns (summary.md keeps the Markdown), numbers whole
    table = out[:next(i for i, line in enumerate(out) if line.startswith("wrote "))]  # the summary, before the paths
    assert all(len(line) <= 100 for line in table), max(table, key=len)
    assert not any(line.startswith("| ") for line in out)
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    text = "\n".join(out)
    for c in summary["cells"]:
        run = c["analysis"]["metrics"]["v_strict"]["run"]
        assert f"{run['tau']:.3f} [{run['ci'][0]:.2f}, {run['ci'][1]:.2f}]" in text
        assert f"| {c['cell']} |" in md


def report(*args: str, check: bool = False) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "metaeval", "report", *args], capture_output=True, text=True, timeout=120)
    if check:
        assert res.returncode == 0, res.stderr[-3000:]
    return res


def test_sweep_writes_the_report(results):
    for name in ("report.html", "report.md", "report.json"):
        assert (results / name).stat().st_size > 0, name
    data = json.loads((results / "report.json").read_text(encoding="utf-8"))
    assert data["format"] == "metaeval-report" and "verdict" in data
    pngs = sorted(p.name for p in (results / "report_files").glob("*.svg"))
    assert len(pngs) >= 6 and set(data["figures"]) == {p[:-4] for p in pngs}
    md = (results / "report.md").read_text(encoding="utf-8")
    for p in pngs:
        assert f"](report_files/{p})" in md


def test_html_sections_images_and_no_external_urls(results):
    report(str(results), check=True)
    html = (results / "report.html").read_text(encoding="utf-8")
    for sid in SECTIONS:
        assert f'<section id="{sid}">' in html and f'href="#{sid}"' in html, sid
    svgs = re.findall(r'<figure id="fig-[^"]+"><svg role="img"', html)
    assert len(svgs) >= 6 and '<section id="injection">' not in html  # no empty probe section
    assert re.search(r"Command: metaeval sweep [^<]*analysis\.bootstrap=200 [^<]*name=demo", html)  # from overrides.yaml
    # no external reference in any src/href/srcset/url()/@import, and no script at all
    refs = re.findall(r'(?:src|href|srcset|action|poster)\s*=\s*["\']?([^"\'\s>]+)', html, flags=re.I)
    refs += re.findall(r'url\(\s*["\']?([^"\')]+)', html, flags=re.I) + re.findall(r'@import\s+["\']?([^"\';]+)', html, flags=re.I)
    local = [r for r in refs if not (r.startswith("#") or r.startswith("data:"))]  # the cells' transcript viewers
    assert refs and local and all(re.fullmatch(r"cells/[\w.-]+/transcripts\.html#[^/]*", r) for r in local), local
    assert all((results / r.split("#")[0]).is_file() for r in local)
    assert "<script" not in html.lower() and "http" not in " ".join(refs).lower()
    # the content behind the sections
    data = json.loads((results / "report.json").read_text(encoding="utf-8"))
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    prov = data["provenance"]
    assert prov["dataset"]["name"] == "demo" and all(len(f["sha256"]) == 64 for f in prov["dataset"]["files"])
    assert {"python", "metaeval", "numpy", "pandas", "scipy", "statsmodels", "ray", "openai", "anthropic"} <= set(prov["packages"])
    assert prov["seeds"]["analysis.seed"] == 0
    cells = {c["cell"]: c for c in summary["cells"] if not c.get("skipped")}
    assert {u["cell"] for u in data["usage"] if "skipped" not in u} == set(cells)
    for u in data["usage"]:
        if "skipped" not in u:
            assert u["judge_calls"] == cells[u["cell"]]["stats"]["judge_calls"]
    assert {r["level"] for r in data["tau"]} == {"run", "topic_avg", "pooled"}
    lbs = {lb["cell"]: lb for lb in data["leaderboards"]}
    ref_runs = {r["run_id"]: r for r in data["run_scores"]["lexical__human_auto"]}
    for cid in ("lexical__human_auto", "lexical__auto_auto"):
        rows = lbs[cid]["rows"]
        assert len(rows) == len(ref_runs) and lbs[cid]["n_boot"] == 200  # the analysis' bootstrap setting
        for r in rows:
            assert r["raw_ci"][0] <= r["raw"] <= r["raw_ci"][1]
            assert r["reference"] == pytest.approx(ref_runs[r["run_id"]]["reference"], abs=1e-12)
            assert r["rank_shift"] == r["raw_rank"] - r["reference_rank"]
    runs = {r["run_id"]: r["judge"] for r in data["run_scores"]["lexical__human_auto"]}
    assert {r["run_id"]: r["raw"] for r in lbs["lexical__human_auto"]["rows"]} == pytest.approx(runs, abs=1e-12)
    assert {s["cell"] for s in data["strictness"]} == {c for c in cells if "human_auto" in c}
    assert data["descriptive"][0]["role"] == "reference"
    # calibration: every judged cell (score-level methods need no shared nuggets), as its calibration.json says
    assert set(data["calibration"]) == set(cells)
    # per-run bias (judge minus reference): on the demo both sides score every topic, so it is the run-mean difference
    for cid in cells:
        pts = {r["run_id"]: r["judge"] - r["reference"] for r in data["run_scores"][cid]}
        assert {r["run_id"]: r["bias"] for r in data["bias"][cid]["runs"]} == pytest.approx(pts, abs=1e-9)
        assert all(r["ci"][0] <= r["bias"] <= r["ci"][1] for r in data["bias"][cid]["runs"])
    assert set(data["strictness_by_importance"]) == {c for c in cells if "human_auto" in c}
    for st in data["strictness_by_importance"].values():
        assert st["vital"]["n_pairs"] + st["okay"]["n_pairs"] == st["all"]["n_pairs"]
    for cid, cal in data["calibration"].items():
        assert cal == json.loads((results / "cells" / cid / "calibration.json").read_text(encoding="utf-8"))
    dis = {d["cell"]: d for d in data["disagreements"]}
    pairs = [p for t in dis["lexical_strict__human_auto"]["topics"] for p in t.get("pairs", [])]
    assert pairs and all(p["human"] != p["judge"] and p["nugget"] and p["answer_excerpt"] for p in pairs)
    assert dis["lexical__auto_auto"]["topics"][0]["nugget_lists"][0]["judge"]
    # the worst topics shown really are the lowest per-topic taus
    per = {r["qid"]: r["tau"] for r in data["per_topic_tau"]["simulated_fig6__human_auto"] if r["tau"] is not None}
    shown = [t["qid"] for t in dis["simulated_fig6__human_auto"]["topics"]]
    assert shown == sorted(per, key=lambda q: (per[q], q))[: len(shown)]


def test_per_topic_tau_mean_matches_the_analysis(results):
    """The study's per-topic taus (shown by the report) average to the analysis' topic_avg level."""
    data = json.loads((results / "report.json").read_text(encoding="utf-8"))
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    checked = 0
    for c in summary["cells"]:
        if c.get("skipped"):
            continue
        want = c["analysis"]["metrics"]["v_strict"]["topic_avg"]
        got = [r["tau"] for r in data["per_topic_tau"][c["cell"]] if r["tau"] is not None]
        if want["tau"] is None:
            assert got == []
            continue
        assert len(got) == want["n_topics"]
        assert sum(got) / len(got) == pytest.approx(want["tau"], abs=1e-12)
        checked += 1
    assert checked >= 3


def test_strict_exit_codes_and_verdict(results, tmp_path):
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    fail = tmp_path / "fail.yaml"
    fail.write_text("metric: v_strict\nmin_run_tau_low: 0.8\nmax_failure_rate: 0.01\n", encoding="utf-8")
    res = report(str(results), "--thresholds", str(fail), "--strict")
    assert res.returncode == 1, res.stderr[-2000:]
    v = json.loads((results / "report.json").read_text(encoding="utf-8"))["verdict"]
    assert not v["passed"]
    # the verdict recomputed from summary.json by hand
    for row in v["cells"]:
        c = next(x for x in summary["cells"] if x["cell"] == row["cell"])
        if c.get("skipped"):
            assert row["status"] == "skipped"
            continue
        low = c["analysis"]["metrics"]["v_strict"]["run"]["ci"][0]
        want = low is not None and low >= 0.8 and c["failure_rate"] <= 0.01
        assert row["status"] == ("pass" if want else "fail"), row
    assert report(str(results), "--thresholds", str(fail)).returncode == 0  # without --strict: report only

    ok = tmp_path / "pass.json"
    ok.write_text(json.dumps({"metric": "a_strict", "min_run_tau_low": 0.0, "max_failure_rate": 0.01}), encoding="utf-8")
    res = report(str(results), "--thresholds", str(ok), "--strict")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    v = json.loads((results / "report.json").read_text(encoding="utf-8"))["verdict"]
    assert v["passed"] and v["n_failed"] == 0 and v["thresholds"]["metric"] == "a_strict"


def test_print_shows_verdict_table(results):
    res = report(str(results), "--print", check=True)
    out = res.stdout
    assert "Verdict: FAIL - " in out and " fails: lower CI of run-level tau" in out and "pass/fail per grid cell" in out
    lines = [ln for ln in out.splitlines() if ln.startswith("lexical__human_auto ") and ("PASS" in ln or "FAIL" in ln)]
    assert lines, out[:3000]
    assert "Kendall tau (b) on V_strict" in out and "Calibration (held-out, raw as a candidate)" in out


def test_latex_export_of_the_main_tables(results):
    res = report(str(results), "--latex", check=True)
    folder = results / "report_latex"
    assert "report_latex" in res.stdout
    names = {p.stem for p in folder.glob("*.tex")}
    assert {"tables", "preamble", "standalone", "tau", "bias", "strictness",
            "descriptive", "leaderboard_lexical__human_auto", "calibration_lexical__human_auto"} <= names
    assert "verdict" not in names and "calibration" not in names  # the verdict is in README.md, not a paper table
    assert (folder / "README.md").exists() and (folder / "metaeval.bib").exists()
    tex = (folder / "tau.tex").read_text(encoding="utf-8")
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex and "\\begin{tabularx}{\\linewidth}" in tex
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    c = next(c for c in summary["cells"] if c["cell"] == "lexical__human_auto")
    run = c["analysis"]["metrics"]["v_strict"]["run"]
    # judge and nugget source as columns, the estimate over its interval
    assert (f"lexical & human & \\begin{{tabular}}[t]{{@{{}}r@{{}}}}{run['tau']:.3f}\\\\{{\\scriptsize "
            f"[{run['ci'][0]:.2f}, {run['ci'][1]:.2f}]}}") in tex
    assert "lexical\\_\\_human" not in tex


def test_every_paper_table_is_the_table_its_report_section_shows(results):
    """The paper set renders the sections' own tables: each paper table's report view (its columns and cells) is a
    table of the built report (the calibrated leaderboard shows the report's top rows), so a column added to, or a
    figure changed in, a section's table is in the LaTeX too; and each figure of its paper view is in its LaTeX."""
    from metaeval.report.build import build_report
    from metaeval.report.latex import _Paper
    from metaeval.report.model import Config, Rendered, Table
    from metaeval.report.render_latex import tex_cell

    rep = build_report(results, workers=1)
    shown = [t.shown() for t in rep.walk(Table)]
    rendered = "\n".join(b.md for b in rep.walk(Rendered))
    paper = _Paper(json.loads(json.dumps(rep.data, default=str)))  # what report.json holds
    tables, tex = paper.tables(), paper.all()
    assert {"tau", "bias", "strictness", "descriptive", "calibration_lexical__human_auto",
            "leaderboard_lexical__human_auto", "ranksets_lexical__human_auto"} <= set(tables)
    for name, t in tables.items():
        view = t.shown()
        match = [s for s in shown if s.columns == view.columns and
                 [list(map(str, r)) for r in s.rows] == [list(map(str, r)) for r in view.rows[:len(s.rows)]]]
        if not match:  # a section that writes its own HTML and Markdown (the plan) shows the same header and cells
            assert all(x in rendered for x in view.columns + [str(c) for r in view.rows for c in r]), \
                f"{name}: no report table with its columns {view.columns} and cells"
        cols, rows = t.view("paper")
        for r in rows:
            for i in cols:
                c = t.rows[r][i]
                if not isinstance(c, Config):
                    assert tex_cell(c, t.paper.stacked) in tex[name], (name, str(c))


# Run `metaeval report` with every module that loads data, scores, analyses, calibrates or runs the study blocked:
# the report must come out whole from the files the study wrote.
_NO_COMPUTE = """
import sys
BLOCKED = ("metaeval.data", "metaeval.scoring", "metaeval.analysis", "metaeval.calibration", "metaeval.study.",
           "metaeval.pipeline", "metaeval.judges")
ALLOWED = ("metaeval.study.records",)  # the results schema the report reads (records only, nothing that computes)
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.startswith(BLOCKED) and not name.startswith(ALLOWED):
            raise ImportError("blocked in this test: " + name)
        return None
sys.meta_path.insert(0, Block())
from metaeval.report.write import write_report
rep, _ = write_report(sys.argv[1])
print("verdict:", rep.verdict["passed"])
"""


def test_report_never_loads_the_dataset_or_recomputes(results, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    s = json.loads((copy / "summary.json").read_text(encoding="utf-8"))
    s["config"]["dataset"]["source"] = str(tmp_path / "moved.jl")  # the dataset is gone
    s["dataset"]["name"] = "no-such-dataset"
    (copy / "summary.json").write_text(json.dumps(s), encoding="utf-8")
    for f in (copy / "report_files").glob("*.svg"):
        f.unlink()
    res = subprocess.run([sys.executable, "-c", _NO_COMPUTE, str(copy)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    new = json.loads((copy / "report.json").read_text(encoding="utf-8"))
    old = json.loads((results / "report.json").read_text(encoding="utf-8"))
    assert new["problems"] == []
    for key in ("leaderboards", "per_topic_tau", "run_scores", "disagreements", "tau", "strictness", "descriptive"):
        assert new[key] == old[key], key
    assert set(new["figures"]) == set(old["figures"]) and "scatter" in new["figures"] and "forest" in new["figures"]
    assert {p.stem for p in (copy / "report_files").glob("*.svg")} == set(new["figures"])


def test_missing_study_files_degrade_to_a_problems_section(results, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    shutil.rmtree(copy / "study")
    res = report(str(copy), check=True)
    last = res.stdout.strip().splitlines()
    assert last[-2].startswith("Verdict: ") and last[-1] == f"report: {copy / 'report.html'}"
    html = (copy / "report.html").read_text(encoding="utf-8")
    assert '<section id="problems">' in html and "study.json" in html and "reference_runs.csv" in html
    data = json.loads((copy / "report.json").read_text(encoding="utf-8"))
    assert data["per_topic_tau"] == {} and "scatter" not in data["figures"]
    # stale figures of the earlier report are removed, the rest match report.json
    assert {p.stem for p in (copy / "report_files").glob("*.svg")} == set(data["figures"])


def test_user_errors(results, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("min_run_tau_lo: 0.8\n", encoding="utf-8")
    res = report(str(results), "--thresholds", str(bad))
    assert res.returncode == 2 and "bad.yaml" in res.stderr and "min_run_tau_lo" in res.stderr
    res = report(str(tmp_path))
    assert res.returncode == 2 and "summary.json" in res.stderr
    assert "Traceback" not in res.stderr
    res = report(str(results), "--workers", "0")
    assert res.returncode == 2 and res.stderr.strip() == ("metaeval report: error: --workers 0: expected auto or a "
                                                          "whole number >= 1")


def test_results_of_another_schema_version_get_one_error_line(results, tmp_path):
    """A results folder written before the results schema had a version (or by another one) is refused by
    ``metaeval report`` with exit 2 and ONE line naming the file, its version and the command that rewrites it."""
    import shutil

    for name, change in (("summary.json", lambda d: d.pop("schema_version")),
                         ("study/study.json", lambda d: d.update(schema_version=99))):
        copy = tmp_path / name.replace("/", "_") / "demo"  # a folder moved elsewhere: the command says where
        shutil.copytree(results, copy)
        doc = json.loads((copy / name).read_text(encoding="utf-8"))
        change(doc)
        (copy / name).write_text(json.dumps(doc), encoding="utf-8")
        res = report(str(copy))
        assert res.returncode == 2, res.stderr[-2000:]
        (line,) = res.stderr.strip().splitlines()
        version = 0 if name == "summary.json" else 99
        assert line.startswith(f"metaeval report: error: {copy / name}: written with results schema {version}"), line
        assert "reads results schema 1" in line and "rerun `metaeval sweep" in line, line
        assert f"name=demo results_dir={copy.parent}` (judging is cached)" in line and "analysis.bootstrap=200" in line
    # a field of the wrong type is named with its path
    copy = tmp_path / "wrong_type"
    shutil.copytree(results, copy)
    doc = json.loads((copy / "summary.json").read_text(encoding="utf-8"))
    doc["cells"][1]["failure_rate"] = "low"
    (copy / "summary.json").write_text(json.dumps(doc), encoding="utf-8")
    res = report(str(copy))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "field 'cells[1].failure_rate': expected a number or null, got 'low'" in res.stderr, res.stderr


def test_provenance_is_the_one_recorded_by_the_study(results):
    """The provenance section renders what the study recorded when it ran (summary.json's provenance), not this
    machine at report time."""
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    rec = summary["provenance"]
    assert rec["packages"]["pandas"] and rec["packages"]["metaeval"] == rec["metaeval"] and rec["recorded_at"]
    study = json.loads((results / "study" / "study.json").read_text(encoding="utf-8"))
    assert study["provenance"]["metaeval"] == rec["metaeval"] and study["schema_version"] == summary["schema_version"]
    data = json.loads((results / "report.json").read_text(encoding="utf-8"))["provenance"]
    assert data["packages"] == {"python": rec["python"], **rec["packages"]}
    assert data["recorded_at"] == rec["recorded_at"] and data["git"] == rec["git"]


def test_a_report_failure_keeps_the_results_and_exits_5(tmp_path):
    """The sweep's results stand without the report, but a sweep that lacks the report it was asked for does not
    exit 0 (issue 31): exit 5 with one line naming why and how to retry."""
    (tmp_path / "x" / "report.html").mkdir(parents=True)  # the report cannot be written here
    cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "grid=single", "judge=lexical",
           "strategy=human_auto", "analysis.bootstrap=50", "calibration.enabled=false", f"results_dir={tmp_path}", "name=x"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 5, res.stderr[-3000:]
    assert "report for" in res.stderr and "report.html: is a folder, not a file" in res.stderr  # one line (OutputError)
    missing = [line for line in res.stderr.splitlines() if line.startswith("metaeval sweep: missing figures:")]
    assert len(missing) == 1 and "is a folder, not a file" in missing[0] and "`metaeval report" in missing[0]
    assert (tmp_path / "x" / "summary.json").exists()


def test_figures_drawn_in_worker_processes_are_the_ones_one_process_draws(results):
    """build_report draws the figures in forked workers (metaeval.report.plots.draw_all): the SVG of every figure
    is byte-for-byte what drawing them in this process gives, in the same order, and the report holds text."""
    import os

    from metaeval.forked import can_fork
    from metaeval.report import plots
    from metaeval.report.build import build_report

    one = build_report(results, workers=1)
    two = build_report(results, workers=2)
    assert report(str(results), "--workers", "1", check=True).returncode == 0  # the command takes it too
    assert [f.name for f in one.figures] == [f.name for f in two.figures] and len(one.figures) >= 6
    for a, b in zip(one.figures, two.figures):
        assert isinstance(a.svg, str) and a.svg.startswith("<?xml") and a.svg == b.svg, a.name
    if can_fork():  # the drawing really left this process
        pids = plots.draw_all([plots.later(os.getpid) for _ in range(2)], workers=2)
        assert os.getpid() not in pids


def test_a_plan_anywhere_in_the_results_folder_is_in_the_report_and_in_latex(results, tmp_path, nist_file):
    """The README's recipe writes the plan with ``--results``; a plan written with ``--out RESULTS/plan`` sits in
    the results folder too: both are rendered (the section, its curves, and ``plan.tex``)."""
    import shutil

    res = tmp_path / "demo"
    shutil.copytree(results, res)
    plan = subprocess.run([sys.executable, "-m", "metaeval", "plan", "--reference", str(nist_file), "--simulate-judge",
                           "paper-fig6-edits", "--reps", "20", "--replay-reps", "0", "--metric", "v_strict",
                           "--out", str(res / "plan")], capture_output=True, text=True, timeout=300)
    assert plan.returncode == 0, plan.stderr[-3000:]
    report(str(res), "--latex", check=True)
    recommendation = json.loads((res / "plan" / "plan.json").read_text(encoding="utf-8"))["recommendation"]
    md = (res / "report.md").read_text(encoding="utf-8")
    assert "## Assessor plan" in md and recommendation in md and "](plan/plan_curves.svg)" in md
    assert recommendation in (res / "report.html").read_text(encoding="utf-8")
    tex = (res / "report_latex" / "plan.tex").read_text(encoding="utf-8")
    assert "\\caption{Human-labelled topics needed" in tex and "\\input{plan}" in \
        (res / "report_latex" / "tables.tex").read_text(encoding="utf-8")


def test_the_report_the_sweep_writes_from_its_own_summary_is_the_one_summary_json_gives(results):
    """The sweep hands the study's in-memory Summary to its report (``workflow.report.report_after_study``) instead
    of decoding ``summary.json`` again: the report it wrote must be the one built from the files alone.  Planted
    bug: a Summary that is not what the file decodes to (a field the study sets after writing, a NaN the file holds
    as null) changes ``report.json`` here."""
    from metaeval.io.jsonl import to_jsonable
    from metaeval.report.build import build_report

    written = json.loads((results / "report.json").read_text(encoding="utf-8"))
    again = build_report(results, workers=1)
    assert to_jsonable(again.data) == written
