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
    row = next(line for line in res.stdout.splitlines() if line.startswith(f"| {cell['cell']} |"))
    assert "->" not in row and "ppi" not in row  # no "ppi: 0.464 -> 0.133" calibration figure
    assert "withheld: " in res.stdout
    assert "Verdict: FAIL - no cell could be judged." in res.stdout and "not judged: " in res.stdout
    # with the threshold off (1.0) the same labels get their figures again: the gate, not the data, withheld them
    res = sweep(tmp_path, "grid=single", "judge=gpt-4o", "name=allfailed", "sweep.offline=true",
                "cache.path=" + str(tmp_path / "empty.sqlite"), "sweep.max_failed_rate=1.0")
    (cell,) = json.loads((tmp_path / "allfailed" / "summary.json").read_text())["cells"]
    assert "withheld" not in cell and "analysis" in cell
