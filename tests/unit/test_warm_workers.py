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


_SERVER_PROBE = """
import os, sys
from metaeval.forked import WarmWorkers
from metaeval.report.plots import import_matplotlib, start_drawing_server

def ready():  # the workers' warm-up: was matplotlib imported before it ran?
    global READY
    READY = "matplotlib.figure" in sys.modules
    import_matplotlib()

def where(_):
    return os.getppid(), READY

if __name__ == "__main__":
    server = sys.argv[1] == "server"
    if server:
        assert start_drawing_server()
    with WarmWorkers(2, ready, server=server) as pool:
        out = pool.map(where, range(4))
    print(all(p != os.getpid() for p, _ in out), all(r for _, r in out), "matplotlib" in sys.modules)
    if len(sys.argv) > 2:  # the same report every way, byte for byte
        from metaeval.report.build import build_report
        from metaeval.report.render_html import render_html
        from metaeval.report.render_md import render_md
        here, forks, served = (build_report(sys.argv[2], workers=w, drawing_server=s)
                               for w, s in ((1, False), (2, False), (2, True)))
        same = all(render_html(r) == render_html(here) and render_md(r) == render_md(here) for r in (forks, served))
        print(same, len(here.figures))
"""


def _server_probe(tmp_path: Path, *args: str) -> list[str]:
    script = tmp_path / "probe.py"
    script.write_text(_SERVER_PROBE, encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(script), *args], cwd=root, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "leaked" not in out.stderr, out.stderr[-2000:]  # the resource tracker found nothing left behind
    return out.stdout.split()


@LINUX
def test_server_workers_are_forks_of_the_drawing_server_which_imported_matplotlib(tmp_path):
    """The drawing server (started by ``metaeval sweep`` before it composes) imported matplotlib once: its
    workers (children of the server, not of this process) start with it, and this process does not import it.
    Forks of this process (``server`` False, what ``metaeval report`` uses) do not have it: each imports it in its
    warm-up.  Printed: workers not children of this process, matplotlib there before the warm-up, matplotlib here."""
    assert _server_probe(tmp_path, "server") == ["True", "True", "False"]
    assert _server_probe(tmp_path, "fork") == ["False", "False", "False"]


@LINUX
def test_the_report_drawn_by_the_servers_workers_is_byte_for_byte_the_same(tmp_path, results):
    """Drawn at the end in this process (one worker), by forks of this process as each section makes its figure
    (``plots.drawing_ahead``), and by forks of the drawing server: the same HTML and Markdown."""
    got = _server_probe(tmp_path, "server", str(results))
    assert got[:3] == ["True", "True", "False"]
    assert got[3] == "True" and int(got[4]) >= 6


def test_the_package_main_module_runs_the_command_only_as_the_main_module():
    """A worker started by spawn or a fork server may import the parent's main module under another name
    (``__mp_main__``): ``metaeval/__main__.py`` must not run the command then (planted bug: an unguarded
    ``entry()`` runs the CLI here, which exits)."""
    import runpy

    runpy.run_module("metaeval.__main__", run_name="__mp_main__")


def test_the_sweep_command_starts_the_drawing_server_only_when_it_will_draw(monkeypatch, tmp_path):
    """``metaeval sweep`` (the command's own process) starts the drawing server after it composes and hands it to
    the sweep; ``--dry-run`` and ``report.enabled=false`` (nothing drawn) start none, nor does ``main`` called from
    another program (whose main module the server's workers would import)."""
    from metaeval import cli
    from metaeval.workflow import sweep as workflow_sweep

    started, handed = [], []
    monkeypatch.setattr("metaeval.report.plots.start_drawing_server", lambda: started.append(1) or True)

    def drive(settings, cells, overrides, progress=None, drawing_server=False):
        handed.append(drawing_server)
        return workflow_sweep.SweepRun(summary=None, dry_run_cells=[])

    monkeypatch.setattr(workflow_sweep, "drive_sweep", drive)
    assert cli.main(["sweep", "--dry-run", "--no-progress", f"results_dir={tmp_path}"], command_process=True) == 0
    assert started == [] and handed == [False]
    assert cli.main(["sweep", "--no-progress", f"results_dir={tmp_path}"]) == 0
    assert started == [] and handed == [False, False]
    assert cli.main(["sweep", "--no-progress", f"results_dir={tmp_path}", "+report.enabled=false"],
                    command_process=True) == 0
    assert started == [] and handed == [False, False, False]
    assert cli.main(["sweep", "--no-progress", f"results_dir={tmp_path}"], command_process=True) == 0
    assert started == [1] and handed == [False, False, False, True]
