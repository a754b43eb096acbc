"""The Ray executor and the serial executor store identical labels on the demo grid, with two samples per call
(``sweep.samples=2``: the simulated judge draws twice; the deterministic lexical judges run once)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.ray


def test_ray_and_serial_sweeps_store_identical_labels(tmp_path):
    common = ["--no-progress", "grid.optional_judges=[]", "calibration.enabled=false", "analysis.bootstrap=0",
              "sweep.samples=2"]
    for runtime in ("ray_local", "serial"):
        res = subprocess.run([sys.executable, "-m", "metaeval", "sweep", *common, f"runtime={runtime}",
                              f"results_dir={tmp_path / runtime}", "name=g"], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
    cells = sorted(p.name for p in (tmp_path / "serial" / "g" / "cells").iterdir())
    assert len(cells) >= 5
    for cell in cells:
        a = (tmp_path / "ray_local" / "g" / "cells" / cell / "labels.jsonl").read_text(encoding="utf-8")
        b = (tmp_path / "serial" / "g" / "cells" / cell / "labels.jsonl").read_text(encoding="utf-8")
        assert a == b, cell
        sampled = (tmp_path / "serial" / "g" / "cells" / cell / "samples" / "labels.s1.jsonl")
        assert sampled.exists() == cell.startswith("simulated"), cell
        if sampled.exists():
            assert (tmp_path / "ray_local" / "g" / "cells" / cell / "samples" / "labels.s1.jsonl").read_text(encoding="utf-8") \
                == sampled.read_text(encoding="utf-8"), cell
            assert sampled.read_text(encoding="utf-8") != b  # another draw
    # Ray's own start is reported apart from judging (and in the wall time): the summary says both
    import json

    ray_sum = json.loads((tmp_path / "ray_local" / "g" / "summary.json").read_text(encoding="utf-8"))
    serial_sum = json.loads((tmp_path / "serial" / "g" / "summary.json").read_text(encoding="utf-8"))
    # and so is the wait for its actors (process, judge, SDK import), a part of the start-up said apart
    assert ray_sum["runtime_start"] == "Ray's start and its actors' start"
    assert 0 < ray_sum["actors_start_s"] < ray_sum["runtime_start_s"]
    assert ray_sum["judging_s"] + ray_sum["runtime_start_s"] <= ray_sum["elapsed_s"]
    md = (tmp_path / "ray_local" / "g" / "summary.md").read_text(encoding="utf-8")
    ray_only = ray_sum["runtime_start_s"] - ray_sum["actors_start_s"]
    assert (f"Start-up {ray_sum['runtime_start_s']:.1f} s (Ray's start {ray_only:.1f} s, its actors' "
            f"{ray_sum['actors_start_s']:.1f} s: processes, judges, SDK imports; in the wall time, not in judging)") in md
    assert "actors_start_s" not in serial_sum  # in-process: no actors (left out of the file while 0)
    # in-process there is no Ray to start; only the SDK imports of judges with a deployment, if any
    assert serial_sum["runtime_start"] in ("", "judge SDK imports")
    assert "Ray's start" not in (tmp_path / "serial" / "g" / "summary.md").read_text(encoding="utf-8")
