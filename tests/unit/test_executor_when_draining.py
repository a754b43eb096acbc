"""``AsyncioExecutor.run(..., when_draining=)`` and the sweep's use of it: the driver's preparation for what follows
the judging (the study's and the report's imports) runs once, in a thread, while the last jobs are in flight; it
never outlives the stage, never fails it, and only the assignment stage gets it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

from metaeval.pipeline.executors import AsyncioExecutor, Job


class _Slow:
    def __init__(self, log):
        self.log = log

    async def run(self, stage, payload):
        self.log.append(("start", payload["i"]))
        await asyncio.sleep(0.02)
        self.log.append(("end", payload["i"]))
        return {"i": payload["i"]}


#: a worker config whose judge calls a model server (``deployment`` set): the only kind it is given to
NETWORK = {"w": SimpleNamespace(deployment=SimpleNamespace(name="d"))}


def _jobs(n):
    return [Job(key=f"k{i}", worker_id="w", stage="assign", payload={"i": i}) for i in range(n)]


def _executor(log, configs=None, concurrency=3):
    ex = AsyncioExecutor(lambda cfg: _Slow(log), configs or NETWORK, {"w": concurrency})
    ex._started = True  # no SDK to import for these workers
    return ex


def test_it_runs_once_in_a_thread_after_the_last_job_started_and_before_run_returns():
    log, calls = [], []

    def prepare():
        calls.append(threading.current_thread() is not threading.main_thread())
        log.append(("prepare", None))
        time.sleep(0.05)  # longer than the jobs still in flight: run() must wait for it
        log.append(("prepared", None))

    got = []
    ex = _executor(log)
    ex.run(_jobs(10), lambda j, r: got.append(r["i"]), when_draining=prepare)
    assert calls == [True]  # once, not on the main thread
    assert sorted(got) == list(range(10))
    at = log.index(("prepare", None))
    assert {("start", i) for i in range(10)} <= set(log[:at])  # every job had been taken
    assert any(e[0] == "end" for e in log[at:])  # some were still in flight: it overlapped them
    assert log[-1] == ("prepared", None)  # and it had finished when run() returned
    # the wait for it after the last job (0.05 s of preparation against at most 0.02 s of jobs left) is recorded,
    # so that the sweep does not count it as judging
    assert 0.02 <= ex.preparation_wait_s <= 0.05 + 0.5


def test_its_errors_are_ignored_offline_judges_do_not_get_it_and_without_it_nothing_changes():
    got, calls = [], []

    def broken():
        raise ImportError("an extra that is not installed")

    _executor([], concurrency=2).run(_jobs(5), lambda j, r: got.append(r["i"]), when_draining=broken)
    # offline judges (no deployment): the loop is busy computing, nothing to overlap
    _executor([], {"w": {}}, 2).run(_jobs(5), lambda j, r: got.append(r["i"]), when_draining=lambda: calls.append(1))
    _executor([], concurrency=2).run(_jobs(5), lambda j, r: got.append(r["i"]))
    assert sorted(got) == sorted([*range(5)] * 3)
    assert calls == []


def test_the_sweep_gives_it_to_the_assignment_stage_only(monkeypatch, tmp_path):
    """A sweep against the test server (``judge=testserver``, a model server on 127.0.0.1): the driver's
    ``import_study_and_report`` is called once, from a thread, during the assignment stage; a demo sweep that
    creates, labels and assigns with an offline judge hands it only to the assignment stage, which does not call
    it (nothing to wait on)."""
    from metaeval.pipeline import executors
    from metaeval.testing.server import ChatTestServer, Faults
    from metaeval.workflow import sweep as workflow_sweep
    from metaeval.workflow.compose import compose_sweep

    stages, calls = [], []
    real_run = executors.AsyncioExecutor.run

    def run(self, jobs, on_result, when_draining=None):
        stages.append((jobs[0].stage if jobs else None, when_draining is not None))
        return real_run(self, jobs, on_result, when_draining)

    monkeypatch.setattr(executors.AsyncioExecutor, "run", run)
    monkeypatch.setattr(workflow_sweep, "import_study_and_report",
                        lambda: calls.append(threading.current_thread() is not threading.main_thread()))
    common = ["grid=single", "runtime=serial", "sweep.progress=false", "+report.enabled=false",
              "calibration.enabled=false"]
    with ChatTestServer(faults=Faults(latency_s=0.01)) as srv:
        ov = [*common, "judge=testserver", f"judge.deployment.base_url={srv.openai_base_url}",
              "strategy=human_auto", f"results_dir={tmp_path / 'net'}"]
        settings, cells = compose_sweep(ov)
        workflow_sweep.drive_sweep(settings, cells, ov)
    assert stages == [("assign", True)] and calls == [True]
    stages.clear()
    ov = [*common, "judge=lexical", "strategy=auto_auto", f"results_dir={tmp_path / 'offline'}"]
    settings, cells = compose_sweep(ov)
    workflow_sweep.drive_sweep(settings, cells, ov)
    assert stages == [("create", False), ("importance", False), ("assign", True)]
    assert calls == [True]  # not called again: the offline judge's loop had nothing to wait on


def test_the_preparation_imports_the_study_calibration_and_report_modules():
    """In a fresh interpreter (this one has them all): after it, the modules the study and the report use are
    loaded (planted bug: a package left out of ``AFTER_JUDGING_PACKAGES``)."""
    code = ("import sys; from metaeval.workflow.sweep import import_study_and_report as f; f(); "
            "need = ['scipy.special', 'metaeval.study.run', 'metaeval.study.fanout', 'metaeval.analysis.levels', "
            "'metaeval.study.calibration_workflow.procedure', 'metaeval.calibration.methods.ordinal', "
            "'metaeval.report.build', 'metaeval.report.write', 'metaeval.planning.precision', 'metaeval.scoring']; "
            "missing = [m for m in need if m not in sys.modules]; print(missing); sys.exit(1 if missing else 0)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
