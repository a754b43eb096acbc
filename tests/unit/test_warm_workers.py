"""``metaeval.forked.WarmWorkers`` and the report's drawing workers (issue 34): the workers are forked before the
drawings exist and import matplotlib while the report is built, so the report's process no longer imports it on
its critical path; the figures are byte-for-byte what one process draws."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.forked import WarmWorkers, can_fork

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers: Linux")
_WARMED: list[int] = []


def _warm() -> None:
    _WARMED.append(os.getpid())


def _where(x: int) -> tuple[int, int, int]:
    return x * x, os.getpid(), len(_WARMED)


@LINUX
def test_warm_workers_keep_order_run_elsewhere_and_were_warmed_first():
    with WarmWorkers(2, _warm) as pool:
        out = pool.map(_where, list(range(6)))
    assert [x for x, _, _ in out] == [k * k for k in range(6)]
    assert all(pid != os.getpid() for _, pid, _ in out) and all(w == 1 for _, _, w in out)
    assert _WARMED == []  # the parent did not warm: the workers did, each once


def test_one_worker_runs_here_and_warms_here():
    _WARMED.clear()
    with WarmWorkers(1, _warm) as pool:
        out = pool.map(_where, [3, 4])
    assert out == [(9, os.getpid(), 1), (16, os.getpid(), 1)]
    _WARMED.clear()


@LINUX
def test_an_error_in_a_worker_is_raised_here():
    with pytest.raises(ZeroDivisionError):
        with WarmWorkers(2, _warm) as pool:
            pool.map(_inverse, [1, 0, 2])


def _inverse(x: int) -> float:
    return 1 / x


_PROBE = """
import sys
from metaeval.report.build import build_report
rep = build_report(sys.argv[1], workers=2)
print(len(rep.figures), "matplotlib" in sys.modules)
"""


@LINUX
def test_the_reports_process_does_not_import_matplotlib(results):
    """Planted bug: importing matplotlib in the parent before forking (as draw_all did) prints True here."""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", _PROBE, str(results)], cwd=root, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    n, imported = out.stdout.split()
    assert int(n) >= 6 and imported == "False"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """One offline demo sweep (no calibration, few replicates: only its report is read here)."""
    root = tmp_path_factory.mktemp("warm")
    cmd = [sys.executable, "-m", "metaeval", "sweep", "--no-progress", "runtime=serial", "grid.optional_judges=[]",
           "analysis.bootstrap=50", "calibration.enabled=false", f"results_dir={root}", "name=demo"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return root / "demo"
