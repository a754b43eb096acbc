"""The sweep driver killed mid-run (serial runtime): SIGKILL, and SIGINT (a clean stop: exit status 130, message
"interrupted", every job finished so far kept in ``jobs.jsonl``).  Then a rerun completes: no job lost, none
duplicated, and no finished job is sent to the server again (checked per answer against the server's log)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from metaeval.testing.server import Faults
from tests.faults.faultkit import (SERIAL, RecordingServer, answer_keys, check_accounting, jobs, limits, run_sweep,
                                   sweep_cmd, wait_for_lines)

CONCURRENCY = 4


def interrupted_then_resumed(root, name: str, sig: int, extra: list[str]) -> dict:
    """Run a sweep, send ``sig`` once >= 20 of its 64 jobs are stored, then rerun it to completion."""
    srv = RecordingServer(faults=Faults(latency_s=0.1)).start()
    try:
        overrides = [*extra, *limits(concurrency=CONCURRENCY)]
        out = root / name
        proc = subprocess.Popen(sweep_cmd(root, name, srv.openai_base_url, *overrides), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            at_signal = wait_for_lines(out / "jobs.jsonl", 20, proc)
            t_sig = time.monotonic()
            if sig == signal.SIGKILL:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                os.kill(proc.pid, sig)  # the driver only, as `kill -INT PID`
            stdout, stderr = proc.communicate(timeout=60)
            stop_s = time.monotonic() - t_sig
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        raw = (out / "jobs.jsonl").read_bytes()
        before = {r["key"]: r for r in jobs(out) if r["status"] == "done"}
        n_first = len(srv.log)
        again = run_sweep(root, name, srv.openai_base_url, *overrides)
        return {"rc": proc.returncode, "stdout": stdout, "stderr": stderr, "stop_s": stop_s, "at_signal": at_signal,
                "raw": raw, "done_before": before, "first": srv.log[:n_first], "rerun": srv.log[n_first:],
                "again": again, "out": out}
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("signals")
    cases = {"sigkill": signal.SIGKILL, "sigint": signal.SIGINT}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futs = {name: pool.submit(interrupted_then_resumed, root / name, name, sig, SERIAL) for name, sig in cases.items()}
        return {name: f.result() for name, f in futs.items()}


def check_resumed(r: dict) -> dict:
    assert r["again"].returncode == 0, r["again"].stderr[-3000:]
    done_before = r["done_before"]
    assert 20 <= len(done_before) < 64, f"the signal should land midway ({len(done_before)} jobs done)"
    acc = check_accounting(r["out"])
    assert acc["failed_labels"] == 0
    texts = answer_keys()
    text_of = {k: t for t, keys in texts.items() for k in keys}
    done_texts = {text_of[(rec["spec"]["qid"], rec["spec"]["run_id"])] for rec in done_before.values()
                  if rec["spec"]["stage"] == "assign"}
    resent = {e["answer"] for e in r["rerun"]} & done_texts
    assert not resent, f"{len(resent)} finished job(s) were sent again"
    # every answer was asked for; the only requests sent twice are those in flight at the signal
    first = [e["answer"] for e in r["first"]]
    rerun = [e["answer"] for e in r["rerun"]]
    assert set(first) | set(rerun) == set(texts)
    twice = set(first) & set(rerun)
    assert len(twice) <= CONCURRENCY and len(set(first)) == len(first) and len(set(rerun)) == len(rerun)
    # the stored jobs of the first run are still there, unchanged, in the completed store
    final = {rec["key"]: rec for rec in jobs(r["out"])}
    assert all(final[k]["output"] == rec["output"] for k, rec in done_before.items())
    return acc


def test_sigkill_midway_then_resume(runs):
    r = runs["sigkill"]
    assert r["rc"] == -signal.SIGKILL
    check_resumed(r)


def test_sigint_stops_cleanly_keeps_finished_jobs_and_resumes(runs):
    r = runs["sigint"]
    assert r["rc"] == 130, (r["rc"], r["stderr"][-3000:])
    assert "interrupted" in r["stderr"] and "Traceback" not in r["stderr"], r["stderr"][-3000:]
    assert r["stop_s"] < 10, f"took {r['stop_s']:.1f} s to stop"
    assert r["raw"].endswith(b"\n"), "a clean stop leaves no half-written line"
    check_resumed(r)
