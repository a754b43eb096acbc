"""Ray-tier fault tests (``runtime=ray_local`` on loopback): a worker actor SIGKILLed mid-run (Ray restarts it,
the executor resubmits its unfinished jobs) and the driver interrupted with SIGINT (clean stop, then resume).
After each: no job lost, none duplicated, failures accounted for, no finished job sent again."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from metaeval.testing.server import Faults
from tests.faults.faultkit import (BASE, CONCURRENCY, RecordingServer, answer_keys, check_accounting, check_resumed,
                                   cmdline, descendants, interrupted_then_resumed, jobs, kill_tree, limits, still_alive,
                                   sweep_cmd, wait_for_lines)

pytestmark = [pytest.mark.ray, pytest.mark.timeout(300)]
RAY = ["runtime=ray_local", *BASE]


def actor_pids(driver: int) -> list[int]:
    """Worker actors of *this* sweep's Ray cluster: descendants of its driver titled ``ray::_WorkerActor``."""
    return [p for p in descendants(driver) if cmdline(p).startswith("ray::_WorkerActor")]


def test_ray_actor_killed_midway_jobs_resubmitted(tmp_path):
    # requests from the 25th on wait at the server until the actor has been killed: the kill always lands midway
    srv = RecordingServer(faults=Faults(latency_s=0.02), hold_from=24).start()
    tree: dict[int, str] = {}
    try:
        out = tmp_path / "actor"
        proc = subprocess.Popen(sweep_cmd(tmp_path, "actor", srv.openai_base_url, *RAY, *limits(concurrency=CONCURRENCY)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            at_kill = wait_for_lines(out / "jobs.jsonl", 16, proc, timeout=120)
            victims = actor_pids(proc.pid)
            assert len(victims) == 1, f"expected one worker actor, found {victims}"
            tree = {p: cmdline(p) for p in descendants(proc.pid)}
            os.kill(victims[0], signal.SIGKILL)
            srv.release()
            stdout, stderr = proc.communicate(timeout=180)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        kill_tree(list(still_alive(tree, grace_s=10)))
    finally:
        srv.stop()
    assert proc.returncode == 0, stderr[-3000:]
    assert 16 <= at_kill < 64
    assert "died during job" in stderr  # the executor noticed and resubmitted
    acc = check_accounting(out)
    assert acc["failed_labels"] == 0 and not acc["failed_jobs"]
    assert len({r["key"] for r in jobs(out)}) == len(jobs(out)) == 64  # one record per job: none duplicated
    # every answer was asked for; only jobs in the actor when it died were sent twice (at most its concurrency)
    texts = [e["answer"] for e in srv.log]
    assert set(texts) == set(answer_keys())
    twice = {t for t in texts if texts.count(t) > 1}
    assert len(twice) <= CONCURRENCY + 1  # +1: the two identical q02 answers may both be sent


def test_ray_driver_sigint_stops_cleanly_and_resumes(tmp_path):
    r = interrupted_then_resumed(tmp_path, "rayint", signal.SIGINT, RAY, wait_s=120)
    assert r["rc"] == 130, (r["rc"], r["stderr"][-3000:])
    assert "interrupted" in r["stderr"], r["stderr"][-3000:]
    assert r["stop_s"] < 20, f"took {r['stop_s']:.1f} s to stop"
    assert not r["survivors"], f"processes of the interrupted run still alive: {r['survivors']}"
    check_resumed(r)


def test_ray_driver_sigterm_stops_cleanly_without_a_stack_dump_and_resumes(tmp_path):
    """ray.init installs ``sys.exit`` as the SIGTERM handler (a C++ stack dump, exit 15); ours is put back."""
    r = interrupted_then_resumed(tmp_path, "rayterm", signal.SIGTERM, RAY, wait_s=120)
    assert r["rc"] == 143, (r["rc"], r["stderr"][-3000:])
    assert "terminated" in r["stderr"] and "Traceback" not in r["stderr"], r["stderr"][-3000:]
    assert "*** SIGTERM received" not in r["stderr"] and "Stack trace" not in r["stderr"], r["stderr"][-3000:]
    assert not r["survivors"], f"processes of the terminated run still alive: {r['survivors']}"
    check_resumed(r)
