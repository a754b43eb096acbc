"""The sweep driver killed mid-run (serial runtime): SIGKILL, SIGINT (a clean stop: exit status 130, message
"interrupted", every job finished so far kept in ``jobs.jsonl``) and SIGTERM (the same clean stop, exit 143).  Then a rerun completes: no job lost, none
duplicated, and no finished job is sent to the server again (checked per answer against the server's log)."""

from __future__ import annotations

import json
import signal
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.faults.faultkit import SERIAL, check_resumed, interrupted_then_resumed


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("signals")
    cases = {"sigkill": signal.SIGKILL, "sigint": signal.SIGINT, "sigterm": signal.SIGTERM,
             "sigterm-nohup": signal.SIGTERM}
    with ThreadPoolExecutor(max_workers=len(cases)) as pool:
        futs = {name: pool.submit(interrupted_then_resumed, root / name, name, sig, SERIAL,
                                  sigint_ignored=name.endswith("nohup")) for name, sig in cases.items()}
        return {name: f.result() for name, f in futs.items()}


def test_sigkill_midway_then_resume(runs):
    r = runs["sigkill"]
    assert r["rc"] == -signal.SIGKILL
    check_resumed(r)
    # the rerun took over the killed sweep's lock and keeps it on record: its in-flight requests were never stored,
    # so the folder's request totals are lower bounds from now on
    lock = json.loads((r["out"] / ".lock").read_text(encoding="utf-8"))
    assert "pid" not in lock and len(lock["interrupted_runs"]) == 1
    summary = json.loads((r["out"] / "summary.json").read_text(encoding="utf-8"))
    assert all(c["stats"]["interrupted_runs"] == 1 for c in summary["cells"] if "stats" in c)
    assert "are lower bounds: 1 earlier run(s)" in r["again"].stdout


def test_clean_stops_release_the_lock_and_put_the_run_on_record(runs):
    """Ctrl-C / SIGTERM: the lock is released (the rerun finds no stale lock), and the stopped run is on record
    (requests it had in flight were cancelled unstored: request totals are lower bounds)."""
    for name in ("sigint", "sigterm", "sigterm-nohup"):
        lock = json.loads((runs[name]["out"] / ".lock").read_text(encoding="utf-8"))
        assert "pid" not in lock and len(lock["interrupted_runs"]) == 1, (name, lock)
        assert "stale lock" not in runs[name]["again"].stderr
    assert "stale lock" in runs["sigkill"]["again"].stderr


def test_sigint_stops_cleanly_keeps_finished_jobs_and_resumes(runs):
    r = runs["sigint"]
    assert r["rc"] == 130, (r["rc"], r["stderr"][-3000:])
    assert "interrupted" in r["stderr"] and "Traceback" not in r["stderr"], r["stderr"][-3000:]
    # no wall-clock bound: the server holds every request from the 25th until the driver has exited, so a driver
    # that waited for its in-flight requests would never exit (faultkit's communicate() fails after 60 s)
    assert r["raw"].endswith(b"\n"), "a clean stop leaves no half-written line"
    check_resumed(r)


@pytest.mark.parametrize("case", ["sigterm", "sigterm-nohup"])
def test_sigterm_stops_cleanly_keeps_finished_jobs_and_resumes(runs, case):
    """``sigterm-nohup``: the sweep was started with SIGINT ignored (``nohup metaeval sweep ... &``); SIGINT stays
    ignored, yet SIGTERM still stops it cleanly."""
    r = runs[case]
    assert r["rc"] == 143, (r["rc"], r["stderr"][-3000:])
    assert "terminated" in r["stderr"] and "Traceback" not in r["stderr"], r["stderr"][-3000:]
    # no wall-clock bound: the server holds every request from the 25th until the driver has exited, so a driver
    # that waited for its in-flight requests would never exit (faultkit's communicate() fails after 60 s)
    assert r["raw"].endswith(b"\n"), "a clean stop leaves no half-written line"
    check_resumed(r)
