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

ROOT = Path(__file__).resolve().parents[2]


def cell(name, low, fr, tau=0.9):
    return {"cell": name, "failure_rate": fr, "stats": {"cost_usd": 0.5},
            "analysis": {"metrics": {"v_strict": {"run": {"tau": tau, "ci": [low, 1.0]}}}, "labels": None}}


def test_verdict_pass_fail_undefined_skipped():
    cells = [cell("good", 0.85, 0.0), cell("low", 0.79, 0.0), cell("flaky", 0.9, 0.02), cell("undef", None, 0.0, tau=None),
             {"cell": "sk", "skipped": "cannot"}]
    v = V.evaluate(cells, dict(V.DEFAULTS))
    st = {c["cell"]: c["status"] for c in v["cells"]}
    assert st == {"good": "pass", "low": "fail", "flaky": "fail", "undef": "fail", "sk": "skipped"}
    assert not v["passed"] and v["n_failed"] == 3 and v["n_passed"] == 1
    undef = next(c for c in v["cells"] if c["cell"] == "undef")
    assert undef["checks"][0]["reason"] == "undefined"
    # boundary values pass (>= and <=)
    assert V.evaluate([cell("edge", 0.8, 0.01)], dict(V.DEFAULTS))["passed"]
    # null switches a check off; other checks can be switched on
    th = {**V.DEFAULTS, "min_run_tau_low": None, "max_failure_rate": None, "max_cost_usd": 0.4}
    v = V.evaluate([cell("low", 0.1, 0.5)], th)
    assert [c["check"] for c in v["cells"][0]["checks"]] == ["max_cost_usd"] and not v["passed"]
    assert V.evaluate([cell("low", 0.1, 0.5)], {"metric": "v_strict"})["passed"]  # no active check
    assert not V.evaluate([{"cell": "sk", "skipped": "cannot"}], dict(V.DEFAULTS))["passed"]  # nothing judged


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
    conf = ROOT / "metaeval" / "conf" if (ROOT / "metaeval" / "conf").is_dir() else ROOT / "conf"
    assert V.load_thresholds(conf / "report" / "thresholds.yaml") == V.DEFAULTS


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
    assert lines[0] == "cap" and lines[2].startswith("---------") and lines[3].endswith("  1.5") and lines[4].endswith("10.25")
    assert "VERDICT: FAIL" in render_text(_report("z"), sections=("s1",))


def test_fmt_ci():
    assert fmt_ci(0.91234, [0.8, 0.95]) == "0.912 [0.80, 0.95]"
    assert fmt_ci(None, [None, None]) == "n/a" and fmt_ci(float("nan"), None) == "n/a" and fmt_ci(0.5, [None, 1]) == "0.500"


def test_table_rejects_ragged_rows():
    with pytest.raises(ValueError):
        Table(["a", "b"], [["1"]])
