"""A sweep whose primary metric is not V_strict (``analysis.metrics=[a_strict]``) end to end, offline on the demo:
the summary, the calibration, the report and ``metaeval report DIR`` all report A_strict; a sweep whose requested
figures are missing does not exit 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FAST = ["runtime=serial", "grid.optional_judges=[]", "analysis.bootstrap=200"]


def _run(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metaeval", *args], capture_output=True, text=True, timeout=timeout)


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_strict_sweep_reports_a_strict_everywhere(tmp_path):
    res = _run("sweep", "--no-progress", f"results_dir={tmp_path}", "name=a", "analysis.metrics=[A_strict]",
               "calibration.enabled=false", *FAST)
    assert res.returncode == 0, res.stderr[-3000:]
    root = tmp_path / "a"
    summary = _read(root / "summary.json")
    assert summary["primary_metric"] == "a_strict"
    judged = [c for c in summary["cells"] if not c.get("skipped")]
    assert len(judged) >= 3
    md = (root / "summary.md").read_text(encoding="utf-8")
    assert "Kendall's tau (tau-b) on A_strict with" in md and "on V_strict" not in md
    for c in judged:  # the table's taus are the analysis' a_strict figures, not '-'
        run = c["analysis"]["metrics"]["a_strict"]["run"]
        row = next(line for line in md.splitlines() if line.startswith(f"| {c['cell']} |"))
        assert f"| {run['tau']:.3f} [{run['ci'][0]:.2f}, {run['ci'][1]:.2f}] |" in row
        assert "| - | - | - |" not in row
    assert "report for" not in res.stderr  # the report did not fail
    rep = _read(root / "report.json")
    assert rep["metric"] == "a_strict" and rep["verdict"]["thresholds"]["metric"] == "a_strict"
    assert "threshold on A_strict" in rep["summary"]["verdict"] and rep["summary"]["verdict"] in res.stdout
    again = _run("report", str(root))  # the report command reads the study's primary metric too
    assert again.returncode == 0, again.stderr[-2000:]
    assert "threshold on A_strict" in again.stdout
    wrong = _run("report", str(root), "--metric", "v_strict")  # a metric the study did not compute: one line
    assert wrong.returncode == 2 and "V_strict: the study of" in wrong.stderr and "computed A_strict only" in wrong.stderr


def test_a_strict_sweep_with_calibration(tmp_path):
    res = _run("sweep", "--no-progress", f"results_dir={tmp_path}", "name=c", "grid=single", "judge=lexical",
               "strategy=human_auto", "analysis.metrics=[a_strict]", "calibration.workers=1", "runtime=serial",
               "analysis.bootstrap=200")
    assert res.returncode == 0, res.stderr[-3000:]
    cell = _read(tmp_path / "c" / "summary.json")["cells"][0]
    cal = cell["calibration"]
    assert cal["metric"] == "a_strict" and list(cal["by_metric"]) == ["a_strict"]
    assert cal["settings"]["metrics"] == ["a_strict"]
    rep = _read(tmp_path / "c" / "report.json")
    assert rep["metric"] == "a_strict"
    assert "A_strict: held-out" in (tmp_path / "c" / "report.md").read_text(encoding="utf-8")


def test_missing_figures_do_not_exit_0(tmp_path, monkeypatch, capsys):
    """The report fails (planted in its writer): everything is stored, the sweep exits 5 with one line saying so."""
    from metaeval import cli
    from metaeval.report import write

    def broken(*a, **k):
        raise RuntimeError("planted report failure")

    monkeypatch.setattr(write, "write_report", broken)
    rc = cli.main(["sweep", "--no-progress", f"results_dir={tmp_path}", "name=m", "grid=single", "judge=lexical",
                   "strategy=human_auto", "calibration.enabled=false", "analysis.bootstrap=0", "runtime=serial"])
    err = capsys.readouterr().err
    assert rc == 5
    assert "metaeval sweep: missing figures: the report of" in err and "planted report failure" in err
    assert (tmp_path / "m" / "summary.json").exists()  # everything stored


@pytest.mark.parametrize("metrics", ["[nope]", "[a_strct]"])
def test_unknown_metric_is_refused_before_any_judge_call(tmp_path, metrics):
    res = _run("sweep", "--no-progress", f"results_dir={tmp_path}", f"analysis.metrics={metrics}", *FAST, timeout=120)
    assert res.returncode == 2 and "not a nugget measure" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "demo").exists()
