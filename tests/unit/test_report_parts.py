"""Report building blocks without a sweep: verdict, thresholds files, renderers; and the study parts the report
shows (per-topic tau, ranks, excerpts)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from metaeval.errors import FormatError
from metaeval.report import verdict as V
from metaeval.report.model import Detail, Figure, Report, Section, Table, Text, fmt_ci
from metaeval.report.render_html import render_html
from metaeval.report.render_md import render_md
from metaeval.report.render_text import render_text, text_table
from metaeval.study.leaderboard import ranks as _ranks
from metaeval.study.topics import excerpt, per_topic_tau
from tests.helpers import results as R

ROOT = Path(__file__).resolve().parents[2]


def cell(name, low, fr, tau=0.9):
    return {"cell": name, "failure_rate": fr, "stats": {"cost_usd": 0.5},
            "analysis": {"metrics": {"v_strict": {"run": {"tau": tau, "ci": [low, 1.0]}}}, "labels": None}}


def test_verdict_pass_fail_undefined_skipped():
    cells = [cell("good", 0.85, 0.0), cell("low", 0.79, 0.0), cell("flaky", 0.9, 0.02), cell("undef", None, 0.0, tau=None),
             {"cell": "sk", "skipped": "cannot"}]
    v = V.evaluate(R.cells(*cells), dict(V.DEFAULTS))
    st = {c["cell"]: c["status"] for c in v["cells"]}
    assert st == {"good": "pass", "low": "fail", "flaky": "fail", "undef": "fail", "sk": "skipped"}
    assert not v["passed"] and v["n_failed"] == 3 and v["n_passed"] == 1
    undef = next(c for c in v["cells"] if c["cell"] == "undef")
    assert undef["checks"][0]["reason"] == "undefined"
    # boundary values pass (>= and <=)
    assert V.evaluate(R.cells(cell("edge", 0.8, 0.01)), dict(V.DEFAULTS))["passed"]
    # null switches a check off; other checks can be switched on
    th = {**V.DEFAULTS, "min_run_tau_low": None, "max_failure_rate": None, "max_cost_usd": 0.4}
    v = V.evaluate(R.cells(cell("low", 0.1, 0.5)), th)
    assert [c["check"] for c in v["cells"][0]["checks"]] == ["max_cost_usd"] and not v["passed"]
    assert V.evaluate(R.cells(cell("low", 0.1, 0.5)), {"metric": "v_strict"})["passed"]  # no active check
    assert not V.evaluate(R.cells({"cell": "sk", "skipped": "cannot"}), dict(V.DEFAULTS))["passed"]  # nothing judged


def test_thresholds_files(tmp_path):
    y = tmp_path / "t.yaml"
    y.write_text("metric: V_strict\nmin_run_tau_low: 0.7\nmax_failure_rate: null\nmin_cohen_kappa: 0.4\n", encoding="utf-8")
    th = V.load_thresholds(y)
    assert th == {"metric": "v_strict", "min_run_tau_low": 0.7, "max_failure_rate": None, "min_cohen_kappa": 0.4}
    j = tmp_path / "t.json"
    j.write_text(json.dumps({"metric": "a_strict"}), encoding="utf-8")
    assert V.load_thresholds(j) == {**V.DEFAULTS, "metric": "a_strict"}
    for text, field in (("min_run_tau_lo: 0.8\n", "min_run_tau_lo"), ("metric: 3\n", "metric"),
                        ("min_run_tau_low: high\n", "min_run_tau_low")):
        y.write_text(text, encoding="utf-8")
        with pytest.raises(FormatError) as e:
            V.load_thresholds(y)
        assert e.value.field == field and str(y) in str(e.value)
    j.write_text("{not json", encoding="utf-8")
    with pytest.raises(FormatError):
        V.load_thresholds(j)


def test_shipped_thresholds_file_equals_builtin_defaults():
    assert V.load_thresholds(Path(V.__file__).with_name("thresholds.yaml")) == V.DEFAULTS


def test_per_topic_tau_against_scipy():
    rng = np.random.default_rng(3)
    runs, qids = [f"r{i}" for i in range(7)], ["q1", "q2", "q3", "q4"]
    ref = pd.DataFrame([(r, q, float(rng.integers(0, 4)) / 3) for q in qids for r in runs], columns=["run_id", "qid", "v_strict"])
    judge = ref.copy()
    judge["v_strict"] = np.clip(ref["v_strict"] + rng.normal(0, 0.3, len(ref)), 0, 1).round(1)
    judge.loc[judge["qid"] == "q4", "v_strict"] = 0.5  # constant: tau-b undefined
    judge = judge[~((judge["qid"] == "q3") & (judge["run_id"] == "r0"))]  # one answer only the reference scored
    got = per_topic_tau(ref, judge, "v_strict").set_index("qid")
    for q in qids[:2]:
        x = ref[ref.qid == q].sort_values("run_id")["v_strict"]
        y = judge[judge.qid == q].sort_values("run_id")["v_strict"]
        assert got.at[q, "tau"] == pytest.approx(kendalltau(x, y, variant="b").statistic, abs=1e-12)
        assert got.at[q, "n_runs"] == 7
    x = ref[(ref.qid == "q3") & (ref.run_id != "r0")].sort_values("run_id")["v_strict"]
    y = judge[judge.qid == "q3"].sort_values("run_id")["v_strict"]
    assert got.at["q3", "tau"] == pytest.approx(kendalltau(x, y, variant="b").statistic, abs=1e-12)
    assert got.at["q3", "n_runs"] == 6
    assert np.isnan(got.at["q4", "tau"])


def test_competition_ranks():
    assert _ranks({"a": 0.5, "b": 0.9, "c": 0.5, "d": float("nan"), "e": 0.1}) == {"b": 1, "a": 2, "c": 2, "e": 4, "d": 5}


def test_excerpt_picks_the_sentence_sharing_most_words():
    ans = "Cats sleep a lot. Purring comes from the larynx muscles twitching. Dogs bark."
    assert excerpt(ans, "Purring is produced by twitching larynx muscles") == "Purring comes from the larynx muscles twitching."
    assert excerpt("x" * 500, "unrelated words here", width=50).endswith("\u2026")


def _report(nasty: str) -> Report:
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 10
    return Report(f"T {nasty}", [Section("s1", f"S {nasty}", [
        Text(nasty), Text(nasty, "note"), Text(nasty, "pre"),
        Table(["a|b", nasty], [["1 | 2", nasty]], nasty, [True, False]),
        Figure("f1", nasty, png, nasty), Detail(nasty, [Table(["x"], [["PASS"]])])])], {},
        {"passed": False, "n_passed": 0, "n_failed": 1, "thresholds": {"metric": nasty}})


def test_html_escapes_all_user_text():
    nasty = '<script>alert("x")</script> & \'q\' <img src=http://evil.invalid/x>'
    html = render_html(_report(nasty))
    assert "<script" not in html and "<img src=http" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)" in html and "&amp; &#x27;q&#x27;" in html
    assert 'src="data:image/png;base64,' in html and '<span class="pass">PASS</span>' in html
    assert html.count('id="s1"') == 1 and 'href="#s1"' in html


def test_markdown_and_text_rendering():
    md = render_md(_report("a|b <b>"))
    assert "a\\|b &lt;b&gt;" in md and "](report_files/f1.png)" in md and "| a\\|b |" in md
    t = text_table(Table(["name", "value"], [["x", "1.5"], ["long-name", "10.25"]], "cap", [False, True]))
    lines = t.splitlines()
    assert lines[0] == "cap" and lines[2].startswith("─────") and lines[3].endswith("  1.5") and lines[4].endswith("10.25")
    # nothing clipped: a long run id stays whole (the old text table cut it at 60 characters)
    long = "Enhanced_Iterative_Fact_Refinement_and_Prioritization_with_a_very_long_suffix"
    assert long in text_table(Table(["run", "tau"], [[long, "0.5"]], "", [False, True]), width=100)
    assert "VERDICT: FAIL" in render_text(_report("z"), sections=("s1",))


def test_fmt_ci():
    assert fmt_ci(0.91234, [0.8, 0.95]) == "0.912 [0.80, 0.95]"
    assert fmt_ci(None, [None, None]) == "n/a" and fmt_ci(float("nan"), None) == "n/a" and fmt_ci(0.5, [None, 1]) == "0.500"


def test_table_rejects_ragged_rows():
    with pytest.raises(ValueError):
        Table(["a", "b"], [["1"]])


# ------------------------------------------------------------------ issue 14.5: summary, SVG, LaTeX, bias
def _judged(name, tau, lo, hi, topic=(0.5, 0.4, 0.6)):
    return {"cell": name, "failure_rate": 0.0, "stats": {},
            "analysis": {"metrics": {"v_strict": {"run": {"tau": tau, "ci": [lo, hi]},
                                                  "topic_avg": {"tau": topic[0], "ci": list(topic[1:])}}}}}


def _bias(mean, ci):
    """A study's per-run bias block with only its mean (no runs)."""
    return {"level": 0.95, "n_boot": 10, "seed": 0, "n_topics": 8,
            "metrics": {"v_strict": {"mean": {"bias": mean, "ci": ci}, "runs": []}}}


def test_plain_summary_and_verdict_reasons_in_words():
    cells = [_judged("good", 0.79, 0.81, 0.86, (0.93, 0.85, 0.97)), _judged("weak", 0.7, 0.5, 0.9),
             {"cell": "undef", "failure_rate": 0.0, "analysis": {"metrics": {"v_strict": {"run": {"tau": None}}}}},
             {"cell": "sk", "skipped": "no extra"}]
    study = {"good": {"shares_reference_nuggets": True,
                      "strictness_by_importance": {"alpha": 0.05, "strata": {"all": {"index": 0.21, "ci": [0.1, 0.3], "n_pairs": 40,
                                                                      "support_to_partial": 0.24, "support_to_not": 0.05,
                                                                      "not_raised": None}}},
                      "bias": _bias(-0.12, [-0.2, -0.05])},
             "weak": {"shares_reference_nuggets": False,
                      "bias": _bias(0.01, [-0.02, 0.04])}}
    lines = V.plain_summary(R.cells(*cells), {k: R.study_cell(v) for k, v in study.items()}, "v_strict", bar=0.8)
    assert len(lines) == 3  # skipped cells have no sentence
    assert lines[0] == ("good: judge stricter than the assessors: 24% of the assessors' supports became partial and 5% not "
                        "support; net strictness +0.21 [0.10, 0.30]; run ranking tau 0.79 [0.81, 0.86], fine for "
                        "leaderboards; per-topic tau 0.93 [0.85, 0.97], fine for per-topic decisions; run scores lower "
                        "than the assessors' by 0.120 on average [-0.20, -0.05].")
    assert "judge made its own nuggets" in lines[1] and "not reliable for leaderboards (lower bound below 0.8)" in lines[1]
    assert "per-topic tau 0.50 [0.40, 0.60], not for per-topic decisions" in lines[1] and "(not significant)" in lines[1]
    assert "run ranking tau undefined" in lines[2] and "per-topic tau undefined" in lines[2]
    # a study without strictness_by_importance: the analysis' label figures, in the same words
    lab = {"strictness_index": -0.2, "clustered": {"strictness_ci_topic": [-0.3, -0.1]},
           "shifts": [{"reference": "support", "candidate": "partial_support", "pct_of_reference_label": 28.0},
                      {"reference": "not_support", "candidate": "partial_support", "pct_of_reference_label": 40.0},
                      {"reference": "not_support", "candidate": "support", "pct_of_reference_label": 18.0}]}
    (line,) = V.plain_summary(R.cells({**_judged("old", 0.8, 0.7, 0.9),
                                       "analysis": {**_judged("old", 0.8, 0.7, 0.9)["analysis"], "labels": lab}}),
                              {}, "v_strict")
    assert line.startswith("old: judge more lenient than the assessors: 28% of the assessors' supports became partial "
                           "and 0% not support; 58% of their not-supports were raised; net strictness -0.20 [-0.30, -0.10];")
    v = V.evaluate(R.cells(*cells), dict(V.DEFAULTS))
    head = V.headline(v)
    assert head.startswith("Verdict: FAIL - 2 of 3 judged cell(s) miss a threshold on V_strict.")
    assert "weak fails: lower CI of run-level tau (V_strict) is 0.5 (needs >= 0.8)" in head
    assert "undef fails: lower CI of run-level tau (V_strict) is undefined (needs >= 0.8)" in head and "good fails" not in head
    assert V.headline(V.evaluate(R.cells(cells[0]), dict(V.DEFAULTS))).startswith("Verdict: PASS - all 1 judged cell(s)")


def test_svg_figures_inline_with_prefixed_ids_and_files_in_markdown():
    from metaeval.report.model import Items
    from metaeval.report.plots import inline_svg, tau_levels

    rows = [{"cell": "c1", "metric": "v_strict", "level": lv, "tau": t, "ci_low": t - 0.1, "ci_high": min(1, t + 0.1)}
            for lv, t in (("run", 0.9), ("topic_avg", 0.6))]  # pooled missing: written "undefined"
    doc = tau_levels(rows, ["c1"], "v_strict", 0.8)
    assert doc.lstrip().startswith("<?xml") and "<text" in doc and "pooled: undefined" in doc  # text stays text
    ids = __import__("re").findall(r'id="([^"]+)"', doc)
    inl = inline_svg(doc, "fig-x", 'a "title"')
    assert inl.startswith('<svg role="img" aria-label="a &quot;title&quot;"') and "<?xml" not in inl and "http" not in inl
    assert all(f'id="fig-x-{i}"' in inl for i in ids) and "url(#fig-x-" in inl
    assert not __import__("re").findall(r'url\(#(?!fig-x-)', inl)
    rep = Report("T", [Section("s", "S", [Items(["one <b>", "two"]), Text("Verdict: FAIL - x", "fail"),
                                          Figure("tau", "Tau", caption="c", svg=doc)])], {},
                 {"passed": False, "n_passed": 0, "n_failed": 1, "thresholds": {"metric": "v_strict"}})
    html = render_html(rep)
    assert '<figure id="fig-tau"><svg role="img"' in html and "<li>one &lt;b&gt;</li>" in html
    assert '<p class="banner bad">Verdict: FAIL - x</p>' in html
    md = render_md(rep)
    assert "](report_files/tau.svg)" in md and "- one &lt;b&gt;" in md and "**Verdict: FAIL - x**" in md
    assert rep.figures[0].file_name == "tau.svg" and rep.figures[0].content == doc.encode()


def test_latex_text_escapes_and_writes_signs_as_math():
    from metaeval.io.latex import latex_text

    assert latex_text("a_b & 5% $x #1 {y} ~ ^ \\ ±") == \
        r"a\_b \& 5\% \$x \#1 \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{} $\pm$"
    # OT1 prints a raw > as an inverted question mark: every comparison and arrow is math
    assert latex_text("tau >= 0.8, rate <= 1% -> ok; 0.1 +- 0.02; a < b > c") == \
        r"tau $\geq$ 0.8, rate $\leq$ 1\% $\rightarrow$ ok; 0.1 $\pm$ 0.02; a $<$ b $>$ c"
    assert latex_text("baseline_rag24.test_gpt-4o", breakable=True) == \
        r"baseline\_\allowbreak{}rag24.\allowbreak{}test\_\allowbreak{}gpt-\allowbreak{}4o"


def test_latex_table_is_linewidth_and_spans_both_columns_only_when_it_must():
    import pandas as pd

    from metaeval.io.latex import latex_table, stack

    narrow = pd.DataFrame([["lexical", stack("0.787", "[0.70, 0.86]")]], columns=["judge", "run"])
    tex = latex_table(narrow, numeric=[False, True], caption="cap", label="tab:x")
    assert tex.count("\\begin{table}") == 1 and "table*" not in tex
    assert "\\begin{tabularx}{\\linewidth}{>{\\raggedright\\arraybackslash}Xr}" in tex
    assert tex.index("\\toprule") < tex.index("\\midrule") < tex.index("\\bottomrule")
    # the nested tabular of a stacked cell is closed as a tabular, the outer one as tabularx
    assert tex.count("\\end{tabular}") == 1 and tex.count("\\end{tabularx}") == 1
    assert tex.index("\\end{tabular}") < tex.index("\\end{tabularx}")
    wide = pd.DataFrame([["lexical"] + ["0.787 [0.70, 0.86]"] * 4], columns=["judge", "a", "b", "c", "d"])
    assert "\\begin{table*}" in latex_table(wide, numeric=[False] + [True] * 4, caption="c", label="tab:y")
    long = pd.DataFrame([[f"run{i}", "0.5"] for i in range(40)], columns=["run", "score"])
    assert "\\footnotesize" in latex_table(long, numeric=[False, True], caption="c", label="tab:z")


def _cal(method: str, judge_only: int = 3) -> dict:
    """A calibration.json (schema of metaeval.study.calibration_workflow: the one procedure) with two runs."""
    rows = [{"run_id": "run_b", "human_labelled": 0.4, "judge_score": 0.3, "judge_score_ci": [0.2, 0.45],
             "human_estimate": 0.41, "human_estimate_ci": [0.3, 0.5]},
            {"run_id": "run_a", "human_labelled": 0.6, "judge_score": 0.5, "judge_score_ci": [0.4, 0.62],
             "human_estimate": 0.59, "human_estimate_ci": [0.5, 0.7]}]
    held = {"mae": {"mean": 0.1, "se": 0.02}, "diff_vs_raw": {"mean": 0.0, "se": 0.0}, "coverage": 0.9,
            "mean_ci_width": 0.4, "tau": {"run": 0.81, "topic_avg": 0.5, "pooled": 0.4}}
    return R.calibration_doc({"metric": "v_strict", "settings": {"repeats": 10, "splits": 10, "fit_topics": 5, "held_out_topics": 2,
                                               "level": 0.95},
            "selection": {"method": method, "intervals_by": "ppi_pp", "verdict": "correction beats the baseline",
                          "why": f"{method} beats raw by 0.0200 (> one corrected SE 0.0100)",
                          "beats_raw": method != "raw", "splits": 10, "fit_topics": 5, "held_out_topics": 2,
                          "wins": {method: 9, "raw": 1}, "raw_mae": {"mean": 0.1, "se": 0.02},
                          "held_out_mae": {"mean": 0.08, "se": 0.01}, "nested_mae": {"mean": 0.09, "se": 0.01},
                          "nested_diff_vs_raw": {"mean": -0.01, "se": 0.01}, "nested_choices": {method: 3},
                          "nested_splits": 3},
            "candidates": {"raw": {"status": "ok", "held_out": held},
                           "composite": {"status": "ok", "held_out": {**held, "mae": {"mean": 0.09, "se": 0.01}}},
                           "ppi": {"status": "ok", "held_out": {**held, "mae": {"mean": 0.08, "se": 0.01}}},
                           "ppi_pp": {"status": "ok", "held_out": {**held, "mae": {"mean": 0.085, "se": 0.01}}},
                           "matrix": {"status": "refused", "reason": "label-level methods refused: 3 of 9 pairs"}},
            "method_names": {"raw": "raw", "composite": "composite", "ppi": "PPI", "ppi_pp": "PPI++",
                             "matrix": "matrix"},  # the registry's display names
            "leaderboard": {"estimated_by": method, "intervals_by": "ppi_pp", "human_labelled_topics": 7,
                            "judge_only_topics": judge_only,
                            "intervals_why": "points by ppi, intervals by PPI++ widened to contain the point",
                            "rows": rows}})


def test_paper_tables_from_report_data(tmp_path):
    from metaeval.layout import ResultsLayout
    from metaeval.report.latex import paper_tables, write_latex

    data = {"metric": "v_strict", "provenance": {"dataset": {"name": "x", "topics": 7, "runs": 2},
                                                 "config": {"dataset": {"name": "trec-rag-2024"}}},
            "usage": [{"cell": "lex__human_auto", "judge": "lex", "prompt": "none", "strategy": "human_auto"},
                      {"cell": "gpt__v1__auto_auto", "judge": "gpt-4o", "prompt": "v1", "strategy": "auto_auto"}],
            "leaderboards": [{"cell": "lex__human_auto", "rows": []}, {"cell": "gpt__v1__auto_auto", "rows": [
                {"run_id": "run_a", "reference": 0.6, "raw": 0.5, "raw_ci": [0.4, 0.62]}]}],
            "calibration": {"lex__human_auto": _cal("ppi")},
            "tau": [{"cell": "lex__human_auto", "metric": "v_strict", "level": lv, "tau": 0.5, "ci_low": 0.1,
                     "ci_high": 0.8} for lv in ("run", "topic_avg", "pooled")],
            "verdict": {"thresholds": {"metric": "v_strict", "min_run_tau_low": 0.8}, "cells": [
                {"cell": "lex__human_auto", "status": "fail", "checks": [{"check": "min_run_tau_low", "value": 0.1}]},
                {"cell": "gpt__v1__auto_auto", "status": "skipped", "checks": []}]}}
    tables = paper_tables(data)
    # no pass/fail table in a paper (the verdict is in the folder's README); one calibration table per configuration
    assert list(tables) == ["tau", "calibration_lex__human_auto", "leaderboard_lex__human_auto",
                            "leaderboard_gpt__v1__auto_auto"]
    lb = tables["leaderboard_lex__human_auto"]
    assert lb.index("run\\_\\allowbreak{}a") < lb.index("run\\_\\allowbreak{}b")  # ordered by the reference
    assert "0.590" in lb and "[0.50, 0.70]" in lb and "calibrated: PPI \\citep{angelopoulos2023ppi}, all 10 topics" in lb
    assert "trec-rag-2024 (7 topics, 2 runs)" in lb
    # judge / prompt / nuggets columns, never the cell id; '--' where a judge has no prompt
    assert "lex & -- & human & \\begin{tabular}" in tables["tau"] and "lex\\_\\_human" not in "".join(tables.values())
    cand = tables["calibration_lex__human_auto"]
    assert "\\textbf{PPI} & \\begin{tabular}" in cand and "& 0.81 & 0.90 & 0.40" in cand and "refused" in cand and "PPI++$^\\dagger$" in cand
    # the caption names the procedure as it now is: held-out splits, the shown point, its intervals (PPI++)
    assert "over 10 splits; bold: shown point, $^\\dagger$: interval method." in cand
    assert cand.index("\\textbf{PPI}") > cand.index("composite") > cand.index("raw")  # raw, composite, corrections
    raw_only = tables["leaderboard_gpt__v1__auto_auto"]
    assert "calibrated" not in raw_only
    # every topic labelled: the human estimate is the reference itself, no calibrated column
    full = paper_tables({**data, "calibration": {"lex__human_auto": _cal("ppi", 0)}})["leaderboard_lex__human_auto"]
    assert "& calibrated" not in full and "0.590" not in full
    # no correction beats raw: raw is shown (bold), PPI++ (its intervals) is marked, not bold
    weak = _cal("raw")
    weak["selection"].update(verdict="no correction beats the baseline", why="composite is not better than raw")
    cand = paper_tables({**data, "calibration": {"lex__human_auto": weak}})["calibration_lex__human_auto"]
    assert "\\textbf{raw}" in cand and "PPI++$^\\dagger$" in cand and "\\textbf{PPI" not in cand
    # PPI++ shown: its own intervals, nothing marked
    own = paper_tables({**data, "calibration": {"lex__human_auto": _cal("ppi_pp")}})["calibration_lex__human_auto"]
    assert "\\textbf{PPI++}" in own and "dagger" not in own and "bold: shown point." in own

    root = tmp_path / "res"
    root.mkdir()
    (root / "summary.json").write_text("{}", encoding="utf-8")
    (root / "report_latex").mkdir()
    (root / "report_latex" / "stale.tex").write_text("old", encoding="utf-8")
    folder = write_latex(Report("T", [], data, {}), ResultsLayout.open(root))
    assert not (folder / "stale.tex").exists()
    assert {"preamble.tex", "standalone.tex", "tables.tex", "tau.tex"} <= {p.name for p in folder.iterdir()}
    assert "\\documentclass[11pt,twocolumn]{article}" in (folder / "standalone.tex").read_text(encoding="utf-8")
    assert "@inproceedings{pradeep2025greatnuggetrecall," in (folder / "metaeval.bib").read_text(encoding="utf-8")
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "`tau.tex`" in readme and "| judge lex, human nuggets | FAIL | 0.100 |" in readme
    assert "Refused: label-level methods refused: 3 of 9 pairs." in readme
    # the README describes the one procedure, not the old repeated cross-fitting decision
    cal_line = next(ln for ln in readme.splitlines() if ln.startswith("- `calibration_lex__human_auto.tex`"))
    assert "10 random splits of the human-labelled topics into 5 fit and 2 held-out topics" in cal_line
    assert "Shown (bold): PPI, verdict 'correction beats the baseline'" in cal_line
    assert "more than one corrected standard error" in cal_line and "widened to contain each point" in cal_line
    assert "Nested: the same procedure re-run inside 3 splits' fit topics" in cal_line
    for old in ("win share", "repeats", "folds", "none (raw)", "inner", "within noise", "nested selection"):
        assert old not in readme.lower() and old not in "".join(paper_tables(data).values()).lower(), old


def test_run_bias_matches_a_hand_computed_paired_bootstrap():
    from metaeval.analysis.resample import topic_weights
    from metaeval.study.bias import run_bias

    ref = pd.DataFrame({"qid": ["q1", "q1", "q2", "q2", "q3"], "run_id": ["a", "b", "a", "b", "a"],
                        "v_strict": [0.5, 0.2, 1.0, 0.4, 0.0]})
    judge = pd.DataFrame({"qid": ["q1", "q1", "q2", "q2", "q3", "q3"], "run_id": ["a", "b", "a", "b", "a", "b"],
                          "v_strict": [0.25, 0.2, 0.5, 0.6, 0.5, 0.9]})
    out = run_bias(ref, judge, ["v_strict"], n_boot=400, seed=3)["metrics"]["v_strict"]
    by = {r["run_id"]: r for r in out["runs"]}
    # a: d = (-0.25, -0.5, +0.5) over 3 topics; b: d = (0, +0.2) over q1, q2 (q3 not scored by the reference)
    assert by["a"]["bias"] == pytest.approx(-0.25 / 3) and by["b"]["bias"] == pytest.approx(0.1)
    assert by["a"]["n_topics"] == 3 and by["b"]["n_topics"] == 2
    assert by["a"]["reference"] == pytest.approx(0.5) and by["a"]["judge"] == pytest.approx(1.25 / 3)
    w = topic_weights(3, 400, 3)  # the same resamples by hand (topics q1, q2, q3)
    da = np.array([-0.25, -0.5, 0.5])
    reps = (w @ da) / w.sum(1)
    assert by["a"]["ci"] == pytest.approx([np.quantile(reps, 0.025), np.quantile(reps, 0.975)])
    assert -1 <= by["a"]["ci"][0] <= by["a"]["bias"] <= by["a"]["ci"][1] <= 1
    assert [r["run_id"] for r in out["runs"]] == ["a", "b"]  # by reference score
    assert out["mean"]["bias"] == pytest.approx((-0.25 / 3 + 0.1) / 2)


def test_strictness_by_importance_by_hand(nist_labels):
    """Index, CR1 topic-clustered t interval and support -> partial share per importance stratum, recomputed from
    the joined labels (not_support=0 < partial=1 < support=2; the reference's importance)."""
    from scipy.stats import t as student_t

    from metaeval.study.bias import strictness_by_importance
    from metaeval.types import LabelSet

    ref = nist_labels.subset(qids=nist_labels.qids[:5])
    lab = ref.labels.copy()
    rng = np.random.default_rng(11)
    down = {"support": "partial_support", "partial_support": "not_support", "not_support": "not_support"}
    sup = lab["support"].astype(str).to_numpy(dtype=object)
    flip = rng.random(len(sup)) < 0.3
    sup = np.where(flip, [down.get(s, s) for s in sup], sup)
    lab["support"] = pd.Categorical(sup, categories=ref.labels["support"].cat.categories)
    judge = LabelSet("judge", lab, ref.answers)
    out = strictness_by_importance(ref, judge, n_boot=0, seed=0)["strata"]
    rank = {"not_support": 0, "partial_support": 1, "support": 2}
    j = ref.labels.assign(h=ref.labels["support"].astype(str).map(rank), jd=pd.Series(sup).map(rank).to_numpy(),
                          imp=ref.labels["importance"].astype(str))
    j = j.dropna(subset=["h", "jd"])
    j = j[j["imp"].isin(["vital", "okay"])]
    for name, sub in (("all", j), ("vital", j[j["imp"] == "vital"]), ("okay", j[j["imp"] == "okay"])):
        s = np.sign(sub["h"] - sub["jd"]).to_numpy(float)
        d, n = s.mean(), len(s)
        g = sub["qid"].nunique()
        per = pd.Series(s - d).groupby(sub["qid"].to_numpy()).sum().to_numpy()
        se = np.sqrt(g / (g - 1)) * np.sqrt((per ** 2).sum()) / n
        crit = student_t.ppf(0.975, g - 1)
        r = out[name]
        assert r["n_pairs"] == n and r["index"] == pytest.approx(d, abs=1e-12)
        assert r["ci"] == pytest.approx([max(-1, d - crit * se), min(1, d + crit * se)], abs=1e-9)
        sp = sub[sub["h"] == 2]
        assert r["support_to_partial"] == pytest.approx((sp["jd"] == 1).mean(), abs=1e-12)
    assert out["all"]["index"] > 0  # the judge only ever lowers labels


def test_figures_print_the_metric_by_its_display_name():
    """Axis labels and titles say V_strict (the measure registry's display name), never the column name v_strict."""
    from metaeval.report import plots

    tau_rows = [{"cell": "c1", "metric": "v_strict", "level": lv, "tau": 0.7, "ci_low": 0.6, "ci_high": 0.8}
                for lv in ("run", "topic_avg", "pooled")]
    runs = [{"run_id": r, "bias": b, "ci": [b - 0.05, b + 0.05]} for r, b in (("ra", 0.1), ("rb", -0.1))]
    docs = {"tau_levels": plots.tau_levels(tau_rows, ["c1"], "v_strict"),
            "forest": plots.forest({"c1": pd.DataFrame({"qid": ["q1", "q2"], "tau": [0.5, float("nan")]})},
                                   {"c1": (0.5, [0.4, 0.6])}, "v_strict"),
            "bias": plots.bias({"c1": {"mean": {"bias": 0.0, "ci": [-0.1, 0.1]}, "runs": runs}}, "v_strict"),
            "scatter": plots.scatter({"c1": pd.DataFrame({"run_id": ["ra", "rb", "rc"], "reference": [0.2, 0.4, 0.6],
                                                          "judge": [0.3, 0.35, 0.5]})}, {"c1": (1.0, [0.5, 1.0])},
                                     "v_strict")}
    for name, doc in docs.items():
        assert "V_strict" in doc and "v_strict" not in doc, name
    assert "pooled" in docs["tau_levels"] and "undefined" not in docs["tau_levels"]  # rows still matched by column name
    assert plots.metric_label("my_metric") == "my_metric"
