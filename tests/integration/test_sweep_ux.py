"""``metaeval sweep`` as a user meets it: a cell with too many FAILED labels gets no figures (only the reason), label
sets carry their judge's fingerprints so ``calibrate apply`` refuses another judge's labels, the default grid holds
only cells that can run here, readable folder names for grids typed on the command line, per-judge overrides in a
mixed grid, and zero tokens for offline judges in the dry run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FAST = ["runtime=serial", "analysis.bootstrap=50"]


def metaeval(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metaeval", *args], capture_output=True, text=True, timeout=timeout)


def sweep(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    return metaeval("sweep", "--no-progress", f"results_dir={tmp_path}", *FAST, *overrides)


def test_cell_over_the_failed_rate_gets_no_figures_only_the_reason(tmp_path):
    # gpt-4o replayed from an empty cache: every assignment call fails, so 100% of its labels are FAILED
    res = sweep(tmp_path, "grid=single", "judge=gpt-4o", "name=allfailed", "sweep.offline=true",
                "cache.path=" + str(tmp_path / "empty.sqlite"))
    assert res.returncode == 4, res.stderr[-2000:]
    s = json.loads((tmp_path / "allfailed" / "summary.json").read_text())
    (cell,) = s["cells"]
    assert cell["failed_labels"] == cell["labels"] > 0
    assert "analysis" not in cell and "calibration" not in cell
    assert cell["withheld"].startswith(f"{cell['labels']} of {cell['labels']} labels FAILED (100% > "
                                       "sweep.max_failed_rate=0.5)")
    cdir = tmp_path / "allfailed" / "cells" / cell["cell"]
    assert (cdir / "labels.jsonl").exists()  # stored, as every FAILED label with its reason
    assert not (cdir / "calibration.json").exists() and not (cdir / "calibration-model.json").exists()
    study = json.loads((tmp_path / "allfailed" / "study" / "study.json").read_text())
    assert cell["cell"] not in study["cells"]
    row = next(line for line in res.stdout.splitlines() if line.startswith(cell["cell"]))
    assert "->" not in row and "ppi" not in row  # no "ppi: 0.464 -> 0.133" calibration figure
    assert "withheld: " in res.stdout
    assert "Verdict: FAIL - no cell could be judged." in res.stdout and "not judged: " in res.stdout
    # with the threshold off (1.0) a cell whose every label FAILED still gets no figure and the run exits 4
    # (issue 33: no figure on FAILED-only data, whatever max_failed_rate says)
    res = sweep(tmp_path, "grid=single", "judge=gpt-4o", "name=allfailed", "sweep.offline=true",
                "cache.path=" + str(tmp_path / "empty.sqlite"), "sweep.max_failed_rate=1.0")
    assert res.returncode == 4, res.stderr[-2000:]
    (cell,) = json.loads((tmp_path / "allfailed" / "summary.json").read_text())["cells"]
    assert "every label FAILED" in cell["withheld"] and "analysis" not in cell


def test_default_grid_holds_only_cells_that_can_run_here(tmp_path):
    import importlib.util

    res = metaeval("sweep", "--dry-run", f"results_dir={tmp_path}")
    assert res.returncode == 0, res.stderr[-2000:]
    rows = [line.split()[0] for line in res.stdout.splitlines()[1:] if "__" in line.split()[0]]
    assert "simulated_fig6__auto_auto" not in rows and "simulated_fig6__human_auto" in rows
    assert "skipped" not in res.stdout
    if importlib.util.find_spec("torch") is None:  # named once, with the install command, instead of 2 rows
        assert not any(r.startswith("embedding__") for r in rows)
        lines = [line for line in (res.stdout + res.stderr).splitlines() if "embedding" in line]
        assert lines == ["grid: judge embedding is not in this run: its extra is not installed "
                         "(missing torch, sentence_transformers); install it with: pip install 'metaeval[embed]'"]
    assert "grid: judge simulated_fig6 joins only human_auto: cannot perform stage(s) create, importance needed by " \
           "auto_auto" in res.stdout
    assert "warning" not in res.stderr.lower()  # the default demo prints no warning (tests/ray first-run test)
    # the offline judges prompt no model: zero tokens, zero cost (the calls column counts judge calls)
    for line in res.stdout.splitlines()[1:]:
        parts = line.split()
        if parts and "__" in parts[0]:
            assert parts[2:5] == ["0", "0", "0.0000"], line


def test_a_typed_grid_keeps_its_impossible_cells_visible_when_nothing_else_runs(tmp_path):
    # simulated_fig6 with auto_auto only: nothing to prune to, so the usual one-line error says why
    res = metaeval("sweep", "--dry-run", f"results_dir={tmp_path}", "-m", "judge=simulated_fig6", "strategy=auto_auto")
    assert res.returncode == 2
    assert "cannot perform stage(s) create, importance" in res.stderr
