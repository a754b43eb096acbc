"""Issue 32 leftover: after a multi-cell sweep the terminal says, in plain language, which neighbour cell agrees
better with the reference - the lines ``metaeval compare`` prints and the report's comparison section shows - after
the summary table and before the verdict."""

from __future__ import annotations

import json
from types import SimpleNamespace

from metaeval.workflow.sweep import SweepRun, neighbour_comparison
from tests.helpers.results import summary as typed_summary

LINE = ("lexical__auto_auto vs lexical__human_auto (strategy auto_auto vs human_auto): no detectable difference in "
        "agreement with the reference (Holm-adjusted, alpha 0.05; lexical__auto_auto minus lexical__human_auto): "
        "run-level tau on v_strict +0.071 [-0.214, +0.143], Holm p 0.943.")
DOC = {"pairs": "the grid's natural neighbours (same judge, another prompt or another strategy)",
       "reference": "the dataset's human labels", "variant": "b", "metric": "v_strict", "n_boot": 1000, "seed": 0,
       "alpha": 0.05, "lines": [LINE]}


def test_the_sweep_prints_the_pair_lines_after_the_table_and_before_the_verdict(monkeypatch, capsys, tmp_path):
    import metaeval.study.summary as summary_mod
    import metaeval.workflow.sweep as wf
    from metaeval.cli import main

    seen = {}

    def drive(settings, cells, overrides, progress=None, drawing_server=False):
        seen["cells"] = len(cells)
        return SweepRun(summary=typed_summary([]), closing=["Verdict: PASS - stub", "report: x/report.html"],
                        comparison=DOC)

    monkeypatch.setattr(wf, "drive_sweep", drive)
    monkeypatch.setattr(summary_mod, "summary_markdown", lambda summary, table=None: "THE SUMMARY TABLE")
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["sweep", "--no-progress", f"results_dir={tmp_path}"]) == 0
    out = capsys.readouterr().out
    assert seen["cells"] > 1
    flat = " ".join(out.split())
    assert "- " + LINE in flat  # the whole line, wrapped at the terminal width without cutting a number
    assert flat.index("THE SUMMARY TABLE") < flat.index("Compared the grid's natural neighbours") < flat.index(LINE) \
        < flat.index("Verdict: PASS")
    assert "1000 paired topic resamples (seed 0), Holm-adjusted at alpha 0.05" in flat
    lines = out.splitlines()
    block = lines[next(i for i, s in enumerate(lines) if s.startswith("Compared the grid")):]
    block = block[:next(i for i, s in enumerate(block) if s.startswith(("wrote ", "Verdict")))]
    assert len(block) >= 3 and all(len(line) <= 100 for line in block), block  # wrapped at the terminal width


def test_no_comparison_no_lines(monkeypatch, capsys, tmp_path):
    import metaeval.study.summary as summary_mod
    import metaeval.workflow.sweep as wf
    from metaeval.cli import main

    monkeypatch.setattr(wf, "drive_sweep", lambda *a, **k: SweepRun(summary=typed_summary([]), closing=["Verdict: x"]))
    monkeypatch.setattr(summary_mod, "summary_markdown", lambda summary, table=None: "TABLE")
    assert main(["sweep", "--no-progress", f"results_dir={tmp_path}"]) == 0
    assert "Compared the grid's natural neighbours" not in capsys.readouterr().out


def test_the_workflow_reads_the_comparison_the_study_wrote(tmp_path):
    lay = SimpleNamespace(analysis_dir=tmp_path)
    assert neighbour_comparison(lay) is None  # no pair compared: no file
    (tmp_path / "compare.json").write_text(json.dumps(DOC), encoding="utf-8")
    assert neighbour_comparison(lay)["lines"] == [LINE]
    (tmp_path / "compare.json").write_text(json.dumps({**DOC, "lines": []}), encoding="utf-8")
    assert neighbour_comparison(lay) is None
    (tmp_path / "compare.json").write_text("{broken", encoding="utf-8")
    assert neighbour_comparison(lay) is None
