"""The first run looks right (issue 14): the default ``metaeval sweep`` on the bundled demo - the quickstart's
main job - gives every judged cell a defined tau at all three levels on every metric and prints no warning (no
Python warning, no ``\\r`` progress redraws off a terminal); and a sweep on the local Ray runtime prints no Ray
token-auth notice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _sweep(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    return subprocess.run([sys.executable, "-m", "metaeval", "sweep", f"results_dir={tmp_path}", *overrides],
                          capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)


@pytest.mark.slow
def test_default_demo_sweep_defines_every_tau_and_prints_no_warning(tmp_path):
    out = _sweep(tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    err = out.stderr
    assert "\r" not in err  # one line per stage when stderr is not a terminal
    assert "warning" not in err.lower() and "Token authentication" not in err, err
    assert [ln.split(":")[0] for ln in err.splitlines()] == ["create", "importance", "assign"]
    summary = json.loads((tmp_path / "demo" / "summary.json").read_text())
    judged = [c for c in summary["cells"] if not c.get("skipped")]
    assert len(judged) >= 5
    for c in judged:
        for metric, block in c["analysis"]["metrics"].items():
            for level in ("run", "topic_avg", "pooled"):
                assert block[level]["tau"] is not None, (c["cell"], metric, level)


@pytest.mark.ray
def test_ray_runtime_prints_no_token_auth_notice(tmp_path):
    out = _sweep(tmp_path, "grid=single", "judge=lexical", "strategy=human_auto", "runtime=ray_local", "name=ray-first-run")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Token authentication" not in out.stderr and "RAY_AUTH_MODE" not in out.stderr
    assert "warning" not in out.stderr.lower(), out.stderr
